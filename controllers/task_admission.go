package controllers

import (
	"context"
	"fmt"
	"sort"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// admission decides which waiting tasks may start. Several workers
// reconcile tasks at once and the cache lags behind their writes, so the
// decision is taken under a lock and counts the tasks admitted here that
// the cache does not show as started yet.
type admission struct {
	mu       sync.Mutex
	admitted map[types.NamespacedName]bool
}

type admissionDecision struct {
	admitted        bool
	reason, message string
}

// admit applies the project's maxParallelTasks (first in, first out) and
// the global limit to a waiting task.
func (r *TaskReconciler) admit(ctx context.Context, task *bastionv1.Task) (admissionDecision, error) {
	r.admission.mu.Lock()
	defer r.admission.mu.Unlock()
	if r.admission.admitted == nil {
		r.admission.admitted = map[types.NamespacedName]bool{}
	}

	limit, err := r.projectLimit(ctx, task.Namespace)
	if err != nil {
		return admissionDecision{}, err
	}
	if limit == 0 && r.GlobalMaxParallel == 0 {
		// No limit, no queue: nothing to count or order.
		return admissionDecision{admitted: true}, nil
	}
	scope := []client.ListOption{client.InNamespace(task.Namespace)}
	if r.GlobalMaxParallel > 0 {
		scope = nil // the global limit needs every namespace's tasks
	}
	all := &bastionv1.TaskList{}
	// Read only, under the lock, once per waiting task per finished task:
	// copying every Task of the project each time is what would cost.
	if err := r.List(ctx, all, append(scope, client.UnsafeDisableDeepCopy)...); err != nil {
		return admissionDecision{}, err
	}

	var projectActive, globalActive int
	var queue []*bastionv1.Task
	seen := map[types.NamespacedName]bool{}
	for i := range all.Items {
		t := &all.Items[i]
		key := client.ObjectKeyFromObject(t)
		seen[key] = true
		// A task waiting for approval has not run yet: it holds no slot.
		active := t.Status.Status.Active() && !t.AwaitingApproval()
		if r.admission.admitted[key] {
			if active || t.Status.Status.Finished() {
				delete(r.admission.admitted, key) // the cache caught up
			} else {
				active = true
			}
		}
		if active {
			globalActive++
			if t.Namespace == task.Namespace {
				projectActive++
			}
		} else if t.Namespace == task.Namespace && queued(t) || key == client.ObjectKeyFromObject(task) {
			queue = append(queue, t)
		}
	}
	for key := range r.admission.admitted {
		if !seen[key] && key.Namespace == task.Namespace || (!seen[key] && r.GlobalMaxParallel > 0) {
			delete(r.admission.admitted, key) // deleted before the cache saw it start
		}
	}

	if r.GlobalMaxParallel > 0 && globalActive >= r.GlobalMaxParallel {
		return admissionDecision{reason: bastionv1.ReasonGlobalLimit,
			message: fmt.Sprintf("waiting: %d tasks are running, the manager's limit", globalActive)}, nil
	}
	if limit > 0 {
		// The message of a waiting task must not change while it waits
		// (no queue position, no count of free slots): every finished task
		// re-reconciles the project's waiting ones, and a new message is a
		// status write for each of them, so with hundreds waiting a project
		// spent its time rewriting them (issue #11, load test). Behind an
		// older waiting task it says so; at the head it says the slots are
		// taken, which stays true until it starts.
		free := limit - projectActive
		rank := aheadOf(queue, task)
		switch {
		case rank > 0 && rank >= free:
			return admissionDecision{reason: bastionv1.ReasonQueuedBehind,
				message: fmt.Sprintf("waiting: older tasks of this project are queued first (it runs at most %d at once)", limit)}, nil
		case free <= 0:
			return admissionDecision{reason: bastionv1.ReasonProjectLimit,
				message: fmt.Sprintf("waiting: %d of %d tasks of this project are running (max parallel tasks)", projectActive, limit)}, nil
		}
	}
	r.admission.admitted[client.ObjectKeyFromObject(task)] = true
	return admissionDecision{admitted: true}, nil
}

// queued reports whether a task stands in its project's queue: waiting,
// or so new that it has not been initialized yet (it arrived earlier than
// the tasks behind it, and must not be overtaken).
func queued(t *bastionv1.Task) bool {
	return t.Status.Status == bastionv1.TaskWaiting || (t.Status.Status == "" && t.Spec.Stop == "")
}

// projectLimit is the maxParallelTasks of the project that owns namespace.
func (r *TaskReconciler) projectLimit(ctx context.Context, namespace string) (int, error) {
	project := &bastionv1.Project{}
	name := bastionv1.ProjectOfNamespace(namespace)
	if err := r.Get(ctx, client.ObjectKey{Name: name}, project); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, nil // a namespace that is not a project's: no project limit
		}
		return 0, err
	}
	return int(project.Spec.MaxParallelTasks), nil
}

// sortFIFO orders tasks first in, first out.
func sortFIFO(tasks []*bastionv1.Task) {
	sort.SliceStable(tasks, func(i, j int) bool { return fifoBefore(tasks[i], tasks[j]) })
}

// fifoBefore orders tasks by creation, then id, then name.
func fifoBefore(a, b *bastionv1.Task) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	ai, _ := ids.FromLabels(a)
	bi, _ := ids.FromLabels(b)
	if ai != bi {
		return ai < bi
	}
	return a.Name < b.Name
}

// aheadOf counts the tasks of queue that come before task: its place in
// the queue, in one pass rather than a sort of the whole queue for each
// waiting task that is reconciled.
func aheadOf(queue []*bastionv1.Task, task *bastionv1.Task) int {
	n := 0
	for _, t := range queue {
		if (t.Namespace != task.Namespace || t.Name != task.Name) && fifoBefore(t, task) {
			n++
		}
	}
	return n
}
