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
// directory, which starts in a fifth of the CPU of bastion (its package
// initialisation is the runner's alone; docs/architecture.md, "Two
// binaries"), else `self runner`, the same code. The runner is handed the
// run's secrets and does the run's isolation, so it is used only when it
// is a regular file kept as self is (owned by self's owner or root, and
// neither it nor its directory writable by anyone else) and was built from
// the same sources (version.RunnerProbe): one left from another build
// would run older code. self is the executable with its links resolved
// (os.Executable on Linux), so a link to bastion finds the runner beside
// its target. It returns the command and a sentence for the start-up
// output.
func runnerCommand(self string) ([]string, string) {
	fallback := []string{self, "runner"}
	path := filepath.Join(filepath.Dir(self), runnerBinary)
	if why := untrusted(path, self); why != "" {
		return fallback, fmt.Sprintf("runs start `%s runner` (%s)", filepath.Base(self), why)
	}
	if version.Build == "" {
		return fallback, fmt.Sprintf("runs start `%s runner` (this binary was built without make build, so it cannot tell whether %s was built from its sources)", filepath.Base(self), path)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	probe := exec.CommandContext(ctx, path, "version")
	probe.Env = []string{"PATH=" + os.Getenv("PATH")} // the manager's own variables are not its business
	probe.WaitDelay = time.Second
	out, err := probe.Output()
	if err != nil {
		return fallback, fmt.Sprintf("runs start `%s runner` (%s version: %v)", filepath.Base(self), path, err)
	}
	if got := strings.TrimSpace(string(out)); got != version.RunnerProbe() {
		return fallback, fmt.Sprintf("runs start `%s runner` (%s says %q, not %q: another build)", filepath.Base(self), path, got, version.RunnerProbe())
	}
	return []string{path}, "runs start " + path
}

// untrusted says why the runner binary at path may not be used, or "".
func untrusted(path, self string) string {
	own, err := os.Stat(self)
	if err != nil {
		return err.Error()
	}
	owner := func(info os.FileInfo) uint32 { return info.Sys().(*syscall.Stat_t).Uid }
	info, err := os.Lstat(path)
	switch {
	case err != nil:
		return "no " + path
	case !info.Mode().IsRegular():
		return path + " is not a regular file"
	case info.Mode().Perm()&0o022 != 0:
		return path + " is writable by others than its owner"
	case owner(info) != 0 && owner(info) != owner(own):
		return path + " belongs to another user than " + self
	}
	// Checked once, at start-up, and started by path for each run: a
	// directory someone else may write to could have it swapped afterwards.
	dir := filepath.Dir(path)
	d, err := os.Stat(dir)
	switch {
	case err != nil:
		return err.Error()
	case d.Mode().Perm()&0o022 != 0:
		return dir + " is writable by others than its owner"
	case owner(d) != 0 && owner(d) != owner(own):
		return dir + " belongs to another user than " + self
	}
	return ""
}
