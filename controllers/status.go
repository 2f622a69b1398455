package controllers

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	case patchErr == nil, apierrors.IsNotFound(patchErr):
	case apierrors.IsConflict(patchErr):
		if *err == nil {
			*result = ctrl.Result{Requeue: true}
		}
	case *err == nil:
		*err = patchErr
	}
}

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
