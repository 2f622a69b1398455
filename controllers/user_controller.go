package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/users"
)

// UserReconciler gives every User its id and a Ready condition that says
// whether the user can sign in. Users are created through internal/users,
// which sets no id, or with kubectl; either way the id comes from here.
type UserReconciler struct {
	client.Client
	IDs *ids.Allocator
	// ManagerNamespace holds the global "user" counter.
	ManagerNamespace string
}

// +kubebuilder:rbac:groups=automation.bastion.dev,resources=users,verbs=get;list;watch;patch

// +kubebuilder:rbac:groups=automation.bastion.dev,resources=users/status,verbs=get;update;patch

// Reconcile assigns the user's id and says, in Ready, whether the user can
// sign in: a User applied with kubectl has no password until an operator
// sets one, and `kubectl get users` should show that.
func (r *UserReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	user := &bastionv1.User{}
	if err := r.Get(ctx, req.NamespacedName, user); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !user.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if _, err := ids.Assign(ctx, r.Client, r.IDs, user, r.ManagerNamespace, ids.CounterUser); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	before := user.DeepCopy()
	cond := metav1.Condition{Type: bastionv1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: bastionv1.ReasonReconciled, ObservedGeneration: user.Generation}
	switch hasPassword, err := r.hasPassword(ctx, user); {
	case err != nil:
		return ctrl.Result{}, err
	case user.Spec.External:
		cond.Message = "signs in through an identity provider"
	case hasPassword:
		cond.Message = "can sign in with a password"
	default:
		cond.Status, cond.Reason = metav1.ConditionFalse, bastionv1.ReasonNoPassword
		cond.Message = "no password is set: bastion user change-by-login --login " + user.Spec.Username
	}
	if !meta.SetStatusCondition(&user.Status.Conditions, cond) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, client.IgnoreNotFound(r.Status().Patch(ctx, user, client.MergeFrom(before)))
}

// hasPassword reports whether the user's password Secret exists (read as
// metadata only: the hash never enters the cache).
func (r *UserReconciler) hasPassword(ctx context.Context, user *bastionv1.User) (bool, error) {
	err := r.Get(ctx, client.ObjectKey{Namespace: r.ManagerNamespace, Name: users.PasswordSecretName(user)}, secretMetadata())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// SetupWithManager registers the reconciler for Users and their password
// Secrets.
func (r *UserReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&bastionv1.User{}, builder.WithPredicates(specOrLabelsChanged)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(userOfSecret), builder.OnlyMetadata).
		Named("user").
		Complete(r)
}

// userOfSecret maps a password Secret to its User.
func userOfSecret(_ context.Context, obj client.Object) []reconcile.Request {
	if name := obj.GetLabels()[bastionv1.LabelUser]; name != "" {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
	}
	return nil
}
