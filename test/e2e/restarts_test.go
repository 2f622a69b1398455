package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// Issue #11 item 1: the manager is killed with SIGKILL at random moments
// while tasks start and print, and started again each time. Tasks are
// started a few after each start, so kills land while tasks are being
// admitted, started and streamed. Afterwards every task has finished, ran
// once, and its stored output is exactly what its script printed.
// BASTION_SOAK=1 (make soak) runs the long version; BASTION_RESTART_SEED
// repeats a schedule.
func TestRestart_managerKilledAtRandomLosesNoLineAndRunsEveryTaskOnce(t *testing.T) {
	t.Parallel()
	const tasks = 20
	kills, bursts := 10, 40 // 200 lines of 8 s or more per task
	if soak() {
		kills, bursts = 60, 300
	}
	rng := seeded(t)
	c := startCluster(t)
	m := newManagerProc(t, c)
	m.start()
	cp := newCounterProject(t, m.signIn(), bursts)

	started := map[string]int64{}
	for kill := 1; kill <= kills; kill++ {
		api := m.signIn()
		// The first half of the incarnations each start a share of the
		// tasks, at once or a moment later.
		for n := len(started); n < tasks*kill/max(kills/2, 1) && n < tasks; n++ {
			label := fmt.Sprintf("t%02d", n+1)
			started[label] = cp.startTask(api, label)
		}
		time.Sleep(between(rng, 200*time.Millisecond, 2500*time.Millisecond))
		m.kill()
		// Down for a moment, up to a few seconds: runners retry meanwhile.
		time.Sleep(between(rng, 0, 1500*time.Millisecond))
		m.start()
	}
	if len(started) != tasks {
		t.Fatalf("started %d tasks, want %d", len(started), tasks)
	}
	t.Logf("%d kills of the manager, %d starts", kills, m.starts)
	begin := time.Now()
	cp.checkTasks(t, m.signIn(), started, bursts*5, 3*time.Minute+time.Duration(bursts)*time.Second)
	t.Logf("every task checked %s after the last start", time.Since(begin).Round(time.Millisecond))

	// Every run's files are released: no runner left, nothing on disk.
	eventually(t, 30*time.Second, "runs released", func() error {
		if pids := runnersUnder(m.runs); len(pids) > 0 {
			return fmt.Errorf("runner processes still alive: %v", pids)
		}
		if left, err := os.ReadDir(m.runs); err != nil || len(left) > 0 {
			return fmt.Errorf("run directories left: %v (%v)", left, err)
		}
		return nil
	})
}

// Issue #11 item 4: kube-apiserver is restarted (killed, kept down a few
// seconds, started on the same address) while tasks run, and once more
// while tasks wait to start. The manager keeps its process; its controllers
// resume, every task finishes, runs exactly once, and keeps every line.
func TestRestart_kubeAPIServerRestartedDuringARunRunsEveryTaskExactlyOnce(t *testing.T) {
	t.Parallel()
	tasks, restarts, bursts := 10, 3, 30
	if soak() {
		tasks, restarts, bursts = 20, 15, 200
	}
	rng := seeded(t)
	c := startCluster(t)
	m := newManagerProc(t, c)
	m.start()
	api := m.signIn()
	cp := newCounterProject(t, api, bursts)

	started := map[string]int64{}
	next := 0
	startSome := func(n int) {
		for ; n > 0 && next < tasks; n-- {
			next++
			label := fmt.Sprintf("a%02d", next)
			started[label] = cp.startTask(api, label)
		}
	}
	for r := 1; r <= restarts; r++ {
		startSome(max(tasks/restarts, 1))
		time.Sleep(between(rng, 500*time.Millisecond, 3*time.Second))
		down := between(rng, time.Second, 6*time.Second)
		t.Logf("restart %d: kube-apiserver down for %s", r, down)
		c.restartAPIServer(down)
	}
	begin := time.Now()
	startSome(tasks) // the rest, through the restarted apiserver
	if len(started) != tasks {
		t.Fatalf("started %d tasks, want %d", len(started), tasks)
	}
	t.Logf("restarts done; the last tasks started in %s", time.Since(begin).Round(time.Millisecond))
	cp.checkTasks(t, api, started, bursts*5, 3*time.Minute+time.Duration(bursts)*time.Second)
	t.Logf("every task checked %s after the last restart", time.Since(begin).Round(time.Millisecond))
	if m.starts != 1 {
		t.Fatalf("the manager was started %d times; this test keeps one", m.starts)
	}
	select {
	case <-m.done:
		t.Fatal("the manager exited while kube-apiserver restarted")
	default:
	}
}

// After the kube-apiserver comes back, the manager's caches catch up within
// seconds, however often it went away just before (docs/reliability.md,
// "The kube-apiserver restarts"). Five restarts within half a minute, as an
// upgrading or crash-looping control plane makes, left client-go's
// reflectors waiting their doubled backoff, 30 to 60 s at its cap: ended
// tasks read as running and new ones were not started meanwhile. A task
// started right after the last restart (it runs 0.2 s) must be seen to
// succeed within 15 s of the kube-apiserver's return.
func TestRestart_theManagerCatchesUpWithinSecondsOfTheKubeAPIServersReturn(t *testing.T) {
	t.Parallel()
	const restarts, limit = 5, 15 * time.Second
	c := startCluster(t)
	m := newManagerProc(t, c)
	m.start()
	api := m.signIn()
	cp := newCounterProject(t, api, 1)
	tasks := map[string]int64{"before": cp.startTask(api, "before")}
	cp.checkTasks(t, api, tasks, 5, time.Minute)

	for r := 1; r <= restarts; r++ {
		c.restartAPIServer(2 * time.Second)
		time.Sleep(time.Second)
	}
	back := time.Now()
	tasks["after"] = cp.startTask(api, "after")
	posted := time.Since(back)
	if posted >= limit {
		t.Fatalf("the task's POST took %s after the kube-apiserver's return", posted.Round(time.Millisecond))
	}
	cp.checkTasks(t, api, tasks, 5, limit-posted)
	t.Logf("after %d restarts: the task's POST answered in %s, its success seen %s after the kube-apiserver's return",
		restarts, posted.Round(time.Millisecond), time.Since(back).Round(time.Millisecond))
}
