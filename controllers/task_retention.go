package controllers

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
// keep-last count, oldest first, and reports whether task was one of
// them. Tasks that are not finished, or not done finishing, are never
// touched. A pruned task's history stays in the store (the History
// screens show it): each is marked pruned before it is deleted, so its
// history finalizer lets go without deleting its stored rows.
func (r *TaskReconciler) pruneFinished(ctx context.Context, task *bastionv1.Task) (prunedSelf bool, err error) {
	template := &bastionv1.Template{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: task.Spec.TemplateRef.Name}, template); err != nil {
		return false, client.IgnoreNotFound(err)
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
		return false, err
	}
	var finished []*bastionv1.Task
	for i := range list.Items {
		t := &list.Items[i]
		if t.Status.Status.Finished() && t.DeletionTimestamp.IsZero() {
			finished = append(finished, t)
		}
	}
	if len(finished) <= keep {
		return false, nil
	}
	sort.Slice(finished, func(i, j int) bool { return newerTask(finished[i], finished[j]) })
	for _, old := range finished[keep:] {
		if old.Name != task.Name && controllerutil.ContainsFinalizer(old, TaskFinalizer) {
			// Still finishing (its run ending, its summary not saved yet):
			// pruned now, it would leave no history. Its own finish or a
			// later one prunes it.
			continue
		}
		if claimed, done := r.pruned.claim(old.UID, r.now()); !claimed {
			// Pruned lately, and the cache does not show it yet.
			if old.UID == task.UID {
				if !done {
					// Another finish is pruning this very task: whether
					// it gets marked pruned (and so whether the history
					// finalizer goes) is not known yet.
					return false, fmt.Errorf("task %s is being pruned by another finish", old.Name)
				}
				prunedSelf = true
			}
			continue
		}
		if err := r.prune(ctx, old.Namespace, old.Name, old.UID); err != nil {
			r.pruned.release(old.UID)
			return false, err
		}
		r.pruned.done(old.UID)
		prunedSelf = prunedSelf || old.UID == task.UID
		log.FromContext(ctx).V(1).Info("pruned finished task", "task", old.Name, "keepLast", keep)
	}
	return prunedSelf, nil
}

// prune marks the task with uid pruned, then deletes it. The mark goes
// first (a delete cannot write it): deleted unmarked, the task's history
// finalizer would delete its history. Both steps name the uid, so a task
// made again under the name is neither marked nor deleted.
func (r *TaskReconciler) prune(ctx context.Context, namespace, name string, uid types.UID) error {
	// A fresh object with the key: the listed one belongs to the cache.
	victim := &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	mark := fmt.Sprintf(`{"metadata":{"uid":%q,"annotations":{%q:"true"}}}`, uid, bastionv1.AnnotationPruned)
	err := r.Patch(ctx, victim, client.RawPatch(types.MergePatchType, []byte(mark)))
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsInvalid(err) {
		return nil // gone, or another task now has the name (uid immutable)
	}
	if err != nil {
		return err
	}
	err = r.Delete(ctx, victim, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if apierrors.IsConflict(err) {
		return nil
	}
	return client.IgnoreNotFound(err)
}

// prunedSet is the tasks this reconciler has pruned lately. The task
// workers finish tasks side by side, and each finish lists its template's
// tasks from the cache: without it, every worker finishing a task of a
// template over its keep-last count marked and deleted the same oldest
// tasks again before the cache showed them deleted, each time two
// requests to the kube-apiserver (ten times over in a burst of 20, issue
// #22). A claim lasts pruneMemory: a task that the cache still shows
// finished, and not deleting, after that is pruned again.
type prunedSet struct {
	mu    sync.Mutex
	uids  map[types.UID]pruneClaim
	swept time.Time // the last time expired claims were dropped
}

type pruneClaim struct {
	at   time.Time
	done bool // the task is marked pruned and its delete was sent
}

// pruneMemory is how long a prune is remembered.
const pruneMemory = time.Minute

// claim records uid as being pruned now, unless it was claimed lately;
// then done says whether that prune was made.
func (p *prunedSet) claim(uid types.UID, now time.Time) (claimed, done bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.swept) >= pruneMemory {
		for u, c := range p.uids {
			if now.Sub(c.at) >= pruneMemory {
				delete(p.uids, u)
			}
		}
		p.swept = now
	}
	if c, ok := p.uids[uid]; ok && now.Sub(c.at) < pruneMemory {
		return false, c.done
	}
	if p.uids == nil {
		p.uids = map[types.UID]pruneClaim{}
	}
	p.uids[uid] = pruneClaim{at: now}
	return true, false
}

// done records that the prune of uid was made.
func (p *prunedSet) done(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.uids[uid]; ok {
		c.done = true
		p.uids[uid] = c
	}
}

// release forgets a prune that failed, for the next finish to try again.
func (p *prunedSet) release(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.uids, uid)
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
