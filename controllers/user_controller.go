package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// UserReconciler gives every User its id. Users are created through
// internal/users, which sets no id, or with kubectl; either way the id
// comes from here.
type UserReconciler struct {
	client.Client
	IDs *ids.Allocator
	// ManagerNamespace holds the global "user" counter.
	ManagerNamespace string
}

// +kubebuilder:rbac:groups=automation.bastion.dev,resources=users,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;create;update

// Reconcile assigns the user's id.
func (r *UserReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	user := &bastionv1.User{}
	if err := r.Get(ctx, req.NamespacedName, user); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !user.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	_, err := ids.Assign(ctx, r.Client, r.IDs, user, r.ManagerNamespace, ids.CounterUser)
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// SetupWithManager registers the reconciler for Users.
func (r *UserReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&bastionv1.User{}, builder.WithPredicates(specOrLabelsChanged)).
		Named("user").
		Complete(r)
}
