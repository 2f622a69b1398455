package apiserver_test

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
