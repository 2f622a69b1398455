package cli

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"testing"
)

func TestCode_isWhatAProcessExitsWith(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0}, {flag.ErrHelp, 0}, {UsageError("x"), 2},
		{&ExitError{Code: 7, Err: os.ErrClosed}, 7}, {fmt.Errorf("wrapped: %w", &ExitError{Code: 3, Err: os.ErrClosed}), 3},
		{os.ErrNotExist, 1},
	} {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("Code(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestExit_namesTheCommandOnlyWhenItFailed(t *testing.T) {
	var stderr bytes.Buffer
	if code := Exit("runner", nil, &stderr); code != 0 || stderr.Len() != 0 {
		t.Fatalf("success: exit %d, stderr %q", code, stderr.String())
	}
	if code := Exit("runner", UsageError("--work is required"), &stderr); code != 2 || stderr.String() != "bastion runner: --work is required\n" {
		t.Fatalf("misuse: exit %d, stderr %q", code, stderr.String())
	}
}
