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
	r.addTaskEvent(ctx, task, store.Event{Username: task.Spec.User}, what)
}

// taskEventBy records what a user did to a task (an approval, a
// rejection) under that user's name.
func (r *TaskReconciler) taskEventBy(ctx context.Context, task *bastionv1.Task, user *bastionv1.User, what string) {
	id, _ := ids.FromLabels(user)
	r.addTaskEvent(ctx, task, store.Event{UserID: id, Username: user.Spec.Username}, what)
}

// addTaskEvent records e, completed with the task's project and template.
func (r *TaskReconciler) addTaskEvent(ctx context.Context, task *bastionv1.Task, e store.Event, what string) {
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
	e.ProjectID, e.ProjectName = projectID, project.Spec.DisplayName
	e.ObjectType, e.ObjectID, e.ObjectName = "task", taskID, name
	e.Description = fmt.Sprintf("Task %d of %s %s", taskID, name, what)
	_, err := r.Store.AddEvent(ctx, e)
	if err != nil {
		logf.FromContext(ctx).Error(err, "recording a task event", "task", task.Name)
	}
}
