package controllers

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

// taskEvent records a task's start or result in the project's activity
// log (GET /project/{id}/events/last). A failure is logged, not returned:
// the task's progress must never wait on its log entry.
//
// A start is recorded when the task is admitted; if writing that status
// then fails and the reconcile repeats, the entry may appear twice. A
// result is recorded once the summary is saved, in the same idempotent
// finish step, with the same caveat. Both are rare, and a duplicate line
// in an activity log is better than a lost one.
func (r *TaskReconciler) taskEvent(ctx context.Context, task *bastionv1.Task, what string) {
	if r.Store == nil {
		return
	}
	taskID, _ := ids.FromLabels(task)
	project := &bastionv1.Project{}
	if err := r.Get(ctx, client.ObjectKey{Name: bastionv1.ProjectOfNamespace(task.Namespace)}, project); err != nil {
		return
	}
	projectID, _ := ids.FromLabels(project)
	template := &bastionv1.Template{}
	name := task.Spec.TemplateRef.Name
	if err := r.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: name}, template); err == nil {
		name = template.Spec.DisplayName
	}
	_, err := r.Store.AddEvent(ctx, store.Event{
		ProjectID: projectID, ProjectName: project.Spec.DisplayName,
		ObjectType: "task", ObjectID: taskID, ObjectName: name, Username: task.Spec.User,
		Description: fmt.Sprintf("Task %d of %s %s", taskID, name, what),
	})
	if err != nil {
		logf.FromContext(ctx).Error(err, "recording a task event", "task", task.Name)
	}
}
