package runnercli

import (
	"bytes"
	"strings"
	"testing"
)

// Each door names itself: the bastion-runner binary as bastion-runner, the
// subcommand of bastion as `bastion runner`.
func TestRunner_usageAndErrorsNameTheCommandAsTyped(t *testing.T) {
	var out, errs bytes.Buffer
	if code := Main([]string{"-h"}, &out, &errs); code != 0 || !strings.HasPrefix(errs.String(), "Usage of bastion-runner:") {
		t.Errorf("bastion-runner -h = %d, %q", code, errs.String())
	}
	errs.Reset()
	if code := Main([]string{"--input", "x"}, &out, &errs); code != 2 || !strings.HasPrefix(errs.String(), "bastion-runner: ") {
		t.Errorf("bastion-runner without --work = %d, %q", code, errs.String())
	}
	errs.Reset()
	if err := Run([]string{"-h"}, &out, &errs); err == nil || !strings.HasPrefix(errs.String(), "Usage of bastion runner:") {
		t.Errorf("bastion runner -h = %v, %q", err, errs.String())
	}
}
