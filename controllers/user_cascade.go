package controllers

import (
	"context"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

// A deleted User, whichever door deleted it, leaves no team membership
// (no project keeps a member who does not exist) and no session or API
// token behind. The User carries CascadeFinalizer until that is done.

// finalize removes a deleted user from every team and ends its
// credentials, then lets it go.
func (r *UserReconciler) finalize(ctx context.Context, user *bastionv1.User) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(user, bastionv1.CascadeFinalizer) {
		return ctrl.Result{}, nil
	}
	projects := &bastionv1.ProjectList{}
	if err := r.List(ctx, projects); err != nil {
		return ctrl.Result{}, err
	}
	for i := range projects.Items {
		project := &projects.Items[i]
		before := project.DeepCopy()
		project.Spec.Members = slices.DeleteFunc(project.Spec.Members, func(m bastionv1.ProjectMember) bool { return m.User == user.Name })
		if len(project.Spec.Members) == len(before.Spec.Members) {
			continue
		}
		// Locked: a team changed meanwhile is read again, never
		// overwritten with this copy.
		err := r.Patch(ctx, project, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: cascadeRecheck}, nil
		}
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	if id, ok := ids.FromLabels(user); ok && r.Store != nil {
		for _, kind := range []store.CredentialKind{store.CredentialSession, store.CredentialToken} {
			if _, err := r.Store.DeleteUserCredentials(ctx, id, kind, ""); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	return patchCascadeFinalizer(ctx, r.Client, user, false)
}
