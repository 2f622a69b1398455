package controllers

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/taskpods"
)

// withPodSettings sets the run's pod settings: the project's merged with
// the template's, checked against the cluster admin's lists. The check is
// here, where every run starts, and not only in the API: a Project or a
// Template applied with kubectl names an image or a service account that
// nobody allowed, and its task fails with the reason instead of running.
func (r *TaskReconciler) withPodSettings(ctx context.Context, task *bastionv1.Task, run launch.Run) (launch.Run, error) {
	template := &bastionv1.Template{}
	if err := r.getRef(ctx, task.Namespace, "template", task.Spec.TemplateRef.Name, template); err != nil {
		return run, err
	}
	project := &bastionv1.Project{}
	err := r.Get(ctx, client.ObjectKey{Name: bastionv1.ProjectOfNamespace(task.Namespace)}, project)
	if client.IgnoreNotFound(err) != nil {
		return run, err
	}
	// A namespace that is no project's has no project settings.
	run.Pod = taskpods.Merge(project.Spec.TaskPods, template.Spec.TaskPods)
	if err := r.TaskPods.Check(&run.Pod); err != nil {
		return run, fmt.Errorf("the task's pod settings (project %s, template %s): %w", project.Spec.DisplayName, template.Spec.DisplayName, err)
	}
	run.Image, _ = r.TaskPods.ImageOf(run.Pod.RunnerImage)
	return run, nil
}
