package launch

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// A burst of tasks starts its runs side by side: a start whose Secrets are
// slow to read holds up no other run, and a run is still started once.
func TestLocalLauncher_aSlowStartHoldsUpNoOtherRunAndEachStartsOnce(t *testing.T) {
	l, slow, record := newLocal(t, "wait")
	release := make(chan struct{})
	reading := make(chan struct{}, 1)
	l.Client = interceptor.NewClient(l.Client.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if key.Name == slow.InputSecret {
				reading <- struct{}{}
				<-release
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	ctx := context.Background()
	if err := l.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t2-input"},
		Data: map[string][]byte{"task.json": []byte(`{"name":"t2"}`)}}); err != nil {
		t.Fatal(err)
	}
	fast := Run{Task: &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t2", UID: "5e1d-uid"}},
		Name: "t2", InputSecret: "t2-input"}

	slowDone := make(chan error, 1)
	go func() { slowDone <- l.Start(ctx, slow) }()
	<-reading // the slow start is inside its Secret reads

	// Another task starts meanwhile (with one lock over the whole start it
	// would wait here until the test's deadline).
	fastDone := make(chan error, 1)
	go func() { fastDone <- l.Start(ctx, fast) }()
	select {
	case err := <-fastDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a start waited for another run's slow start")
	}
	waitPhase(t, l, fast, PhaseRunning)

	// The same task again while its start is under way: refused, not a
	// second runner.
	if err := l.Start(ctx, slow); err == nil || !strings.Contains(err.Error(), "is being started") {
		t.Fatalf("a second start of a run being started: %v, want it refused", err)
	}
	if s, err := l.Observe(ctx, slow); err != nil || s.Phase != PhaseNotFound {
		t.Fatalf("a run being started is observed as %+v (%v), want not found until it is", s, err)
	}

	close(release)
	if err := <-slowDone; err != nil {
		t.Fatal(err)
	}
	waitPhase(t, l, slow, PhaseRunning)
	// And once started, starting it again starts nothing.
	if err := l.Start(ctx, slow); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(readFile(t, record+".starts"), "\n") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // until both runners have recorded their start
	}
	for _, run := range []Run{slow, fast} {
		if err := l.Release(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	if got := starts(t, record); len(got) != 2 {
		t.Fatalf("runner started %d times for two runs: %v", len(got), got)
	}
}

// The user id a start took is its own while that start writes the run's
// directory, before any directory shows it: a second start meanwhile gets
// another id or none.
func TestLocalLauncher_aUserIDClaimedByAStartUnderWayIsNotHandedOutAgain(t *testing.T) {
	l := &LocalLauncher{Users: &RunUsers{First: 2_100_000_000, Count: 1}, BaseDir: t.TempDir()}
	run := func(name string) Run {
		return Run{Task: &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}, Name: name}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	first, err := l.claim(run("a"))
	if err != nil || first == nil || first.uid != 2_100_000_000 {
		t.Fatalf("first claim: %+v, %v", first, err)
	}
	if second, err := l.claim(run("b")); err == nil || !strings.Contains(err.Error(), "all 1 user ids for local runs are taken") {
		t.Fatalf("second claim while the first start is under way: %+v, %v; want every id taken", second, err)
	}
}
