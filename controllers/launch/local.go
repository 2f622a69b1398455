package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// LocalLauncher runs `bastion runner` as a child process with the same
// inputs a Job would mount, written to a private directory.
//
// A run outlives the manager that started it, as a Job does: the runner is
// in its own process group and writes to a log file (never to a pipe into
// the manager, whose end would close and kill it with SIGPIPE), keeps
// streaming to whichever manager answers next, and holds an exclusive lock
// on the file "lock" in its run directory for as long as a process of the
// run lives. The directory is named after the task, so a restarted manager
// finds it again and adopts the run instead of starting it a second time;
// the runner writes its exit code to the file "exit" when it ends.
type LocalLauncher struct {
	// Client reads the input and key Secrets.
	Client client.Client
	// Command starts the runner; the input flags are appended. Default:
	// this executable with "runner".
	Command []string
	// BaseDir holds the private run directories (default: os.TempDir()).
	// It must be the same across restarts for runs to be adopted.
	BaseDir string
	// GracePeriod is how long a gracefully stopped run has before SIGKILL.
	GracePeriod time.Duration
	// Output receives the runner's stdout and stderr (default: the file
	// runner.log in the run directory; the runner streams its output to
	// the manager). A writer that is not a file is fed through a pipe, and
	// the runner then dies with this process.
	Output io.Writer
	// Users, when set, runs each run as its own unprivileged user from
	// this range (see Isolation); nil runs them as the manager's user.
	// PrepareBase must be called before the first run.
	Users *RunUsers

	mu   sync.Mutex
	runs map[string]*localRun
	// starting holds the runs whose Start is writing their inputs, outside
	// mu; claimedUsers the user ids those starts took, which no directory
	// shows yet.
	starting     map[string]bool
	claimedUsers map[uint32]bool
	events       chan event.GenericEvent
	cleaned      bool // half-started directories of an earlier process removed
	// lastUser is the id last handed to an isolated run (see allocateUser).
	lastUser uint32
	// strangers are the range's ids that processes ran as when /proc was
	// last read, at strangersSeen (strangerUsers).
	strangers     map[uint32]bool
	strangersSeen time.Time
	sinceScan     uint32 // ids handed out since
}

// Files of a run directory.
const (
	lockFile = "lock" // flock-ed by the run's processes while they live
	pidFile  = "pid"  // the runner's pid, written once it started
	// reportDir holds what the runner writes: exitFile, its exit code,
	// written last. It is the run user's own directory when runs are
	// isolated; the rest of the run directory is the manager's.
	reportDir = "report"
	exitFile  = "exit"
	logFile   = "runner.log"
	// startingPrefix names a directory whose inputs are being written; it
	// is renamed to the run's name just before the runner starts.
	startingPrefix = ".starting-"
	// removingPrefix names a run directory being removed.
	removingPrefix = ".removing-"
)

// Notifications is a source that names a task whenever its process exits,
// since no Kubernetes event tells the reconciler.
//
// It tidies up after an earlier process when it starts, before the first
// reconcile, even when no task is left to reconcile: that is when the Task
// controller starts, on the leader only. Not when it is set up, which
// every replica does at its start: a standby starting while the leader
// writes a run's inputs would remove the leader's half-made run.
func (l *LocalLauncher) Notifications() source.Source {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.events == nil {
		l.events = make(chan event.GenericEvent, 64)
	}
	exits := source.Channel(l.events, &handler.EnqueueRequestForObject{})
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		l.mu.Lock()
		l.removeHalfDone()
		l.mu.Unlock()
		return exits.Start(ctx, q)
	})
}

var _ Launcher = (*LocalLauncher)(nil)

type localRun struct {
	cmd  *exec.Cmd // nil for a run adopted after a restart
	pid  int       // the runner's pid, its process group's id (0: unknown yet)
	dir  string
	uid  uint32 // the run's own user (isolated runs); 0 otherwise
	done chan struct{}
	err  error // the process's exit, valid once done is closed (own runs)
}

func runKey(run Run) string { return run.Task.Namespace + "/" + run.Name }

// runDir is the run's directory: the same for the same task in every
// process, different for a new task of the same name. "_" appears in no
// namespace, run name or UID, so the parts cannot run into each other.
func (l *LocalLauncher) runDir(run Run) string {
	return filepath.Join(l.baseDir(), run.Task.Namespace+"_"+run.Name+"_"+string(run.Task.UID))
}

func (l *LocalLauncher) baseDir() string {
	if l.BaseDir == "" {
		return os.TempDir()
	}
	return l.BaseDir
}

// lookup returns the run, adopting the directory an earlier manager left;
// nil when there is neither. l.mu must be held.
func (l *LocalLauncher) lookup(run Run) (*localRun, error) {
	if r, ok := l.runs[runKey(run)]; ok {
		return r, nil
	}
	dir := l.runDir(run)
	if _, err := os.Stat(filepath.Join(dir, lockFile)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	r, err := l.adopt(run, dir)
	if err != nil {
		return nil, err
	}
	if l.runs == nil {
		l.runs = map[string]*localRun{}
	}
	l.runs[runKey(run)] = r
	return r, nil
}

// Start writes the inputs and starts the runner. Runs start concurrently:
// l.mu is held only to claim the run and its user id and to record the
// started run, not while the Secrets are read, the inputs written and the
// process started, which is most of a start (a burst of tasks would
// otherwise start one at a time).
func (l *LocalLauncher) Start(ctx context.Context, run Run) error {
	l.mu.Lock()
	claim, err := l.claim(run)
	l.mu.Unlock()
	if err != nil || claim == nil {
		return err
	}
	r, err := l.launch(ctx, run, claim)
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.starting, runKey(run))
	delete(l.claimedUsers, claim.uid)
	if err != nil {
		return err
	}
	l.runs[runKey(run)] = r
	return nil
}

// startClaim is what Start took under l.mu for one run.
type startClaim struct {
	uid    uint32 // the run's own user (isolated runs); 0 otherwise
	events chan event.GenericEvent
}

// claim decides whether run is to be started, and if so marks it as being
// started and picks its user. nil when it started already. l.mu must be
// held.
func (l *LocalLauncher) claim(run Run) (*startClaim, error) {
	if l.runs == nil {
		l.runs = map[string]*localRun{}
	}
	if l.starting == nil {
		l.starting, l.claimedUsers = map[string]bool{}, map[uint32]bool{}
	}
	// Once, before the first run of this process stages a directory: after
	// it, every staging directory is a live start of this process.
	l.removeHalfDone()
	key := runKey(run)
	if l.starting[key] {
		// The reconciler never starts one task twice at once; if that
		// changed, the second start must not race the first.
		return nil, fmt.Errorf("the run %s is being started", run.Name)
	}
	r, err := l.lookup(run)
	if err != nil {
		return nil, err
	}
	if r != nil {
		if r.cmd != nil || !r.neverStarted() {
			return nil, nil // started already, by this process or an earlier one
		}
		// The earlier manager died after naming the directory and before
		// the runner started: nothing ran, so it starts now.
		delete(l.runs, key)
		if err := removeDir(r.dir); err != nil {
			return nil, err
		}
	}
	c := &startClaim{events: l.events}
	if l.Users != nil {
		if c.uid, err = l.allocateUser(); err != nil {
			return nil, err
		}
		// Not yet written in a directory that allocateUser reads.
		l.claimedUsers[c.uid] = true
	}
	l.starting[key] = true
	return c, nil
}

// launch writes the run's inputs in a staging directory, names it for the
// run and starts the runner. It runs without l.mu: the run is claimed.
func (l *LocalLauncher) launch(ctx context.Context, run Run, claim *startClaim) (*localRun, error) {
	uid := claim.uid
	dir := l.runDir(run)
	if err := removeDir(dir); err != nil { // no lock file: no run, only debris
		return nil, err
	}
	staging, err := os.MkdirTemp(l.baseDir(), startingPrefix) // mode 0700
	if err != nil {
		return nil, fmt.Errorf("creating the run directory: %w", err)
	}
	if err := l.writeInputs(ctx, run, staging); err != nil {
		_ = os.RemoveAll(staging)
		return nil, err
	}
	if l.Users != nil {
		if err := isolate(staging, dir, uid); err != nil {
			_ = os.RemoveAll(staging)
			return nil, err
		}
	}
	lock, err := os.OpenFile(filepath.Join(staging, lockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		_ = os.RemoveAll(staging)
		return nil, err
	}
	defer lock.Close() // the runner keeps its own copy, and with it the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = os.RemoveAll(staging)
		return nil, fmt.Errorf("locking the run directory: %w", err)
	}
	// Named for the task only once complete, so that a restart never finds
	// half-written inputs under the run's name.
	if err := os.Rename(staging, dir); err != nil {
		_ = os.RemoveAll(staging)
		return nil, err
	}

	command := l.Command
	if len(command) == 0 {
		self, err := os.Executable()
		if err != nil {
			_ = removeDir(dir)
			return nil, err
		}
		command = []string{self, "runner"}
	}
	args := append(append([]string{}, command[1:]...),
		"--input", filepath.Join(dir, "input"), "--secrets", filepath.Join(dir, "secrets"), "--work", filepath.Join(dir, "work"),
		"--exit-file", filepath.Join(dir, reportDir, exitFile))
	if l.Users != nil {
		args = append(args, "--run-as", strconv.FormatUint(uint64(uid), 10), "--accounts", dir)
	}
	cmd := exec.Command(command[0], args...)
	cmd.Dir = filepath.Join(dir, "work")
	// A clean environment: the runner gets what the task says, not the
	// manager's own variables.
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(dir, "work", "home"),
		"TMPDIR=" + filepath.Join(dir, "tmp"),
		"LANG=C.UTF-8",
	}
	out := l.Output
	if out == nil {
		f, err := os.OpenFile(filepath.Join(dir, logFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			_ = removeDir(dir)
			return nil, err
		}
		defer f.Close()
		out = f
	}
	cmd.Stdout, cmd.Stderr = out, out
	// The lock goes with the runner (as descriptor 3) to its children.
	cmd.ExtraFiles = []*os.File{lock}
	// Its own process group, so a stop reaches ansible's or terraform's
	// children too, and a signal to the manager's group does not.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if l.Users != nil {
		// The runner starts as root in a mount namespace of its own, where
		// it mounts the run's account files and the tools on PATH that the
		// run's user could not reach, and becomes that user before it
		// reads anything of the task (see runner --run-as). Its own IPC
		// namespace keeps SysV IPC and POSIX message queues its own.
		cmd.SysProcAttr.Unshareflags = runNamespaces
	}
	if err := l.startProcess(cmd); err != nil {
		_ = removeDir(dir)
		return nil, fmt.Errorf("starting the runner: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, pidFile), strconv.Itoa(cmd.Process.Pid)+"\n"); err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		_ = removeDir(dir)
		return nil, err
	}
	r := &localRun{cmd: cmd, pid: cmd.Process.Pid, dir: dir, uid: uid, done: make(chan struct{})}
	events, task := claim.events, run.Task.DeepCopy()
	go func() {
		r.err = cmd.Wait()
		close(r.done)
		if events != nil {
			events <- event.GenericEvent{Object: task}
		}
	}()
	return r, nil
}

// removeHalfDone removes, once, the directories an earlier process left
// when it died writing a run's inputs (they hold secrets) or removing a
// run. l.mu must be held. It runs before this process's first start
// claims a run (and so stages a directory), and never again, so it never
// removes a directory that a start of this process is writing.
func (l *LocalLauncher) removeHalfDone() {
	if l.cleaned {
		return
	}
	l.cleaned = true
	for _, prefix := range []string{startingPrefix, removingPrefix} {
		stale, _ := filepath.Glob(filepath.Join(l.baseDir(), prefix+"*"))
		for _, dir := range stale {
			_ = os.RemoveAll(dir)
		}
	}
}

// adopt takes over a run directory an earlier manager left: its runner is
// not this process's child, so its end is seen through the lock, and how
// it ended through the exit file. l.mu must be held.
func (l *LocalLauncher) adopt(run Run, dir string) (*localRun, error) {
	r := &localRun{dir: dir, done: make(chan struct{})}
	r.pid = readPid(dir)
	r.uid, _ = readUID(dir)
	lock, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		_ = lock.Close() // nothing of the run lives
		close(r.done)
		return r, nil
	} else if !errors.Is(err, syscall.EWOULDBLOCK) {
		_ = lock.Close()
		return nil, fmt.Errorf("checking the run's lock: %w", err)
	}
	events, task := l.events, run.Task.DeepCopy()
	go func() {
		// Blocks until the last process of the run has exited.
		for {
			err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)
			if !errors.Is(err, syscall.EINTR) {
				break
			}
		}
		_ = lock.Close()
		close(r.done)
		if events != nil {
			events <- event.GenericEvent{Object: task}
		}
	}()
	return r, nil
}

// neverStarted reports whether an adopted run's runner never started: its
// manager died between naming the directory and starting the process.
// Only meaningful once done.
func (r *localRun) neverStarted() bool {
	if r.cmd != nil || !r.finished() {
		return false
	}
	_, pidErr := os.Stat(filepath.Join(r.dir, pidFile))
	_, exitErr := os.Lstat(filepath.Join(r.dir, reportDir, exitFile))
	return errors.Is(pidErr, fs.ErrNotExist) && errors.Is(exitErr, fs.ErrNotExist)
}

func (r *localRun) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// groupID is the run's process group, found again when an earlier manager
// died before it wrote the pid file. 0 when unknown.
func (r *localRun) groupID() int {
	if r.pid == 0 {
		r.pid = readPid(r.dir)
	}
	return r.pid
}

func readPid(dir string) int {
	data, err := os.ReadFile(filepath.Join(dir, pidFile))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return 0
	}
	return pid
}

func writeFileAtomic(path, data string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// writeInputs lays out <dir>/input and <dir>/secrets as a Job mounts them.
func (l *LocalLauncher) writeInputs(ctx context.Context, run Run, dir string) error {
	for _, sub := range []string{"input", "secrets", "work/home", "tmp", reportDir} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return err
		}
	}
	input := filepath.Join(dir, "input")
	if run.Input != nil {
		if err := writeSecretData(run.InputSecret, run.Input, input); err != nil {
			return err
		}
	} else if err := l.writeSecret(ctx, run.Task.Namespace, run.InputSecret, input); err != nil {
		return err
	}
	for _, name := range run.Secrets {
		target := filepath.Join(dir, "secrets", name)
		if err := os.Mkdir(target, 0o700); err != nil {
			return err
		}
		if err := l.writeSecret(ctx, run.Task.Namespace, name, target); err != nil {
			return err
		}
	}
	return nil
}

func (l *LocalLauncher) writeSecret(ctx context.Context, namespace, name, dir string) error {
	secret := &corev1.Secret{}
	if err := l.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
		return fmt.Errorf("reading secret %s: %w", name, err)
	}
	return writeSecretData(name, secret.Data, dir)
}

// writeSecretData writes a Secret's data into dir, a file per key, as a
// Job's volume would show it.
func writeSecretData(name string, data map[string][]byte, dir string) error {
	for key, value := range data {
		// Secret keys are [-._a-zA-Z0-9]+, so they cannot leave dir, but
		// "." and ".." are valid keys too.
		if key == "." || key == ".." || filepath.Base(key) != key {
			return fmt.Errorf("secret %s has a key that is not a file name", name)
		}
		if err := os.WriteFile(filepath.Join(dir, key), value, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// Observe reports whether the process runs, and how it ended.
func (l *LocalLauncher) Observe(_ context.Context, run Run) (State, error) {
	l.mu.Lock()
	r, err := l.lookup(run)
	l.mu.Unlock()
	if err != nil {
		return State{}, err
	}
	if r == nil {
		return State{Phase: PhaseNotFound}, nil
	}
	if !r.finished() {
		return State{Phase: PhaseRunning}, nil
	}
	if r.cmd == nil {
		return adoptedState(r), nil
	}
	if r.err == nil {
		return State{Phase: PhaseSucceeded}, nil
	}
	var exit *exec.ExitError
	if errors.As(r.err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return State{Phase: PhaseFailed, Reason: "Killed", Message: "the runner was killed by " + ws.Signal().String()}, nil
		}
		return State{Phase: PhaseFailed, Reason: "RunnerFailed", Message: fmt.Sprintf("the runner exited with code %d", exit.ExitCode())}, nil
	}
	return State{Phase: PhaseFailed, Reason: "RunnerFailed", Message: r.err.Error()}, nil
}

// adoptedState is how a run that is not this process's child ended, from
// the exit code its runner wrote.
func adoptedState(r *localRun) State {
	if r.neverStarted() {
		// Start removes such a directory and starts the runner; a task past
		// starting that finds one has lost its run.
		return State{Phase: PhaseFailed, Reason: "NotStarted", Message: "the manager stopped before the runner started"}
	}
	// Read as a file the run may have tampered with: it can only lie
	// about its own exit.
	data, err := readRunFile(filepath.Join(r.dir, reportDir, exitFile))
	if err != nil {
		return State{Phase: PhaseFailed, Reason: "Killed", Message: "the runner ended without reporting its exit (it was killed)"}
	}
	code, err := strconv.Atoi(strings.TrimSpace(data))
	switch {
	case err != nil:
		return State{Phase: PhaseFailed, Reason: "RunnerFailed", Message: "the runner's exit file is unreadable"}
	case code == 0:
		return State{Phase: PhaseSucceeded}
	}
	return State{Phase: PhaseFailed, Reason: "RunnerFailed", Message: fmt.Sprintf("the runner exited with code %d", code)}
}

// Stop signals the run's process group: SIGTERM then, after the grace
// period, SIGKILL; with force, SIGKILL at once.
func (l *LocalLauncher) Stop(_ context.Context, run Run, force bool) error {
	l.mu.Lock()
	r, err := l.lookup(run)
	l.mu.Unlock()
	if err != nil || r == nil || r.finished() {
		return err
	}
	pgid := -r.groupID()
	if pgid == 0 {
		return nil // it only just started; the runner also hears the stop through its stream
	}
	if force {
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		return nil
	}
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	grace := l.GracePeriod
	if grace == 0 {
		grace = 30 * time.Second
	}
	go func() {
		select {
		case <-r.done:
		case <-time.After(grace):
			_ = syscall.Kill(pgid, syscall.SIGKILL)
		}
	}()
	return nil
}

// isolate hands the run's part of its staging directory to the run's own
// user: its inputs, work, temporary and report directories. The rest (the
// lock, the pid, the log, the account files) stays the manager's, in a
// directory the run can traverse but not list or write. dir is where the
// staging directory will be.
func isolate(staging, dir string, uid uint32) error {
	if err := writeFileAtomic(filepath.Join(staging, uidFile), strconv.FormatUint(uint64(uid), 10)+"\n"); err != nil {
		return err
	}
	if err := writeAccounts(staging, uid, filepath.Join(dir, "work", "home")); err != nil {
		return err
	}
	for _, sub := range []string{"input", "secrets", "work", "tmp", reportDir} {
		if err := chownTree(filepath.Join(staging, sub), uid); err != nil {
			return err
		}
	}
	return os.Chmod(staging, 0o711)
}

// Release kills what is left of the run and removes its directory.
func (l *LocalLauncher) Release(_ context.Context, run Run) error {
	l.mu.Lock()
	l.removeHalfDone()
	r, err := l.lookup(run)
	delete(l.runs, runKey(run))
	l.mu.Unlock()
	if err != nil {
		return err
	}
	if r == nil {
		// Nothing to adopt; a directory left without its lock file (by an
		// older version) goes all the same.
		return removeDir(l.runDir(run))
	}
	if !r.finished() {
		if pgid := r.groupID(); pgid > 0 {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		if r.uid != 0 {
			killUser(r.uid)
		}
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
			// A process that left the group (setsid) still holds the lock;
			// the files go anyway.
		}
	}
	if r.uid != 0 {
		// Nothing of the run may outlive it: the next run of this id
		// would find it there.
		killUser(r.uid)
	}
	return removeDir(r.dir)
}

// removeDir takes the directory away from the run's name first, in one
// rename, then removes it: a manager killed while removing leaves a
// ".removing-" directory that the next one deletes, never a half-removed
// run that it would have to make sense of.
func removeDir(dir string) error {
	gone := filepath.Join(filepath.Dir(dir), removingPrefix+filepath.Base(dir))
	if err := os.Rename(dir, gone); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return os.RemoveAll(gone)
}
