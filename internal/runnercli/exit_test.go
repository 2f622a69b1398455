package runnercli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The runner writes its exit code, the same as the process's, to
// --exit-file when it ends: the local launcher reads it for a run whose
// manager restarted (the runner is then no child of the one that asks).
func TestRunner_writesItsExitCodeToTheExitFile(t *testing.T) {
	dir := t.TempDir()
	exit := filepath.Join(dir, "exit")
	var stdout, stderr bytes.Buffer
	code := Main([]string{"--input", filepath.Join(dir, "missing"), "--work", dir, "--exit-file", exit}, &stdout, &stderr)
	data, err := os.ReadFile(exit)
	if err != nil {
		t.Fatalf("no exit file: %v (stderr %q)", err, stderr.String())
	}
	if code != 1 || strings.TrimSpace(string(data)) != "1" {
		t.Fatalf("exit %d, exit file %q; want 1 and \"1\"", code, data)
	}
	if _, err := os.Stat(exit + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("the temporary file is left: %v", err)
	}

	// Misuse (no --work) is refused before anything runs: no file.
	_ = os.Remove(exit)
	if code := Main([]string{"--input", dir, "--exit-file", exit}, &stdout, &stderr); code != 2 {
		t.Fatalf("misuse exit %d, want 2", code)
	}
	if _, err := os.Stat(exit); !os.IsNotExist(err) {
		t.Fatalf("misuse wrote an exit file: %v", err)
	}
}
