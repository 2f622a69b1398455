package runnercli

import (
	"bytes"
	"path/filepath"
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

// A Job's arguments start with the command's name, `runner`, which
// bastion needs and bastion-runner takes as its own: the runner images'
// entrypoint is bastion-runner, a project's own image may have bastion.
// (Unstripped, "runner" would end the flags, and the runner would refuse
// to start for want of --input and --work.)
func TestRunner_takesTheJobsArgumentsAsBastionDoes(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"runner", "--input", filepath.Join(dir, "missing"), "--work", dir},
		{"--input", filepath.Join(dir, "missing"), "--work", dir},
	} {
		var out, errs bytes.Buffer
		code := Main(args, &out, &errs)
		if code != 1 || !strings.Contains(errs.String(), "missing") || strings.Contains(errs.String(), "required") {
			t.Errorf("bastion-runner %q = %d, %q; want it to run and fail on the missing input", args, code, errs.String())
		}
	}
}
