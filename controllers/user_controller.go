package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
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
	// Store holds the users' sessions and tokens, ended with the user.
	Store store.Store
}

// +kubebuilder:rbac:groups=automation.bastion.dev,resources=users,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=users/finalizers,verbs=update

// +kubebuilder:rbac:groups=automation.bastion.dev,resources=users/status,verbs=get;update;patch

// Reconcile assigns the user's id and says, in Ready, whether the user can
// sign in: a User applied with kubectl has no password until an operator
// sets one, and `kubectl get users` should show that.
func (r *UserReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	user := &bastionv1.User{}
	if err := r.Get(ctx, req.NamespacedName, user); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !user.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, user)
	}
	if result, err := patchCascadeFinalizer(ctx, r.Client, user, true); err != nil || !result.IsZero() {
		return result, err
	}
	if _, err := ids.Assign(ctx, r.Client, r.IDs, user, r.ManagerNamespace, ids.CounterUser); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	before := user.DeepCopy()
	defer writeStatus(ctx, r.Client, before, user, &result, &err)
	defer readyOnError(user, &err)
	return ctrl.Result{}, r.reconcileSignIn(ctx, user)
}

// reconcileSignIn says in Ready whether the user can sign in.
func (r *UserReconciler) reconcileSignIn(ctx context.Context, user *bastionv1.User) error {
	clash, err := r.loginClash(ctx, user)
	if err != nil {
		return err
	}
	hasPassword, err := r.hasPassword(ctx, user)
	switch {
	case err != nil:
		return err
	case clash != "":
		setReady(user, metav1.ConditionFalse, bastionv1.ReasonLoginConflict,
			clash+"; sign-in with that login is refused until one of them changes")
	case user.Spec.External:
		setReady(user, metav1.ConditionTrue, bastionv1.ReasonReconciled, "signs in through an identity provider")
	case hasPassword:
		setReady(user, metav1.ConditionTrue, bastionv1.ReasonReconciled, "can sign in with a password")
	default:
		setReady(user, metav1.ConditionFalse, bastionv1.ReasonNoPassword,
			"no password is set: bastion user change-by-login --login "+user.Spec.Username)
	}
	return nil
}

// loginClash is the rule of the API (users.Clash) for Users applied with
// kubectl, which the API never saw: a username that is another user's
// email, or the other way round. The API refuses such a write; here the
// User says so in Ready, and sign-in refuses the login both users answer
// to (users.Store.FindByLogin), so neither can be signed in to as the
// other.
func (r *UserReconciler) loginClash(ctx context.Context, user *bastionv1.User) (string, error) {
	all := &bastionv1.UserList{}
	if err := r.List(ctx, all); err != nil {
		return "", err
	}
	for i := range all.Items {
		if all.Items[i].Name == user.Name {
			continue
		}
		if err := users.Clash(user.Spec, all.Items[i].Spec); err != nil {
			return err.Error(), nil
		}
	}
	return "", nil
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
		// A user's logins clash, or stop clashing, when another changes.
		Watches(&bastionv1.User{}, handler.EnqueueRequestsFromMapFunc(r.everyUser), builder.WithPredicates(specOrLabelsChanged)).
		Named("user").
		Complete(r)
}

// everyUser maps a change of one User to every User (there are few).
func (r *UserReconciler) everyUser(ctx context.Context, _ client.Object) []reconcile.Request {
	all := &bastionv1.UserList{}
	if err := r.List(ctx, all); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(all.Items))
	for i := range all.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: all.Items[i].Name}})
	}
	return out
}

// userOfSecret maps a password Secret to its User.
func userOfSecret(_ context.Context, obj client.Object) []reconcile.Request {
	if name := obj.GetLabels()[bastionv1.LabelUser]; name != "" {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
	}
	return nil
}
