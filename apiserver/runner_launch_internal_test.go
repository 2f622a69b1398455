package apiserver

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// A run's first facts that come before the write recording its launch
// wait for it (the facts then patch the status.run it made); for a name
// that is another task's now, or a launch that does not come, they wait
// no longer than they must.
func TestAwaitLaunch_waitsForTheLaunchWriteOfTheSameTaskOnly(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := bastionv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	task := &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: "p", Name: "t", UID: "first"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(task.DeepCopy()).WithStatusSubresource(&bastionv1.Task{}).Build()
	e := newRunnerEvents(Options{Client: c, Reader: c})
	ctx := context.Background()

	go func() {
		time.Sleep(30 * time.Millisecond)
		launched := &bastionv1.Task{}
		if err := c.Get(ctx, clientKey(task), launched); err != nil {
			return
		}
		launched.Status.Run = &bastionv1.TaskRun{}
		_ = c.Status().Update(ctx, launched)
	}()
	if got := e.awaitLaunch(ctx, task); got == nil || got.Status.Run == nil {
		t.Fatalf("awaitLaunch = %+v, want the task with its launch", got)
	}

	other := task.DeepCopy()
	other.UID = "made-again"
	start := time.Now()
	if got := e.awaitLaunch(ctx, other); got != nil || time.Since(start) > launchWait/2 {
		t.Fatalf("for another task of the name: %v after %s, want nil at once", got, time.Since(start))
	}

	notYet := &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: "p", Name: "never", UID: "never"}}
	if err := c.Create(ctx, notYet.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if got := e.awaitLaunch(ctx, notYet); got != nil || time.Since(start) > 2*launchWait {
		t.Fatalf("with no launch: %v after %s, want nil within %s", got, time.Since(start), launchWait)
	}
}
