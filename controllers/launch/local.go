package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// LocalLauncher runs `bastion runner` as a child process with the same
// inputs a Job would mount, written to a private directory. Runs live in
// this process's memory: after a restart of the manager they are gone, and
// Observe reports NotFound.
type LocalLauncher struct {
	// Client reads the input and key Secrets.
	Client client.Client
	// Command starts the runner; the input flags are appended. Default:
	// this executable with "runner".
	Command []string
	// BaseDir holds the private run directories (default: os.TempDir()).
	BaseDir string
	// GracePeriod is how long a gracefully stopped run has before SIGKILL.
	GracePeriod time.Duration
	// Output receives the runner's stdout and stderr (default: discarded;
	// the runner streams its output to the manager).
	Output io.Writer

	mu     sync.Mutex
	runs   map[string]*localRun
	events chan event.GenericEvent
}

// Notifications is a source that names a task whenever its process exits,
// since no Kubernetes event tells the reconciler.
func (l *LocalLauncher) Notifications() source.Source {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.events == nil {
		l.events = make(chan event.GenericEvent, 64)
	}
	return source.Channel(l.events, &handler.EnqueueRequestForObject{})
}

var _ Launcher = (*LocalLauncher)(nil)

type localRun struct {
	cmd  *exec.Cmd
	dir  string
	done chan struct{}
	err  error // the process's exit, valid once done is closed
}

func runKey(run Run) string { return run.Task.Namespace + "/" + run.Name }

// Start writes the inputs and starts the runner.
func (l *LocalLauncher) Start(ctx context.Context, run Run) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.runs == nil {
		l.runs = map[string]*localRun{}
	}
	if _, ok := l.runs[runKey(run)]; ok {
		return nil
	}

	dir, err := os.MkdirTemp(l.BaseDir, "bastion-run-") // mode 0700
	if err != nil {
		return fmt.Errorf("creating the run directory: %w", err)
	}
	if err := l.writeInputs(ctx, run, dir); err != nil {
		_ = os.RemoveAll(dir)
		return err
	}

	command := l.Command
	if len(command) == 0 {
		self, err := os.Executable()
		if err != nil {
			_ = os.RemoveAll(dir)
			return err
		}
		command = []string{self, "runner"}
	}
	args := append(append([]string{}, command[1:]...),
		"--input", filepath.Join(dir, "input"), "--secrets", filepath.Join(dir, "secrets"), "--work", filepath.Join(dir, "work"))
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
		out = io.Discard
	}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so a stop reaches ansible's or terraform's
	// children too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("starting the runner: %w", err)
	}
	r := &localRun{cmd: cmd, dir: dir, done: make(chan struct{})}
	events, task := l.events, run.Task.DeepCopy()
	go func() {
		r.err = cmd.Wait()
		close(r.done)
		if events != nil {
			events <- event.GenericEvent{Object: task}
		}
	}()
	l.runs[runKey(run)] = r
	return nil
}

// writeInputs lays out <dir>/input and <dir>/secrets as a Job mounts them.
func (l *LocalLauncher) writeInputs(ctx context.Context, run Run, dir string) error {
	for _, sub := range []string{"input", "secrets", "work/home", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return err
		}
	}
	if err := l.writeSecret(ctx, run.Task.Namespace, run.InputSecret, filepath.Join(dir, "input")); err != nil {
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
	for key, value := range secret.Data {
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
	r, ok := l.runs[runKey(run)]
	l.mu.Unlock()
	if !ok {
		return State{Phase: PhaseNotFound}, nil
	}
	select {
	case <-r.done:
	default:
		return State{Phase: PhaseRunning}, nil
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

// Stop signals the run's process group: SIGTERM then, after the grace
// period, SIGKILL; with force, SIGKILL at once.
func (l *LocalLauncher) Stop(_ context.Context, run Run, force bool) error {
	l.mu.Lock()
	r, ok := l.runs[runKey(run)]
	l.mu.Unlock()
	if !ok {
		return nil
	}
	pgid := -r.cmd.Process.Pid
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

// Release kills what is left of the run and removes its directory.
func (l *LocalLauncher) Release(_ context.Context, run Run) error {
	l.mu.Lock()
	r, ok := l.runs[runKey(run)]
	delete(l.runs, runKey(run))
	l.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-r.done:
	default:
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.done
	}
	return os.RemoveAll(r.dir)
}
