// Package controllers holds one reconciler per Bastion kind. The controllers
// know nothing of HTTP: the API server writes resources, and these bring the
// cluster in line with them.
package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/nsaccess"
)

// ProjectReconciler gives every Project its own Namespace.
type ProjectReconciler struct {
	client.Client
	// IDs allocates project ids from the global "project" counter, which
	// lives in ManagerNamespace.
	IDs              *ids.Allocator
	ManagerNamespace string
	// RunnerNetworkPolicy, when set, is the egress that task pods are
	// allowed; every project namespace gets it (see network_policy.go).
	RunnerNetworkPolicy *networkingv1.NetworkPolicySpec
	// Keys is told which namespaces to follow key Secrets in.
	Keys *SecretWatches
	// Namespaces grants the manager Secrets and ConfigMaps in the
	// project's namespace.
	Namespaces *nsaccess.Granter
}

// +kubebuilder:rbac:groups=automation.bastion.dev,resources=projects,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=projects/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=projects/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;create;update;delete

// Reconcile creates the project's namespace and records it in the status.
func (r *ProjectReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	project := &bastionv1.Project{}
	if err := r.Get(ctx, req.NamespacedName, project); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if !project.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, project)
	}
	if controllerutil.AddFinalizer(project, bastionv1.ProjectFinalizer) {
		// Persist the finalizer before creating anything it must clean up.
		return ctrl.Result{}, r.Update(ctx, project)
	}
	// The id comes before the status is taken in hand, so that the status
	// patch carries only status.
	if _, err := ids.Assign(ctx, r.Client, r.IDs, project, r.ManagerNamespace, ids.CounterProject); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	before := project.DeepCopy()
	defer writeStatus(ctx, r.Client, before, project, &result, &err)
	defer readyOnError(project, &err)

	return ctrl.Result{}, r.reconcileNamespace(ctx, project)
}

// reconcileNamespace makes sure the project's namespace exists and is ours.
func (r *ProjectReconciler) reconcileNamespace(ctx context.Context, project *bastionv1.Project) error {
	name := bastionv1.ProjectNamespace(project.Name)
	ns := &corev1.Namespace{}
	err := r.Get(ctx, client.ObjectKey{Name: name}, ns)
	switch {
	case apierrors.IsNotFound(err):
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: map[string]string{bastionv1.LabelProject: project.Name},
		}}
		if err := controllerutil.SetControllerReference(project, ns, r.Scheme()); err != nil {
			return err
		}
		if err := r.Create(ctx, ns); err != nil {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
		log.FromContext(ctx).Info("created project namespace", "namespace", name)
	case err != nil:
		return err
	case metav1.IsControlledBy(ns, project):
	case claims(ns, project):
		// Applied together with the Project (GitOps, `kubectl apply -f
		// dir`): a namespace that names this project and has no other
		// controller is adopted.
		if err := controllerutil.SetControllerReference(project, ns, r.Scheme()); err != nil {
			return err
		}
		if err := r.Update(ctx, ns); err != nil {
			return fmt.Errorf("adopting namespace %s: %w", name, err)
		}
		log.FromContext(ctx).Info("adopted project namespace", "namespace", name)
	default:
		setReady(project, metav1.ConditionFalse, bastionv1.ReasonNamespaceConflict,
			fmt.Sprintf("namespace %s already exists and does not belong to this project (label it %s=%s to hand it over)",
				name, bastionv1.LabelProject, project.Name))
		project.Status.Namespace = ""
		return nil
	}

	// Secrets and ConfigMaps first: the key watch and every id counter of
	// the namespace need them.
	if err := r.Namespaces.Grant(ctx, name); err != nil {
		return err
	}
	r.Keys.Watch(name)
	if err := r.applyRunnerNetworkPolicy(ctx, name); err != nil {
		return err
	}
	project.Status.Namespace = name
	setReady(project, metav1.ConditionTrue, bastionv1.ReasonReconciled, "namespace "+name+" is ready")
	return nil
}

// claims reports whether a namespace the project did not create asks to
// be the project's: it carries the project label with the project's name
// and no other object controls it.
func claims(ns *corev1.Namespace, project *bastionv1.Project) bool {
	return ns.Labels[bastionv1.LabelProject] == project.Name && metav1.GetControllerOf(ns) == nil && ns.DeletionTimestamp.IsZero()
}

// reconcileDelete removes the project's namespace, then the finalizer.
func (r *ProjectReconciler) reconcileDelete(ctx context.Context, project *bastionv1.Project) error {
	if !controllerutil.ContainsFinalizer(project, bastionv1.ProjectFinalizer) {
		return nil
	}
	r.Keys.Unwatch(bastionv1.ProjectNamespace(project.Name))
	ns := &corev1.Namespace{}
	err := r.Get(ctx, client.ObjectKey{Name: bastionv1.ProjectNamespace(project.Name)}, ns)
	if err == nil && metav1.IsControlledBy(ns, project) && ns.DeletionTimestamp.IsZero() {
		if err := r.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
			return err
		}
	} else if client.IgnoreNotFound(err) != nil {
		return err
	}
	controllerutil.RemoveFinalizer(project, bastionv1.ProjectFinalizer)
	// A reconcile of a stale cached copy finds the project already gone
	// (not found) or changed (a conflict, whose update brings it back):
	// neither is an error.
	err = r.Update(ctx, project)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// SetupWithManager registers the reconciler: it watches Projects and the
// Namespaces they own.
func (r *ProjectReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&bastionv1.Project{}).
		Owns(&corev1.Namespace{}).
		Named("project").
		Complete(r)
}
