package cmd

import (
	"bytes"
	"strings"
	"testing"
)

func TestMain_dispatchesAndReportsMisuse(t *testing.T) {
	cases := []struct {
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{[]string{"version"}, 0, "0.1.0", ""},
		{nil, 2, "", "Usage: bastion <command>"},
		{[]string{"help"}, 0, "", "manager"},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"dev", "--no-such-flag"}, 2, "", "flag provided but not defined"},
		{[]string{"dev", "stray"}, 2, "", `unexpected argument "stray"`},
		{[]string{"user"}, 2, "", "list|add|change-by-login"},
		{[]string{"user", "delete-everything"}, 2, "", `unknown user command "delete-everything"`},
		{[]string{"user", "change-by-login"}, 2, "", "--login is required"},
		{[]string{"runner", "--input", "/nonexistent", "--work", "/tmp/x"}, 1, "", "reading the task"},
		{[]string{"runner"}, 2, "", "--input and --work are required"},
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		code := Main(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.inStdout) || !strings.Contains(stderr.String(), tc.inStderr) {
			t.Errorf("bastion %v = %d, stdout %q, stderr %q; want %d, %q, %q",
				tc.args, code, stdout.String(), stderr.String(), tc.code, tc.inStdout, tc.inStderr)
		}
	}
}
