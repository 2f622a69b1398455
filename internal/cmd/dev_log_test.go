package cmd

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// The dev logger puts every line in the file, and only errors (logr has no
// warnings; zap's WARN would pass too) on the terminal, without stack
// traces.
func TestDevLogger_infoGoesToTheFileOnlyAndErrorsToBoth(t *testing.T) {
	var file, terminal bytes.Buffer
	log := devLogger(&file, &terminal)
	log.Info("reconciled", "project", "demo")
	log.V(1).Info("a detail")
	log.Error(errors.New("boom"), "reconcile failed", "project", "demo")

	for _, want := range []string{"INFO\treconciled", "ERROR\treconcile failed", `"error": "boom"`} {
		if !strings.Contains(file.String(), want) {
			t.Errorf("the file lacks %q:\n%s", want, file.String())
		}
	}
	if strings.Contains(file.String(), "a detail") {
		t.Errorf("the file holds a V(1) line:\n%s", file.String())
	}
	if !strings.Contains(terminal.String(), "ERROR\treconcile failed") || strings.Contains(terminal.String(), "reconciled") {
		t.Errorf("the terminal = %q, want the error and nothing else", terminal.String())
	}
	if strings.Contains(file.String()+terminal.String(), ".go:") {
		t.Errorf("a stack trace or caller was logged:\n%s", file.String())
	}
}
