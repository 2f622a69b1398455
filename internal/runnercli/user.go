package runnercli

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/bastion-dev/bastion/internal/gitremote"
	"github.com/bastion-dev/bastion/internal/runner"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// becomeRunUser is how an isolated local run starts (see the local launcher's Isolation):
// the runner is started as root, alone in a mount namespace, and before it
// reads anything of the task it
//   - mounts the run's passwd and group files (written by the launcher in
//     accounts) over /etc/passwd and /etc/group, since ssh, git and ansible
//     ask for the name of the user they run as;
//   - mounts, read-only, each directory of PATH that the run's user could
//     not reach (terraform in ~/.cache under a /root of mode 0700) onto a
//     directory of accounts, and puts that one at the end of PATH (see
//     reachablePath);
//   - mounts a fresh, empty tmpfs over /var/tmp and /dev/shm (and a fresh
//     mqueue over /dev/mqueue), so that nothing a run leaves there meets
//     another run, and mounts its own directory again nosuid and nodev
//     (see privateTemporaryDirs);
//   - drops every group and becomes uid (and the group of the same number).
//
// The launcher starts it with no_new_privs set and in an IPC namespace of
// its own.
//
// None of these mounts is seen outside the namespace. Only the launcher
// passes --run-as, and only as root.
func becomeRunUser(uid uint32, accounts string, repository string) error {
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
	if err := privateTemporaryDirs(accounts, repository); err != nil {
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
// reach, or that the run's private temporary dirs hide, replaced by a read-only
// mount of it under mounts, moved to the end.
// Last, because such a directory is the manager's own toolchain, and its
// wrappers (pyenv's shims, say) call back into the manager's home, which
// the run cannot read: a reachable program of the same name, a system
// one, must win. A program found nowhere else (terraform from make
// terraform) is still found.
func reachablePath(path, mounts string) (string, error) {
	var reachable, mounted []string
	for i, dir := range strings.Split(path, ":") {
		if dir == "" || !filepath.IsAbs(dir) || runspec.ReachableByOthers(dir) && !underTemporaryDir(dir) {
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

// temporaryDirs get a fresh tmpfs in every isolated run: what one run
// leaves there, another never finds. TMPDIR is the run's own directory, so
// little lands here; the size caps what a run can take of the memory.
//
// /tmp stays the host's: the runs' own directories live there when the
// data dir is private, and so do the local repositories and the files
// that a developer (or a test) shares with a script on purpose. A file a
// run leaves in /tmp is its uid's, which round-robin ids hand out again
// only after the whole range; a set-uid one runs as nobody else
// (no_new_privs); TMPDIR points every well-behaved program at the run's
// own directory (docs/security.md, "What is not covered").
var temporaryDirs = []struct{ path, size string }{
	{"/var/tmp", "1g"}, {"/dev/shm", "256m"},
}

func underTemporaryDir(dir string) bool {
	for _, t := range temporaryDirs {
		if dir == t.path || strings.HasPrefix(dir, t.path+"/") {
			return true
		}
	}
	return false
}

// privateTemporaryDirs mounts the run's temporary directories, then mounts
// the run's own directory runDir back where it was (it may well lie under
// /tmp, which the launcher picks for it when the data dir is private),
// from a handle taken before, with the mounts below it (reachablePath's).
// The run's directory is mounted nosuid and nodev, as the temporary ones
// are: no set-uid file a run writes anywhere it can write runs as anyone
// else (no_new_privs says so too; this holds should it ever be missing).
//
// repository is the task's repository when it is a path of this host
// (--allow-local-repositories): if it lies under a temporary directory
// and any user may reach it, it is mounted back too, read-only, so that
// the run reaches it as it did. One no other user may reach stays hidden,
// as does a repository that is a file (a bundle).
func privateTemporaryDirs(runDir, repository string) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	back := []mountBack{{path: runDir}}
	if repository != "" && underTemporaryDir(repository) && runspec.ReachableByOthers(repository) && isDir(repository) {
		back = append(back, mountBack{path: repository, readOnly: true})
	}
	for i := range back {
		if back[i].handle, err = unix.Open(back[i].path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
			return fmt.Errorf("opening %s: %w", back[i].path, err)
		}
		defer unix.Close(back[i].handle)
	}
	for _, t := range temporaryDirs {
		if !isDir(t.path) {
			continue // nothing there for a program to use
		}
		if err := unix.Mount("tmpfs", t.path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size="+t.size); err != nil {
			return fmt.Errorf("mounting a private %s for the run: %w", t.path, err)
		}
	}
	if isDir("/dev/mqueue") {
		// The IPC namespace makes message queues private; this makes the
		// file system that lists them show the run's own.
		if err := unix.Mount("mqueue", "/dev/mqueue", "mqueue", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("mounting a private /dev/mqueue for the run: %w", err)
		}
	}
	for _, b := range back {
		if err := b.mount(); err != nil {
			return err
		}
	}
	// The working directory still points into the old mount: enter the
	// new one, where the run's children start.
	return os.Chdir(cwd)
}

// mountBack is a directory mounted again where it was, from a handle
// opened before something was mounted over it.
type mountBack struct {
	path     string
	readOnly bool
	handle   int
}

func (b mountBack) mount() error {
	// Where the directory is hidden now, the path is made again in the
	// fresh tmpfs, owned by root: the run can pass but not write.
	if err := os.MkdirAll(b.path, 0o711); err != nil {
		return err
	}
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(b.handle), b.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("mounting %s back for the run: %w", b.path, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(b.path, &st); err != nil {
		return err
	}
	// A remount sets every flag of the mount: those it had are kept.
	flags := uintptr(st.Flags)&(unix.MS_RDONLY|unix.MS_NOEXEC|unix.MS_NOATIME|unix.MS_NODIRATIME|unix.MS_RELATIME) |
		unix.MS_BIND | unix.MS_REMOUNT | unix.MS_NOSUID | unix.MS_NODEV
	if b.readOnly {
		flags |= unix.MS_RDONLY
	}
	if err := unix.Mount("", b.path, "", flags, ""); err != nil {
		return fmt.Errorf("mounting %s nosuid for the run: %w", b.path, err)
	}
	return nil
}

// localRepository is the path of the task's repository when git reads it
// from this host's file system, else "". Read as root before the run
// starts: the manager wrote the task, and no process of the run's user
// has run yet.
func localRepository(input string) string {
	in, err := runner.LoadInputs(input, "")
	if err != nil || !gitremote.IsLocal(in.Spec.Repository.URL) {
		return ""
	}
	path := in.Spec.Repository.URL
	if strings.HasPrefix(strings.ToLower(path), "file:") {
		u, err := url.Parse(path)
		if err != nil {
			return ""
		}
		path = u.Path
	}
	if !filepath.IsAbs(path) {
		return ""
	}
	return filepath.Clean(path)
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}
