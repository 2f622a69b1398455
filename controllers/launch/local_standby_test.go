package launch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Several manager replicas share one runs directory (the e2e HA harness, a
// volume on one host); only the leader launches. A standby sets up its
// launcher's notifications at its start like every replica, and must not
// tidy up then: it would remove the run the leader is writing. It tidies
// when its notifications start, with the Task controller, once it leads;
// and it then hears the end of a run the old leader started.
func TestLocalLauncher_aStandbyTidiesUpOnlyOnceItLeadsAndHearsTheOldLeadersRunsEnd(t *testing.T) {
	leader, run, record := newLocal(t, "wait")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Whatever happens, nothing of the run outlives the test.
	t.Cleanup(func() { _ = restarted(leader).Release(context.Background(), run) })
	if err := leader.Start(ctx, run); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, leader, run, PhaseRunning)
	// The leader is writing the inputs of its next run.
	staging := filepath.Join(leader.BaseDir, startingPrefix+"next-run")
	if err := os.MkdirAll(filepath.Join(staging, "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}

	standby := restarted(leader)
	exits := standby.Notifications() // set up as the standby starts
	if _, err := os.Stat(staging); err != nil {
		t.Fatalf("a standby's start removed the leader's half-made run: %v", err)
	}

	// The leader is gone; the standby's Task controller starts.
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	if err := exits.Start(ctx, q); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(staging); !os.IsNotExist(err) {
		t.Fatalf("the new leader left the dead leader's half-made run: %v", err)
	}
	waitPhase(t, standby, run, PhaseRunning) // adopted, not started again
	if err := os.WriteFile(record+".go", []byte("0"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan reconcile.Request, 1)
	go func() {
		req, _ := q.Get()
		got <- req
	}()
	select {
	case req := <-got:
		if req.Namespace != run.Task.Namespace || req.Name != run.Task.Name {
			t.Fatalf("notified of %v, want %s/%s", req, run.Task.Namespace, run.Task.Name)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the new leader did not hear the end of the run it adopted")
	}
	waitPhase(t, standby, run, PhaseSucceeded)
	if got := starts(t, record); len(got) != 1 {
		t.Fatalf("the runner started %d times: %v", len(got), got)
	}
	if err := standby.Release(ctx, run); err != nil {
		t.Fatal(err)
	}
}
