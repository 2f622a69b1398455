package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bastion-dev/bastion/internal/version"
)

// writeRunner puts a stand-in for bastion-runner beside self that answers
// `version` with v.
func writeRunner(t *testing.T, dir, v string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, runnerBinary)
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho '"+v+"'\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

func TestRunnerCommand_startsBastionRunnerBesideItOnlyWhenItIsAsTrustedAndOfTheSameVersion(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "bastion")
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fallback := self + " runner"

	cmd, notice := runnerCommand(self)
	if strings.Join(cmd, " ") != fallback || !strings.Contains(notice, "no bastion-runner beside it") {
		t.Fatalf("without bastion-runner: %q, %q", cmd, notice)
	}

	path := writeRunner(t, dir, version.Version, 0o755)
	if cmd, notice = runnerCommand(self); strings.Join(cmd, " ") != path || notice != "runs start "+path {
		t.Fatalf("with bastion-runner of the same version: %q, %q", cmd, notice)
	}

	writeRunner(t, dir, version.Version+"-other", 0o755)
	if cmd, notice = runnerCommand(self); strings.Join(cmd, " ") != fallback || !strings.Contains(notice, "is not of version") {
		t.Fatalf("another version: %q, %q", cmd, notice)
	}

	writeRunner(t, dir, version.Version, 0o757)
	if cmd, notice = runnerCommand(self); strings.Join(cmd, " ") != fallback || !strings.Contains(notice, "writable by others") {
		t.Fatalf("writable by others: %q, %q", cmd, notice)
	}

	writeRunner(t, dir, version.Version, 0o755)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if cmd, notice = runnerCommand(self); strings.Join(cmd, " ") != fallback || !strings.Contains(notice, dir+" is writable by others") {
		t.Fatalf("in a directory others may write to: %q, %q", cmd, notice)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	if os.Geteuid() == 0 { // only root can give a file away
		writeRunner(t, dir, version.Version, 0o755)
		if err := os.Chown(path, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		if cmd, notice = runnerCommand(self); strings.Join(cmd, " ") != fallback || !strings.Contains(notice, "belongs to another user") {
			t.Fatalf("another owner: %q, %q", cmd, notice)
		}
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/bin/true", path); err != nil {
		t.Fatal(err)
	}
	if cmd, notice = runnerCommand(self); strings.Join(cmd, " ") != fallback || !strings.Contains(notice, "not a regular file") {
		t.Fatalf("a symbolic link: %q, %q", cmd, notice)
	}
}
