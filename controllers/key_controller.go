package controllers

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// KeyReconciler gives every key (a Secret carrying LabelKeyType) its id.
//
// It reads Secrets as metadata only: an id needs the labels, and a
// controller that never holds a Secret's data can neither leak nor log it.
// Keys reach it through SecretWatches, one watch per project namespace;
// other Secrets are dropped before they reach the work queue. Its rights on Secrets come from the
// namespaces' bastion-namespace binding (internal/nsaccess), not from the
// manager's ClusterRole.
type KeyReconciler struct {
	client.Client
	IDs  *ids.Allocator
	Keys *SecretWatches
}

// Reconcile assigns the key's id.
func (r *KeyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	key := secretMetadata()
	if err := r.Get(ctx, req.NamespacedName, key); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !isKey(key) || !key.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	_, err := ids.Assign(ctx, r.Client, r.IDs, key, key.Namespace, ids.CounterKey)
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

func isKey(obj client.Object) bool {
	_, ok := obj.GetLabels()[bastionv1.LabelKeyType]
	return ok
}

// SetupWithManager registers the reconciler. Its source listens to the
// key watches once the controller starts (on the leader only), and hears
// first of every key already known.
func (r *KeyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	keys := source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		r.Keys.Listen(func(key *metav1.PartialObjectMetadata) {
			if !isKey(key) {
				return
			}
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: key.Namespace, Name: key.Name}})
		})
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("key").
		WatchesRawSource(keys).
		Complete(r)
}
