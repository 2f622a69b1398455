package controllers

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/gitops"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

// Who deletes what. An object deleted by kubectl, a GitOps tool or the API
// is held by CascadeFinalizer until its own reconciler has dealt with what
// depends on it, so that both doors do the same and `bastion dev` (which
// runs no garbage collector) does what a cluster does:
//
//   - Template: its Schedules first (so none starts a task meanwhile), then
//     its Tasks (each Task's finalizer force-stops a running run, as
//     Semaphore's template delete takes its tasks along), then, once no Task
//     is left, the stored output and summaries of its tasks.
//   - Integration: its IntegrationAliases (an alias that reaches nothing is
//     a dead credential). Tasks it started stay.
//   - View: its templates move to no view (Semaphore's ON DELETE SET NULL).
//   - Project: its namespace, and with it everything in the project
//     (ProjectReconciler).

// cascadeRecheck is how soon a cascade that waits for Tasks to go looks
// again: a Task goes once its own finalizer has released its run.
const cascadeRecheck = 250 * time.Millisecond

// finalize runs the kind's cascade for an object being deleted and then
// lets it go.
func (r *ResourceReconciler[T]) finalize(ctx context.Context, obj T) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, bastionv1.CascadeFinalizer) {
		return ctrl.Result{}, nil
	}
	done, err := r.Kind.Cascade(ctx, r, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !done {
		return ctrl.Result{RequeueAfter: cascadeRecheck}, nil
	}
	return r.patchFinalizer(ctx, obj, false)
}

// patchFinalizer adds or removes CascadeFinalizer.
func (r *ResourceReconciler[T]) patchFinalizer(ctx context.Context, obj T, add bool) (ctrl.Result, error) {
	return patchCascadeFinalizer(ctx, r.Client, obj, add)
}

// patchCascadeFinalizer adds or removes CascadeFinalizer. The patch
// carries the read resourceVersion: it replaces the whole list and must
// not drop a finalizer someone else added meanwhile; a conflict is read
// again.
func patchCascadeFinalizer(ctx context.Context, c client.Client, obj client.Object, add bool) (ctrl.Result, error) {
	before := obj.DeepCopyObject().(client.Object)
	changed := controllerutil.AddFinalizer(obj, bastionv1.CascadeFinalizer)
	if !add {
		changed = controllerutil.RemoveFinalizer(obj, bastionv1.CascadeFinalizer)
	}
	if !changed {
		return ctrl.Result{}, nil
	}
	err := c.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsConflict(err) {
		return ctrl.Result{Requeue: true}, nil
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// templateCascade deletes a template's schedules, tasks and stored tasks.
type templateCascade struct{ store store.Store }

func (c templateCascade) run(ctx context.Context, r *ResourceReconciler[*bastionv1.Template], t *bastionv1.Template) (bool, error) {
	schedules := &bastionv1.ScheduleList{}
	if err := r.List(ctx, schedules, client.InNamespace(t.Namespace)); err != nil {
		return false, err
	}
	for i := range schedules.Items {
		if sch := &schedules.Items[i]; sch.Spec.TemplateRef.Name == t.Name {
			if err := deleteOnce(ctx, r.Client, sch); err != nil {
				return false, err
			}
		}
	}
	tasks := &bastionv1.TaskList{}
	if err := r.List(ctx, tasks, client.InNamespace(t.Namespace), client.MatchingFields{TaskTemplateField: t.Name}); err != nil {
		return false, err
	}
	for i := range tasks.Items {
		if err := deleteOnce(ctx, r.Client, &tasks.Items[i]); err != nil {
			return false, err
		}
	}
	if len(tasks.Items) > 0 {
		// The store is cleaned once every Task is gone: a task that was
		// finishing may still save its summary until then.
		return false, nil
	}
	return true, c.deleteStored(ctx, r.Client, t)
}

// deleteStored deletes the output and summary of every stored task of the
// template, the ones retention pruned included.
func (c templateCascade) deleteStored(ctx context.Context, reader client.Reader, t *bastionv1.Template) error {
	templateID, ok := ids.FromLabels(t)
	if c.store == nil || !ok {
		return nil
	}
	if shared, err := idShared(ctx, reader, t, &bastionv1.TemplateList{}); err != nil || shared {
		return err
	}
	projectID, err := projectIDOf(ctx, reader, t.Namespace)
	if err != nil || projectID == 0 {
		return err
	}
	const page = 500
	for {
		summaries, err := c.store.ListTaskSummaries(ctx, projectID, store.SummaryFilter{TemplateID: templateID}, 0, page)
		if err != nil {
			return err
		}
		for _, s := range summaries {
			if err := c.store.DeleteTask(ctx, store.TaskKey{ProjectID: projectID, TaskID: s.TaskID}); err != nil {
				return err
			}
		}
		if len(summaries) < page {
			return nil
		}
	}
}

// idShared reports whether another object of obj's kind in its namespace
// carries obj's id label. Ids travel in labels and an object applied with
// one keeps it, so a kubectl user can give a new object another's id: its
// deletion must not take the other's history along. list is an empty list
// of the kind.
func idShared(ctx context.Context, reader client.Reader, obj client.Object, list client.ObjectList) (bool, error) {
	err := reader.List(ctx, list, client.InNamespace(obj.GetNamespace()),
		client.MatchingLabels{bastionv1.LabelID: obj.GetLabels()[bastionv1.LabelID]})
	if err != nil {
		return false, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return false, err
	}
	for _, item := range items {
		if o, ok := item.(client.Object); ok && o.GetUID() != obj.GetUID() {
			return true, nil
		}
	}
	return false, nil
}

// projectIDOf is the id of the project that owns namespace ns; 0 when
// there is none (a namespace of no project) or it has no id yet.
func projectIDOf(ctx context.Context, reader client.Reader, ns string) (int64, error) {
	project := &bastionv1.Project{}
	if err := reader.Get(ctx, client.ObjectKey{Name: bastionv1.ProjectOfNamespace(ns)}, project); err != nil {
		return 0, client.IgnoreNotFound(err)
	}
	id, _ := ids.FromLabels(project)
	return id, nil
}

// integrationCascade deletes an integration's aliases.
func integrationCascade(ctx context.Context, r *ResourceReconciler[*bastionv1.Integration], in *bastionv1.Integration) (bool, error) {
	aliases := &bastionv1.IntegrationAliasList{}
	if err := r.List(ctx, aliases, client.InNamespace(in.Namespace)); err != nil {
		return false, err
	}
	for i := range aliases.Items {
		if a := &aliases.Items[i]; a.Spec.IntegrationRef != nil && a.Spec.IntegrationRef.Name == in.Name {
			if err := deleteOnce(ctx, r.Client, a); err != nil {
				return false, err
			}
		}
	}
	return true, nil
}

// viewCascade moves the view's templates to no view. A template that
// Flux, Argo CD or another manager keeps is left as its source says: the
// manager would put the reference back at its next sync, and the two would
// fight over the field. Its reference to a view that no longer exists
// reads as no view in the API and the console, and a view made again
// under that name takes the template back, as the source means.
func viewCascade(ctx context.Context, r *ResourceReconciler[*bastionv1.View], view *bastionv1.View) (bool, error) {
	templates := &bastionv1.TemplateList{}
	if err := r.List(ctx, templates, client.InNamespace(view.Namespace)); err != nil {
		return false, err
	}
	for i := range templates.Items {
		t := &templates.Items[i]
		if t.Spec.ViewRef == nil || t.Spec.ViewRef.Name != view.Name {
			continue
		}
		if _, managed := gitops.Of(t); managed {
			continue
		}
		before := t.DeepCopy()
		t.Spec.ViewRef = nil
		// Locked: a template edited meanwhile is read again (not done
		// yet), never overwritten with the cached copy.
		err := r.Patch(ctx, t, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(err) {
			return false, nil
		}
		if client.IgnoreNotFound(err) != nil {
			return false, err
		}
	}
	return true, nil
}

// deleteOnce deletes obj unless its deletion has begun.
func deleteOnce(ctx context.Context, c client.Client, obj client.Object) error {
	if !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	return client.IgnoreNotFound(c.Delete(ctx, obj))
}

// deleteStoredOutput deletes what the store holds of a task a user
// deleted: its output, and its summary once it finished. (Retention's
// prune keeps both: reconcileDelete does not call this for a pruned task.)
func (r *TaskReconciler) deleteStoredOutput(ctx context.Context, task *bastionv1.Task) error {
	taskID, ok := ids.FromLabels(task)
	if r.Store == nil || !ok {
		return nil
	}
	projectID, err := projectIDOf(ctx, r.Client, task.Namespace)
	if err != nil || projectID == 0 {
		return err
	}
	key := store.TaskKey{ProjectID: projectID, TaskID: taskID}
	summary, err := r.Store.TaskSummary(ctx, key)
	if err == nil && !ownSummary(task, summary) {
		// Another task's history: the id label was another's (see idShared).
		return nil
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return r.Store.DeleteTask(ctx, key)
}

// ownSummary tells whether summary is task's own. The store records no
// uid; it records when the task was made and when it ended (saveSummary),
// to the second as the Task has them. An unfinished task has no summary
// yet, so one under its id is always another's.
func ownSummary(task *bastionv1.Task, summary store.TaskSummary) bool {
	end := task.Status.End
	return task.Status.Status.Finished() && end != nil && summary.End != nil &&
		summary.End.Unix() == end.Unix() && summary.Created.Unix() == task.CreationTimestamp.Unix()
}
