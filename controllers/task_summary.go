package controllers

import (
	"cmp"
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

// saveSummary records a finished task in the output store, where the
// history keeps it after retention deletes the Task object. It runs in
// finish, before the finalizer goes, so no finished task is pruned
// without its summary.
func (r *TaskReconciler) saveSummary(ctx context.Context, task *bastionv1.Task) error {
	if r.Store == nil {
		return nil
	}
	taskID, ok := ids.FromLabels(task)
	if !ok {
		return fmt.Errorf("task %s has no id yet", task.Name)
	}
	project := &bastionv1.Project{}
	if err := r.Get(ctx, client.ObjectKey{Name: bastionv1.ProjectOfNamespace(task.Namespace)}, project); err != nil {
		return client.IgnoreNotFound(err) // not a project's task: nothing to keep
	}
	projectID, ok := ids.FromLabels(project)
	if !ok {
		return fmt.Errorf("project %s has no id yet", project.Name)
	}
	s := store.TaskSummary{
		ProjectID: projectID, TaskID: taskID,
		Status: string(task.Status.Status), Message: task.Status.Message, Version: task.Status.Version,
		CommitHash: task.Status.CommitHash, CommitMessage: task.Status.CommitMessage, UserName: task.Spec.User,
		Created: task.CreationTimestamp.Time,
	}
	if task.Status.Start != nil {
		start := task.Status.Start.Time
		s.Start = &start
	}
	if task.Status.End != nil {
		end := task.Status.End.Time
		s.End = &end
	}
	template := &bastionv1.Template{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: task.Spec.TemplateRef.Name}, template); err == nil {
		s.TemplateID, _ = ids.FromLabels(template)
		s.TplType, s.TplApp, s.TplAlias = string(template.Spec.Type), string(template.Spec.App), template.Spec.DisplayName
		s.TplPlaybook = cmp.Or(task.Spec.Playbook, template.Spec.Playbook)
	} else if client.IgnoreNotFound(err) != nil {
		return err
	}
	s.BuildTaskID = r.refID(ctx, task.Namespace, task.Spec.BuildTaskRef, &bastionv1.Task{})
	s.ScheduleID = r.refID(ctx, task.Namespace, task.Spec.ScheduleRef, &bastionv1.Schedule{})
	s.IntegrationID = r.refID(ctx, task.Namespace, task.Spec.IntegrationRef, &bastionv1.Integration{})
	if err := r.Store.PutTaskSummary(ctx, s); err != nil {
		return fmt.Errorf("saving the summary of task %s: %w", task.Name, err)
	}
	return nil
}

// refID is the id of a referenced object, or 0.
func (r *TaskReconciler) refID(ctx context.Context, ns string, ref *bastionv1.ObjectRef, obj client.Object) int64 {
	if ref == nil {
		return 0
	}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, obj); err != nil {
		return 0
	}
	id, _ := ids.FromLabels(obj)
	return id
}
