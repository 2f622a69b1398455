package cmd

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/version"
)

// localLauncher is the launcher of `bastion dev` and of `bastion manager
// --local-runs`: each run as its own unprivileged user when this process
// can do that (root), else as this process's user. The notice says which,
// plainly, for the start-up output, and which binary the runs start.
func localLauncher(c client.Client, dir string) (l *launch.LocalLauncher, notice string, err error) {
	l = &launch.LocalLauncher{Client: c, BaseDir: dir}
	users, why := launch.Isolation()
	l.Users = users
	if err := l.PrepareBase(); err != nil {
		return nil, "", fmt.Errorf("local runs directory: %w", err)
	}
	notice = l.Describe()
	if why != "" {
		notice += " (" + why + ")"
	}
	if self, err := os.Executable(); err == nil {
		var runs string
		l.Command, runs = runnerCommand(self)
		notice += "; " + runs
	}
	return l, notice, nil
}

// runnerBinary is the runner alone, built beside bastion (make build).
const runnerBinary = "bastion-runner"

// runnerCommand is what a local run starts: bastion-runner from self's
// directory, which starts in a seventh of the CPU of bastion (its
// package initialisation is the runner's alone; docs/architecture.md,
// "Two binaries"), else `self runner`, the same code. The runner gets
// the run's secrets, so it is used only when it is a regular file as
// well kept as self (the same owner or root, neither it nor its directory
// writable by group or others) and of self's version: a binary left from another build would
// speak another version of the runner protocol. It returns the command
// and a sentence for the start-up output.
func runnerCommand(self string) ([]string, string) {
	fallback := []string{self, "runner"}
	path := filepath.Join(filepath.Dir(self), runnerBinary)
	if why := untrusted(path, self); why != "" {
		return fallback, fmt.Sprintf("runs start `%s runner` (%s)", filepath.Base(self), why)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "version").Output()
	if got := strings.TrimSpace(string(out)); err != nil || got != version.Version {
		return fallback, fmt.Sprintf("runs start `%s runner` (%s is not of version %s)", filepath.Base(self), path, version.Version)
	}
	return []string{path}, "runs start " + path
}

// untrusted says why the runner binary at path may not be used, or "".
func untrusted(path, self string) string {
	info, err := os.Lstat(path)
	if err != nil {
		return "no " + runnerBinary + " beside it"
	}
	if !info.Mode().IsRegular() {
		return path + " is not a regular file"
	}
	if info.Mode().Perm()&0o022 != 0 {
		return path + " is writable by others than its owner"
	}
	// Checked once, at start-up, and started by path for each run: a
	// directory others may write to could have it swapped afterwards.
	if dir, err := os.Stat(filepath.Dir(path)); err != nil || dir.Mode().Perm()&0o022 != 0 {
		return filepath.Dir(path) + " is writable by others than its owner"
	}
	own, err := os.Stat(self)
	if err != nil {
		return err.Error()
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	selfSt, selfOK := own.Sys().(*syscall.Stat_t)
	if !ok || !selfOK || st.Uid != 0 && st.Uid != selfSt.Uid {
		return path + " belongs to another user than " + self
	}
	return ""
}
