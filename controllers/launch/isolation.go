package launch

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// RunUsers is the range of user ids local runs take, one per live run.
//
// Why a uid of its own for every run, rather than one shared "nobody": two
// runs of one uid can read each other's files, environment and memory
// (/proc/<pid>/environ, ptrace), so a playbook of one project could take
// the keys of another project's run. Ids that no account owns are taken
// from a range that systemd documents as unused (1879048192–2147352575):
// clear of system users, regular users, DynamicUser= and nspawn's
// container ranges, and of the 100000+ ranges of /etc/subuid that rootless
// containers map.
type RunUsers struct {
	First uint32
	Count uint32
}

// DefaultRunUsers: room for far more concurrent runs than one host holds.
var DefaultRunUsers = RunUsers{First: 1_900_000_000, Count: 100_000}

// runUserName is the account name runs see for themselves (ssh, for one,
// refuses to start for a uid that has no passwd entry).
const runUserName = "bastion-run"

// Files of an isolated run's directory, owned by the manager.
const (
	uidFile    = "uid"    // the run's user id
	passwdFile = "passwd" // /etc/passwd as the run sees it
	groupFile  = "group"  // /etc/group as the run sees it
)

// Isolation says whether local runs can each run as their own unprivileged
// user: the manager must be root (to change user) and able to give a
// process its own mount namespace (in which the run's passwd entry and the
// tools on PATH are mounted). Reason says why not, when they cannot.
func Isolation() (users *RunUsers, reason string) {
	if os.Geteuid() != 0 {
		return nil, "the manager does not run as root, so it cannot start runs as another user"
	}
	probe := exec.Command("/bin/sh", "-c", "exit 0")
	probe.SysProcAttr = &syscall.SysProcAttr{
		Unshareflags: syscall.CLONE_NEWNS,
		Credential:   &syscall.Credential{Uid: DefaultRunUsers.First, Gid: DefaultRunUsers.First, Groups: []uint32{}},
	}
	if err := probe.Run(); err != nil {
		return nil, fmt.Sprintf("the manager runs as root but cannot start a process in its own mount namespace as another user (%v)", err)
	}
	all := DefaultRunUsers
	return &all, ""
}

// Describe says in one sentence how local runs are separated from the
// manager: printed when `bastion dev` or `bastion manager --local-runs`
// starts.
func (l *LocalLauncher) Describe() string {
	if l.Users != nil {
		return fmt.Sprintf("local runs: each run starts as its own unprivileged user (uid %d and up, no groups) in its own directory under %s; it cannot read the data dir or other runs",
			l.Users.First, l.baseDir())
	}
	return "WARNING: local runs share the manager's user: a task's playbook or script can read everything this user can, " +
		"including the data dir (database, kubeconfig) and other runs' secrets. Run as root to give each run its own unprivileged user."
}

// PrepareBase makes the base directory ready for runs: for isolated runs
// it must be reachable by users other than the manager, so a base inside
// an unreachable directory (a data dir under /root, mode 0700) moves to a
// directory of its own under the system's temporary directory, named
// after the base (the same across restarts, so runs are adopted). The
// base is owned by the manager and mode 0711: a run can reach its own
// directory by name but cannot list the others.
func (l *LocalLauncher) PrepareBase() error {
	dir := l.baseDir()
	if l.Users == nil {
		return os.MkdirAll(dir, 0o700)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if !ReachableByOthers(filepath.Dir(dir)) {
		sum := sha256.Sum256([]byte(dir))
		dir = filepath.Join(os.TempDir(), "bastion-runs-"+hex.EncodeToString(sum[:6]))
		if err := os.Mkdir(dir, 0o711); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	// In a world-writable /tmp another user could have made the directory
	// first, or left a symbolic link in its place.
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if st, ok := info.Sys().(*syscall.Stat_t); !info.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("local runs directory %s is not a directory of the manager's user; remove it", dir)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		return err
	}
	l.BaseDir = dir
	return nil
}

// ReachableByOthers reports whether a user that is neither the owner nor
// in the group of dir or of any directory above it can traverse to it
// (ACLs apart).
func ReachableByOthers(dir string) bool {
	for {
		info, err := os.Stat(dir)
		if err != nil || info.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}

// allocateUser picks the lowest id of the range that no run directory
// holds and no process runs as. l.mu must be held, so that two starts
// cannot pick the same one.
func (l *LocalLauncher) allocateUser() (uint32, error) {
	taken := map[uint32]bool{}
	entries, _ := os.ReadDir(l.baseDir())
	for _, e := range entries {
		if uid, ok := readUID(filepath.Join(l.baseDir(), e.Name())); ok {
			taken[uid] = true
		}
	}
	for uid := range processUsers() {
		taken[uid] = true
	}
	for i := uint32(0); i < l.Users.Count; i++ {
		if uid := l.Users.First + i; !taken[uid] {
			return uid, nil
		}
	}
	return 0, fmt.Errorf("all %d user ids for local runs are taken", l.Users.Count)
}

// readUID is the user id an isolated run directory was given.
func readUID(dir string) (uint32, bool) {
	data, err := readRunFile(filepath.Join(dir, uidFile))
	if err != nil {
		return 0, false
	}
	uid, err := strconv.ParseUint(strings.TrimSpace(data), 10, 32)
	return uint32(uid), err == nil
}

// processUsers is the set of real user ids of the host's processes.
func processUsers() map[uint32]bool {
	users := map[uint32]bool{}
	forEachProcess(func(pid int, uid uint32) { users[uid] = true })
	return users
}

// killUser kills every process that runs as uid: the whole of an isolated
// run, including what left its process group (setsid, a daemon a playbook
// started), since nothing else runs as that id.
func killUser(uid uint32) {
	forEachProcess(func(pid int, u uint32) {
		if u == uid {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

func forEachProcess(fn func(pid int, uid uint32)) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if uid, ok := processUID(pid); ok {
			fn(pid, uid)
		}
	}
}

// processUID reads the real uid from /proc/<pid>/status.
func processUID(pid int) (uint32, bool) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) > 1 && fields[0] == "Uid:" {
			uid, err := strconv.ParseUint(fields[1], 10, 32)
			return uint32(uid), err == nil
		}
	}
	return 0, false
}

// writeAccounts writes the passwd and group files the run sees, the
// host's with the run's own entry added (the runner mounts them over
// /etc/passwd and /etc/group in its mount namespace).
func writeAccounts(dir string, uid uint32, home string) error {
	id := strconv.FormatUint(uint64(uid), 10)
	for _, f := range []struct{ host, name, entry string }{
		{"/etc/passwd", passwdFile, runUserName + ":x:" + id + ":" + id + ":Bastion task run:" + home + ":/bin/sh"},
		{"/etc/group", groupFile, runUserName + ":x:" + id + ":"},
	} {
		host, err := os.ReadFile(f.host)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		text := strings.TrimRight(string(host), "\n")
		if text != "" {
			text += "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(text+f.entry+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// chownTree gives dir and everything in it to uid (and the group of the
// same number); links are changed, never followed.
func chownTree(dir string, uid uint32) error {
	return filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(uid), int(uid))
	})
}

// readRunFile reads a small file of a run directory that the run itself
// may have written: never through a link, never blocking on a FIFO, and
// never more than a few bytes.
func readRunFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, 64))
	return string(data), err
}
