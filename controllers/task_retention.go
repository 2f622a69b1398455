package controllers

import (
	"context"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// TaskTemplateField indexes Tasks by the name of their template.
const TaskTemplateField = bastionv1.IndexTaskTemplate

// DefaultTaskKeepLast is how many finished Tasks of a template are kept as
// objects when neither the template nor the manager says otherwise. etcd
// is not a history database: the output store keeps every task's lines
// and summary (issue #4), so pruned tasks stay in the history.
const DefaultTaskKeepLast = 100

func indexTaskTemplate(obj client.Object) []string {
	return []string{obj.(*bastionv1.Task).Spec.TemplateRef.Name}
}

// pruneFinished deletes the finished Tasks of a template beyond its
// keep-last count, oldest first. Tasks that are not finished, or not done
// finishing, are never touched.
func (r *TaskReconciler) pruneFinished(ctx context.Context, task *bastionv1.Task) error {
	template := &bastionv1.Template{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: task.Spec.TemplateRef.Name}, template); err != nil {
		return client.IgnoreNotFound(err)
	}
	keep := r.KeepLast
	if template.Spec.KeepLast != nil {
		keep = int(*template.Spec.KeepLast)
	}
	if keep <= 0 {
		keep = DefaultTaskKeepLast
	}

	list := &bastionv1.TaskList{}
	// Read only (sorted as pointers, deleted by key): copying every Task of
	// the template on each finished task is what costs under load.
	if err := r.List(ctx, list, client.InNamespace(task.Namespace), client.MatchingFields{TaskTemplateField: template.Name},
		client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	var finished []*bastionv1.Task
	for i := range list.Items {
		t := &list.Items[i]
		if t.Status.Status.Finished() && t.DeletionTimestamp.IsZero() {
			finished = append(finished, t)
		}
	}
	if len(finished) <= keep {
		return nil
	}
	sort.Slice(finished, func(i, j int) bool { return newerTask(finished[i], finished[j]) })
	for _, old := range finished[keep:] {
		if old.Name != task.Name && controllerutil.ContainsFinalizer(old, TaskFinalizer) {
			// Still finishing (its run ending, its summary not saved yet):
			// pruned now, it would leave no history. Its own finish or a
			// later one prunes it.
			continue
		}
		// A fresh object with the key: the listed one belongs to the cache.
		victim := &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: old.Namespace, Name: old.Name}}
		if err := r.Delete(ctx, victim, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return err
		}
		log.FromContext(ctx).V(1).Info("pruned finished task", "task", old.Name, "keepLast", keep)
	}
	return nil
}

// newerTask orders tasks newest first: by id when both have one (ids follow
// creation), else by creation time, then name.
func newerTask(a, b *bastionv1.Task) bool {
	ai, aok := ids.FromLabels(a)
	bi, bok := ids.FromLabels(b)
	if aok && bok && ai != bi {
		return ai > bi
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return a.Name > b.Name
}
