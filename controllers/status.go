package controllers

import (
	"context"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/cachewait"
)

// writeStatus is the one way a reconciler writes the status of the object
// it reconciles. It is deferred right after the reconciler takes a copy of
// the object as read:
//
//	before := obj.DeepCopy()
//	defer writeStatus(ctx, r.Client, before, obj, &result, &err)
//
// Nothing is sent when the status did not change. Otherwise the status is
// sent as a merge patch carrying the resourceVersion that was read (an
// optimistic lock), so a reconcile that worked from a stale copy can never
// overwrite newer state. A conflict is therefore expected and is not an
// error: the object is simply reconciled again from the newer copy that
// the watch brings. An object deleted meanwhile needs nothing more.
func writeStatus(ctx context.Context, c client.Client, before, obj client.Object, result *ctrl.Result, err *error) {
	if equality.Semantic.DeepEqual(statusOf(before), statusOf(obj)) {
		return
	}
	patchErr := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	switch {
	case patchErr == nil:
		// Returned once the cache has the write: a reconcile of the object
		// queued meanwhile (a watch event of someone else's write, a
		// launcher's notice) would otherwise work from the copy before it,
		// and its own write meet a conflict (docs/benchmarks.md, "Seventh
		// round"). The patch's answer carries the written resourceVersion.
		_ = cachewait.Updated(ctx, c, obj, statusCacheWait)
	case apierrors.IsNotFound(patchErr):
	case apierrors.IsConflict(patchErr):
		if *err == nil {
			*result = ctrl.Result{Requeue: true}
		}
	case *err == nil:
		*err = patchErr
	}
}

// statusCacheWait bounds writeStatus's wait for the cache, which takes a
// millisecond or two: past it the cache lags (a watch is down), and at
// worst a reconcile works from the older copy, which the optimistic lock
// catches. Short, since it holds a reconcile worker.
const statusCacheWait = 250 * time.Millisecond

// statusOf is the Status field of one of our kinds (every kind has one).
func statusOf(obj client.Object) any {
	v := reflect.ValueOf(obj)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if f := v.FieldByName("Status"); f.IsValid() {
		return f.Interface()
	}
	return nil
}

// readyObject is one of our kinds: every one has a Ready condition and an
// observedGeneration in its status.
type readyObject interface {
	client.Object
	bastionv1.ReadyStatus
}

// setReady sets obj's Ready condition, and records that the status now
// describes obj's current generation: a client that sees
// status.observedGeneration equal metadata.generation knows that Ready
// speaks of the spec it reads.
func setReady(obj readyObject, status metav1.ConditionStatus, reason, message string) {
	*obj.StatusObservedGeneration() = obj.GetGeneration()
	meta.SetStatusCondition(obj.StatusConditions(), metav1.Condition{
		Type:               bastionv1.ConditionReady,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: obj.GetGeneration(),
	})
}

// readyOnError is deferred after writeStatus (so that it runs before it):
// a reconcile that failed says why in Ready.
func readyOnError(obj readyObject, err *error) {
	if *err != nil {
		setReady(obj, metav1.ConditionFalse, bastionv1.ReasonReconcileError, (*err).Error())
	}
}
