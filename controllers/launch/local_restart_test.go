package launch

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// restarted is the launcher a new manager process builds: the same base
// directory and client, nothing in memory.
func restarted(l *LocalLauncher) *LocalLauncher {
	return &LocalLauncher{Client: l.Client, Command: l.Command, BaseDir: l.BaseDir, GracePeriod: l.GracePeriod}
}

func starts(t *testing.T, record string) []string {
	t.Helper()
	data, err := os.ReadFile(record + ".starts")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

// A manager that restarts finds its runs again: a run that still runs is
// adopted (Start does not start it a second time), and how it ends comes
// from the exit code the runner wrote.
func TestLocalLauncher_aRestartedManagerAdoptsItsRunsAndNeverStartsThemTwice(t *testing.T) {
	for _, tc := range []struct {
		code  string
		phase Phase
		msg   string
	}{{"0", PhaseSucceeded, ""}, {"3", PhaseFailed, "exited with code 3"}} {
		t.Run("exit "+tc.code, func(t *testing.T) {
			first, run, record := newLocal(t, "wait")
			ctx := context.Background()
			if err := first.Start(ctx, run); err != nil {
				t.Fatal(err)
			}
			waitPhase(t, first, run, PhaseRunning)
			readFile(t, record+".pid")

			second := restarted(first) // the first manager is gone
			if err := second.Start(ctx, run); err != nil {
				t.Fatal(err)
			}
			waitPhase(t, second, run, PhaseRunning)
			if got := starts(t, record); len(got) != 1 {
				t.Fatalf("the runner started %d times: %v", len(got), got)
			}

			if err := os.WriteFile(record+".go", []byte(tc.code), 0o600); err != nil {
				t.Fatal(err)
			}
			s := waitPhase(t, second, run, tc.phase)
			if !strings.Contains(s.Message, tc.msg) {
				t.Fatalf("message %q, want %q", s.Message, tc.msg)
			}
			// Finished: a third manager neither restarts it.
			third := restarted(first)
			if err := third.Start(ctx, run); err != nil {
				t.Fatal(err)
			}
			if s := waitPhase(t, third, run, tc.phase); !strings.Contains(s.Message, tc.msg) {
				t.Fatalf("third manager: message %q", s.Message)
			}
			if got := starts(t, record); len(got) != 1 {
				t.Fatalf("the runner started %d times: %v", len(got), got)
			}

			dir := second.runDir(run)
			if err := third.Release(ctx, run); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("the run directory survived Release: %v", err)
			}
			if s, _ := third.Observe(ctx, run); s.Phase != PhaseNotFound {
				t.Fatalf("after Release the run is %s", s.Phase)
			}
		})
	}
}

// The runner writes to a file of its run directory, never to a pipe into
// the manager: when the manager dies, a pipe's reader goes with it and the
// runner's next line kills it with SIGPIPE.
func TestLocalLauncher_theRunnerWritesToAFileThatOutlivesTheManager(t *testing.T) {
	l, run, record := newLocal(t, "wait")
	ctx := context.Background()
	if err := l.Start(ctx, run); err != nil {
		t.Fatal(err)
	}
	pid := readFile(t, record+".pid")
	for _, fd := range []string{"1", "2"} {
		target, err := os.Readlink(filepath.Join("/proc", pid, "fd", fd))
		if err != nil {
			t.Fatal(err)
		}
		if target != filepath.Join(l.runDir(run), logFile) {
			t.Fatalf("the runner's fd %s is %s, want the run's log file", fd, target)
		}
	}
	_ = os.WriteFile(record+".go", []byte("0"), 0o600)
	waitPhase(t, l, run, PhaseSucceeded)
	_ = l.Release(ctx, run)
}

// A runner killed while no manager watched wrote no exit code: its task
// fails, and says so.
func TestLocalLauncher_anAdoptedRunnerThatWasKilledFails(t *testing.T) {
	first, run, record := newLocal(t, "hang")
	ctx := context.Background()
	if err := first.Start(ctx, run); err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(readFile(t, record+".pid"))
	readFile(t, record+".child")
	second := restarted(first)
	waitPhase(t, second, run, PhaseRunning)
	// The whole group, as an OOM kill or a user's kill -9 of the tree.
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s := waitPhase(t, second, run, PhaseFailed)
	if s.Reason != "Killed" || !strings.Contains(s.Message, "killed") {
		t.Fatalf("state %+v", s)
	}
	_ = second.Release(ctx, run)
}

// Stop and Release reach an adopted run's whole process group.
func TestLocalLauncher_stopAndReleaseReachAnAdoptedRun(t *testing.T) {
	first, run, record := newLocal(t, "hang")
	ctx := context.Background()
	if err := first.Start(ctx, run); err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(readFile(t, record+".child"))
	second := restarted(first)
	waitPhase(t, second, run, PhaseRunning)
	if err := second.Stop(ctx, run, false); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, second, run, PhaseFailed)
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(child, 0) == nil && !zombie(child) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d of the adopted runner survived the stop", child)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Release of a run still running (a deleted task) kills it and waits.
	again, run2, record2 := newLocal(t, "hang")
	if err := again.Start(ctx, run2); err != nil {
		t.Fatal(err)
	}
	readFile(t, record2+".child")
	adopter := restarted(again)
	if err := adopter.Release(ctx, run2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(adopter.runDir(run2)); !os.IsNotExist(err) {
		t.Fatalf("the run directory survived Release: %v", err)
	}
	if got := starts(t, record2); len(got) != 1 {
		t.Fatalf("starts %v", got)
	}
}

// A manager that died after naming a run's directory and before starting
// its runner left no process: the next Start starts it, once; and staging
// directories (secrets half written) are removed.
func TestLocalLauncher_aRunWhoseStartWasInterruptedStartsOnce(t *testing.T) {
	l, run, record := newLocal(t, "ok")
	dir := l.runDir(run)
	if err := os.MkdirAll(filepath.Join(dir, "input"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, lockFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	staging := filepath.Join(l.BaseDir, startingPrefix+"123")
	if err := os.MkdirAll(filepath.Join(staging, "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := l.Start(ctx, run); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, l, run, PhaseSucceeded)
	if got := starts(t, record); len(got) != 1 {
		t.Fatalf("starts %v", got)
	}
	if _, err := os.Stat(staging); !os.IsNotExist(err) {
		t.Fatalf("a staging directory survived: %v", err)
	}
	_ = l.Release(ctx, run)
}

func zombie(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// A manager killed while it removed a finished run's directory leaves no
// debris the next one trips over: the directory leaves the run's name in
// one rename, and whatever is left under the run's name or a
// ".removing-" name is removed.
func TestLocalLauncher_releaseRemovesWhatAnInterruptedRemovalLeft(t *testing.T) {
	l, run, _ := newLocal(t, "ok")
	ctx := context.Background()
	dir := l.runDir(run)
	// What an older removal could leave: the lock file gone, the rest not.
	if err := os.MkdirAll(filepath.Join(dir, "work", "repository"), 0o700); err != nil {
		t.Fatal(err)
	}
	removing := filepath.Join(l.BaseDir, removingPrefix+"other-run")
	if err := os.MkdirAll(filepath.Join(removing, "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, run); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(l.BaseDir); len(left) != 0 {
		t.Fatalf("left in the base directory: %v", left)
	}

	// The same debris under a run about to start: it starts, once.
	if err := os.MkdirAll(filepath.Join(dir, "work"), 0o700); err != nil {
		t.Fatal(err)
	}
	fresh := restarted(l)
	if err := fresh.Start(ctx, run); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, fresh, run, PhaseSucceeded)
	if err := fresh.Release(ctx, run); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(l.BaseDir); len(left) != 0 {
		t.Fatalf("left in the base directory: %v", left)
	}
}
