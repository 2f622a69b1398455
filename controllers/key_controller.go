package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// KeyReconciler gives every key (a Secret carrying LabelKeyType) its id.
//
// It reads Secrets as metadata only: an id needs the labels, and a
// controller that never holds a Secret's data can neither leak nor log it.
// Other Secrets are filtered out before they reach the work queue.
type KeyReconciler struct {
	client.Client
	IDs *ids.Allocator
}

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;create;update

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

// SetupWithManager registers the reconciler for key Secrets. Only label
// changes can give a Secret an id or make it a key, so data changes are
// ignored too.
func (r *KeyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.Secret{}, builder.OnlyMetadata,
			builder.WithPredicates(predicate.NewPredicateFuncs(isKey), predicate.LabelChangedPredicate{})).
		Named("key").
		Complete(r)
}
