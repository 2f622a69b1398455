package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bastion-dev/bastion/internal/version"
)

// writeRunner puts a stand-in for bastion-runner beside self that answers
// `version` with answer.
func writeRunner(t *testing.T, dir, answer string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, runnerBinary)
	_ = os.Remove(path)
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho '"+answer+"'\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

func TestRunnerCommand_startsBastionRunnerBesideItOnlyWhenItIsAsTrustedAndFromTheSameBuild(t *testing.T) {
	build := version.Build
	version.Build = "test-stamp"
	t.Cleanup(func() { version.Build = build })
	dir := t.TempDir()
	self := filepath.Join(dir, "bastion")
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fallback := self + " runner"
	path := filepath.Join(dir, runnerBinary)
	falls := func(why, want string) {
		t.Helper()
		cmd, notice := runnerCommand(self)
		if strings.Join(cmd, " ") != fallback || !strings.Contains(notice, want) {
			t.Errorf("%s: started %q (%s), want %q and a notice saying %q", why, cmd, notice, fallback, want)
		}
	}

	falls("without bastion-runner", "no "+path)

	writeRunner(t, dir, version.RunnerProbe(), 0o755)
	if cmd, notice := runnerCommand(self); strings.Join(cmd, " ") != path || notice != "runs start "+path {
		t.Fatalf("bastion-runner of the same build: %q, %q", cmd, notice)
	}

	writeRunner(t, dir, version.Version, 0o755) // what a copy of bastion says
	falls("a copy of bastion", "another build")
	writeRunner(t, dir, "bastion-runner "+version.Version+" other-stamp", 0o755)
	falls("a runner from other sources", "another build")
	writeRunner(t, dir, version.RunnerProbe(), 0o644)
	falls("a runner that cannot be run", path+" version: ")

	for _, mode := range []os.FileMode{0o775, 0o757} {
		writeRunner(t, dir, version.RunnerProbe(), mode)
		falls("a runner others may write", "writable by others")
	}
	writeRunner(t, dir, version.RunnerProbe(), 0o755)
	for _, mode := range []os.FileMode{0o775, 0o777} {
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		falls("a directory others may write", dir+" is writable by others")
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	if os.Geteuid() == 0 { // only root can give a file away
		if err := os.Chown(path, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		falls("a runner of another user", path+" belongs to another user")
		if err := os.Chown(path, 0, 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		falls("a directory of another user", dir+" belongs to another user")
		if err := os.Chown(dir, 0, 0); err != nil {
			t.Fatal(err)
		}
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/bin/true", path); err != nil {
		t.Fatal(err)
	}
	falls("a symbolic link", "not a regular file")

	writeRunner(t, dir, version.RunnerProbe(), 0o755)
	version.Build = ""
	falls("a bastion built without make", "built without make build")
}
