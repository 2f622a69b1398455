package controllers

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers/launch"
)

// A new task's first reconcile adds the finalizer and goes on from the
// patched task: the same reconcile starts the run (its Job here) and
// writes the status, without waiting for the watch to bring the task back
// (issue #22). The status write is checked against the patched task's
// resourceVersion, so it succeeds. The objects come from a fake client:
// the suite's manager would reconcile the task too and race this one.
func TestTaskReconciler_theFirstReconcileAddsTheFinalizerAndStartsTheRun(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{bastionv1.AddToScheme, corev1.AddToScheme, batchv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	ns := bastionv1.ProjectNamespace("first")
	key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "none",
		Labels: map[string]string{bastionv1.LabelKeyType: string(bastionv1.KeyTypeNone)}}}
	objects := []client.Object{
		&bastionv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "first"}},
		key,
		&bastionv1.Repository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "code"},
			Spec: bastionv1.RepositorySpec{GitURL: "https://git.example.com/code.git", SSHKeyRef: bastionv1.ObjectRef{Name: "none"}}},
		&bastionv1.Environment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "empty"}},
		&bastionv1.Template{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "script"}, Spec: bastionv1.TemplateSpec{
			App: bastionv1.AppBash, Playbook: "run.sh",
			RepositoryRef: bastionv1.ObjectRef{Name: "code"}, EnvironmentRef: bastionv1.ObjectRef{Name: "empty"}}},
		&bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t1"},
			Spec: bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: "script"}}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).WithStatusSubresource(&bastionv1.Task{}).Build()
	r := &TaskReconciler{Client: c, APIReader: c, Launcher: &launch.JobLauncher{Client: c, Options: launch.DefaultJobOptions()}}

	ctx := context.Background()
	taskKey := client.ObjectKey{Namespace: ns, Name: "t1"}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: taskKey}); err != nil {
		t.Fatalf("the first reconcile: %v", err)
	}
	task := &bastionv1.Task{}
	if err := c.Get(ctx, taskKey, task); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.ContainsFinalizer(task, TaskFinalizer) {
		t.Fatalf("finalizers %v, want %s", task.Finalizers, TaskFinalizer)
	}
	if task.Status.Status != bastionv1.TaskStarting || task.Status.RunName == "" {
		t.Fatalf("after one reconcile the task is %q (run %q); want starting, with its run", task.Status.Status, task.Status.RunName)
	}
	job := &batchv1.Job{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: task.Status.RunName}, job); err != nil {
		t.Fatalf("the first reconcile started no Job: %v", err)
	}
}
