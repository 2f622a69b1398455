package launch

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bastion-dev/bastion/internal/runspec"
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
		Unshareflags: runNamespaces,
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
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if l.Users != nil {
		isolated, err := isolatedBase(dir)
		if err != nil {
			return err
		}
		dir, l.BaseDir = isolated, isolated
	}
	spreadRuns(dir)
	return nil
}

// isolatedBase is where isolated runs live for the base dir: dir itself
// when other users can reach it, else a directory of its own under the
// system's temporary directory; owned by the manager, mode 0711.
func isolatedBase(dir string) (string, error) {
	if !runspec.ReachableByOthers(filepath.Dir(dir)) {
		sum := sha256.Sum256([]byte(dir))
		dir = filepath.Join(os.TempDir(), "bastion-runs-"+hex.EncodeToString(sum[:6]))
		if err := os.Mkdir(dir, 0o711); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	// In a world-writable /tmp another user could have made the directory
	// first, or left a symbolic link in its place.
	info, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if st, ok := info.Sys().(*syscall.Stat_t); !info.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return "", fmt.Errorf("local runs directory %s is not a directory of the manager's user; remove it", dir)
	}
	return dir, os.Chmod(dir, 0o711)
}

// allocateUser picks, round-robin, the next id of the range after the
// last one handed out that no run directory holds and no process runs as:
// an id whose run just ended is not handed out again until the whole range
// went round, so nothing that run might have left (a process that escaped
// the kill, a file somewhere the run could write) meets the next run of
// another task. A manager starts at a random place in the range, so that
// one restarted does not hand out again the ids its predecessor just
// used. l.mu must be held, so that two starts cannot pick the same one;
// an id claimed by a start still writing its directory counts as taken.
func (l *LocalLauncher) allocateUser() (uint32, error) {
	taken := map[uint32]bool{}
	entries, _ := os.ReadDir(l.baseDir())
	for _, e := range entries {
		if uid, ok := readUID(filepath.Join(l.baseDir(), e.Name())); ok {
			taken[uid] = true
		}
	}
	for uid := range l.strangerUsers() {
		taken[uid] = true
	}
	for uid := range l.claimedUsers {
		taken[uid] = true
	}
	last := l.lastUser
	if last < l.Users.First || last-l.Users.First >= l.Users.Count {
		last = l.Users.First + rand.Uint32N(l.Users.Count)
	}
	for i := uint32(1); i <= l.Users.Count; i++ {
		if uid := l.Users.First + (last-l.Users.First+i)%l.Users.Count; !taken[uid] {
			l.lastUser = uid
			return uid, nil
		}
	}
	return 0, fmt.Errorf("all %d user ids for local runs are taken", l.Users.Count)
}

// processScanEvery is how old allocateUser's look at the processes of the
// range may be. Reading every process's status takes a pass over /proc,
// which at one pass a start was a sixth of the manager's CPU in a burst of
// short runs (docs/benchmarks.md). A look a few seconds old is as good:
// the look is for strangers (what a crashed manager's runs left, a process
// that escaped its run's kill), and ids go round the range, so an id is
// handed out again only after every other, long after a newer look.
const processScanEvery = 5 * time.Second

// strangerUsers is the range's ids that processes ran as at the last look
// at /proc, looking again when that is processScanEvery old, or when half
// the range was handed out since (a small range goes round in less than
// processScanEvery). l.mu is held.
func (l *LocalLauncher) strangerUsers() map[uint32]bool {
	l.sinceScan++
	if l.strangers == nil || time.Since(l.strangersSeen) >= processScanEvery || l.sinceScan > l.Users.Count/2 {
		l.sinceScan = 0
		l.strangers = map[uint32]bool{}
		forEachProcess(func(pid int, uid uint32) {
			if uid-l.Users.First < l.Users.Count {
				l.strangers[uid] = true
			}
		})
		l.strangersSeen = time.Now()
	}
	return l.strangers
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

// killUser kills every process that runs as uid: the whole of an isolated
// run, including what left its process group (setsid, a daemon a playbook
// started), since nothing else runs as that id.
//
// From inside: a shell of that uid sends SIGKILL to -1, which the kernel
// delivers to every process of the uid in one sweep that no fork can slip
// past (SIGKILL cannot be caught or blocked). That shell is the run's to
// signal, though: a process of the run can stop it (SIGSTOP) before it
// sends the kill, and a stopped child is never waited for. So it has
// killShellWait; should it not run in that time, or not run at all (the
// uid at its process limit), come passes over /proc until one finds
// nothing left (the shell, stopped, among them), with a bound so that the
// manager never hangs on a run.
func killUser(uid uint32) {
	inside := exec.Command("/bin/sh", "-c", "kill -KILL -1")
	inside.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}}}
	ran := make(chan bool, 1)
	go func() {
		// Killed by nothing: kill(-1) spares the caller. An exit status
		// is the shell's having run; dash's kill has nothing to say of a
		// uid with no process left but its own.
		var exited *exec.ExitError
		err := inside.Run()
		ran <- err == nil || errors.As(err, &exited) && exited.ExitCode() >= 0
	}()
	select {
	case ok := <-ran:
		if ok {
			return
		}
	case <-time.After(killShellWait):
	}
	for pass := 0; pass < 100; pass++ {
		found := false
		forEachProcess(func(pid int, u uint32) {
			if u == uid {
				found = true
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
		if !found {
			return
		}
	}
}

// killShellWait is how long killUser's shell has to run; it takes a few
// milliseconds.
const killShellWait = 2 * time.Second

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

// processUID reads the real uid from /proc/<pid>/status; none for a
// process that has exited and waits to be reaped (a zombie holds nothing).
func processUID(pid int) (uint32, bool) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 1 && fields[0] == "State:" && (fields[1] == "Z" || fields[1] == "X") {
			return 0, false
		}
		if len(fields) > 1 && fields[0] == "Uid:" {
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

// runNamespaces are the namespaces an isolated run gets of its own: mounts
// (its account files, its private /var/tmp and /dev/shm) and IPC (SysV IPC, POSIX message
// queues).
const runNamespaces = syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC

// startProcess starts cmd; for isolated runs with no_new_privs set, so
// that no program of the run gains privileges through execve: a set-uid or
// set-gid file, or one with file capabilities, runs with the run's own
// rights, wherever it lies. The flag belongs to a thread and a child
// inherits it from the thread that forks it, so the start happens on a
// thread of its own that is set and then thrown away (a goroutine that
// ends locked to its thread takes the thread with it).
func (l *LocalLauncher) startProcess(cmd *exec.Cmd) error {
	if l.Users == nil {
		return cmd.Start()
	}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			started <- fmt.Errorf("setting no_new_privs for the run: %w", err)
			return
		}
		started <- cmd.Start()
	}()
	return <-started
}
