package apiserver_test

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/apiserver"
	"github.com/bastion-dev/bastion/internal/runproto"
)

// A runner's facts, read against a Task that was deleted and made again
// under the same name meanwhile (a GitOps re-apply), never land on the new
// one: the endpoint checks that the uid it read is still the task's.
func TestRunnerFacts_neverLandOnATaskMadeAgainUnderTheSameName(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	ctx := context.Background()
	old := waitingTask(t, e, p.ns, "again")
	if err := e.K8s.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() (bool, string) {
		err := e.K8s.Get(ctx, client.ObjectKeyFromObject(old), &bastionv1.Task{})
		return apierrors.IsNotFound(err), "the first task is still there"
	})
	fresh := waitingTask(t, e, p.ns, "again")

	err := apiserver.RecordRunFacts(ctx, e.K8s, old, runproto.Batch{Exit: &runproto.Exit{Code: 0}}, 0)
	if !apierrors.IsConflict(err) {
		t.Fatalf("facts of the deleted task's run were written with %v, want a conflict", err)
	}
	got := &bastionv1.Task{}
	if err := e.K8s.Get(ctx, client.ObjectKeyFromObject(fresh), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Run != nil {
		t.Errorf("the new task carries the old run's facts: %+v", got.Status.Run)
	}
}

// The reconciler makes status.run, empty, when it launches a run
// (controllers TestTaskReconciler_createsTheExpectedJobAndFollowsItToSuccess):
// a launched task's first facts then go as the JSON patch that tests the
// uid, with no read of the Task before it.
func TestRunnerFacts_aLaunchedTasksFirstFactsReadNothing(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	ctx := context.Background()
	task := waitingTask(t, e, p.ns, "launched")
	if err := e.K8s.Status().Patch(ctx, task, client.RawPatch(types.MergePatchType, []byte(`{"status":{"run":{}}}`))); err != nil {
		t.Fatal(err)
	}
	launched := &bastionv1.Task{}
	if err := e.K8s.Get(ctx, client.ObjectKeyFromObject(task), launched); err != nil || launched.Status.Run == nil {
		t.Fatalf("the launched task's status.run = %+v (%v), want it empty", launched.Status.Run, err)
	}
	counting := &readCounter{Client: e.K8s}
	first := runproto.Batch{Phase: runproto.PhaseRunning, Commit: &runproto.Commit{Hash: "abc", Message: "first"}}
	if err := apiserver.RecordRunFacts(ctx, counting, launched, first, 0); err != nil {
		t.Fatal(err)
	}
	if counting.reads.Load() != 0 {
		t.Errorf("the first facts of a launched task read the apiserver %d times first, want none", counting.reads.Load())
	}
	got := &bastionv1.Task{}
	if err := e.K8s.Get(ctx, client.ObjectKeyFromObject(task), got); err != nil {
		t.Fatal(err)
	}
	if run := got.Status.Run; run == nil || run.Phase != runproto.PhaseRunning || run.Commit == nil || run.Commit.Hash != "abc" {
		t.Fatalf("status.run = %+v, want the phase and the commit", got.Status.Run)
	}
}

// waitingTask creates the Task name whose template never comes: it waits,
// is never prepared, and nothing else writes it.
func waitingTask(t *testing.T, e *apiEnv, ns, name string) *bastionv1.Task {
	t.Helper()
	task := &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: "not-yet"}}}
	if err := e.K8s.Create(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	return task
}

// Once a task has facts, the next ones go as a JSON patch that tests the
// uid in the same request (no read before it): facts of a task read
// before it was deleted and made again are refused the same way, whether
// the new task has facts of its own or none, and a live task's land.
func TestRunnerFacts_afterTheFirstAreTestedAgainstTheUIDInTheirOwnPatch(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	ctx := context.Background()
	reread := func(task *bastionv1.Task) *bastionv1.Task {
		t.Helper()
		got := &bastionv1.Task{}
		if err := e.K8s.Get(ctx, client.ObjectKeyFromObject(task), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	running := runproto.Batch{Phase: runproto.PhaseRunning}

	live := waitingTask(t, e, p.ns, "live-facts")
	if err := apiserver.RecordRunFacts(ctx, e.K8s, live, running, 0); err != nil {
		t.Fatal(err)
	}
	live = reread(live)
	counting := &readCounter{Client: e.K8s}
	if err := apiserver.RecordRunFacts(ctx, counting, live, runproto.Batch{Exit: &runproto.Exit{Code: 4, Message: "bye"}}, 0); err != nil {
		t.Fatalf("the exit of a live task with facts: %v", err)
	}
	if counting.reads.Load() != 0 {
		t.Errorf("the exit of a task with facts read the apiserver %d times first, want none", counting.reads.Load())
	}
	if got := reread(live).Status.Run; got == nil || got.Phase != runproto.PhaseRunning || got.Exit == nil || got.Exit.Code != 4 || got.Exit.Message != "bye" {
		t.Fatalf("the live task's facts = %+v, want its phase kept and the exit added", got)
	}

	// The endpoint's own first write is enough, though its cache does not
	// show it yet: the second fact, read against the task without facts,
	// goes as the JSON patch and keeps the first.
	stale := waitingTask(t, e, p.ns, "stale-cache")
	state := new(apiserver.RunnerTaskState)
	if err := state.Record(ctx, e.K8s, stale, runproto.Batch{Phase: runproto.PhaseRunning, Commit: &runproto.Commit{Hash: "abc", Message: "first"}}, 0); err != nil {
		t.Fatal(err)
	}
	counting = &readCounter{Client: e.K8s}
	if err := state.Record(ctx, counting, stale, runproto.Batch{Exit: &runproto.Exit{Code: 3}}, 0); err != nil {
		t.Fatal(err)
	}
	if counting.reads.Load() != 0 {
		t.Errorf("the second fact, after the endpoint's own first, read the apiserver %d times first, want none", counting.reads.Load())
	}
	if got := reread(stale).Status.Run; got == nil || got.Phase != runproto.PhaseRunning || got.Commit == nil || got.Commit.Hash != "abc" ||
		got.Exit == nil || got.Exit.Code != 3 {
		t.Errorf("facts after a second fact read against a stale copy = %+v, want phase, commit and exit", got)
	}

	for _, freshHasFacts := range []bool{false, true} {
		name := fmt.Sprintf("again-%v", freshHasFacts)
		old := waitingTask(t, e, p.ns, name)
		if err := apiserver.RecordRunFacts(ctx, e.K8s, old, running, 0); err != nil {
			t.Fatal(err)
		}
		old = reread(old) // with its facts, as the cache would have it
		if err := e.K8s.Delete(ctx, old); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, func() (bool, string) {
			err := e.K8s.Get(ctx, client.ObjectKeyFromObject(old), &bastionv1.Task{})
			return apierrors.IsNotFound(err), "the first task is still there"
		})
		fresh := waitingTask(t, e, p.ns, name)
		if freshHasFacts {
			if err := apiserver.RecordRunFacts(ctx, e.K8s, fresh, runproto.Batch{Phase: runproto.PhaseWaitingConfirmation}, 0); err != nil {
				t.Fatal(err)
			}
		}
		before := reread(fresh).Status.Run

		err := apiserver.RecordRunFacts(ctx, e.K8s, old, runproto.Batch{Exit: &runproto.Exit{Code: 0}}, 0)
		if !apierrors.IsConflict(err) {
			t.Fatalf("fresh task with facts %v: the old run's exit was written with %v, want a conflict", freshHasFacts, err)
		}
		if after := reread(fresh).Status.Run; !reflect.DeepEqual(after, before) {
			t.Errorf("fresh task with facts %v: its facts went from %+v to %+v", freshHasFacts, before, after)
		}
	}
}

// readCounter counts the reads made through it.
type readCounter struct {
	client.Client
	reads atomic.Int32
}

func (c *readCounter) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.reads.Add(1)
	return c.Client.Get(ctx, key, obj, opts...)
}
