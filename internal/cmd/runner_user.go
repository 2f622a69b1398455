package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/bastion-dev/bastion/controllers/launch"
)

// becomeRunUser is how an isolated local run starts (see launch.Isolation):
// the runner is started as root, alone in a mount namespace, and before it
// reads anything of the task it
//   - mounts the run's passwd and group files (written by the launcher in
//     accounts) over /etc/passwd and /etc/group, since ssh, git and ansible
//     ask for the name of the user they run as;
//   - mounts, read-only, each directory of PATH that the run's user could
//     not reach (terraform in ~/.cache under a /root of mode 0700) onto a
//     directory of accounts, and puts that one at the end of PATH (see
//     reachablePath);
//   - drops every group and becomes uid (and the group of the same number).
//
// None of these mounts is seen outside the namespace. Only the launcher
// passes --run-as, and only as root.
func becomeRunUser(uid uint32, accounts string) error {
	if os.Geteuid() != 0 {
		return errors.New("--run-as needs the runner to start as root")
	}
	for _, f := range [][2]string{{"passwd", "/etc/passwd"}, {"group", "/etc/group"}} {
		if err := syscall.Mount(filepath.Join(accounts, f[0]), f[1], "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("mounting the run's %s: %w", f[1], err)
		}
	}
	path, err := reachablePath(os.Getenv("PATH"), filepath.Join(accounts, "path"))
	if err != nil {
		return err
	}
	if err := os.Setenv("PATH", path); err != nil {
		return err
	}
	// Groups first: once the uid changed, the process may not.
	if err := syscall.Setgroups([]int{}); err != nil {
		return fmt.Errorf("dropping groups: %w", err)
	}
	if err := syscall.Setgid(int(uid)); err != nil {
		return fmt.Errorf("changing group: %w", err)
	}
	if err := syscall.Setuid(int(uid)); err != nil {
		return fmt.Errorf("changing user: %w", err)
	}
	if os.Getuid() != int(uid) || os.Geteuid() != int(uid) || syscall.Setuid(0) == nil {
		return errors.New("the runner could not give up root")
	}
	return nil
}

// reachablePath returns PATH with every directory that other users cannot
// reach replaced by a read-only mount of it under mounts, moved to the end.
// Last, because such a directory is the manager's own toolchain, and its
// wrappers (pyenv's shims, say) call back into the manager's home, which
// the run cannot read: a reachable program of the same name, a system
// one, must win. A program found nowhere else (terraform from make
// terraform) is still found.
func reachablePath(path, mounts string) (string, error) {
	var reachable, mounted []string
	for i, dir := range strings.Split(path, ":") {
		if dir == "" || !filepath.IsAbs(dir) || launch.ReachableByOthers(dir) {
			reachable = append(reachable, dir)
			continue
		}
		if _, err := os.Stat(dir); err != nil {
			continue // nothing there to find
		}
		target := filepath.Join(mounts, strconv.Itoa(i))
		if err := os.MkdirAll(target, 0o755); err != nil {
			return "", err
		}
		if err := syscall.Mount(dir, target, "", syscall.MS_BIND, ""); err != nil {
			return "", fmt.Errorf("mounting %s for the run: %w", dir, err)
		}
		if err := syscall.Mount("", target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			return "", fmt.Errorf("mounting %s read-only for the run: %w", dir, err)
		}
		mounted = append(mounted, target)
	}
	return strings.Join(append(reachable, mounted...), ":"), nil
}
