// What the manager may do inside a namespace it owns: its own namespace
// and each project's. controller-gen turns these markers into the
// ClusterRole bastion-namespace (config/rbac/namespace/role.yaml, `make
// manifests`), which is bound only in those namespaces, never cluster-wide.
//
// Keys, environment and integration secrets, survey answers and each run's
// input live in Secrets of project namespaces; users' password hashes and
// single sign-on client secrets in the manager's.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
//
// Integer id counters (internal/ids), one ConfigMap per kind and namespace.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;create;update
//
// Each task runs as a Job (controllers/launch), stopped by deleting it and
// its pods. Creating a Job is running a pod as any ServiceAccount of its
// namespace, so it is granted here and never cluster-wide: a compromised
// manager cannot run a pod in kube-system. The admission policy
// (config/rbac/namespace_policy.yaml) also keeps Jobs out of the manager's
// own namespace, where this role is bound too.
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=create;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=delete;deletecollection

// Package nsaccess gives the manager its rights in a project namespace.
//
// A ClusterRole cannot name namespaces that appear at run time, so Secrets
// and ConfigMaps, and creating and deleting Jobs, are not in the manager's
// ClusterRole at all. Instead the manager binds the bastion-namespace
// ClusterRole to its own ServiceAccount in each namespace it creates for a
// project, with a RoleBinding it may create because it holds `bind` on
// that one role. It can then read and write Secrets, and run Jobs, in
// project namespaces (Secrets in its own too), and nowhere else.
package nsaccess

import (
	"context"
	"fmt"
	"slices"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// BindingName is the RoleBinding the manager keeps in each project
// namespace.
const BindingName = "bastion-manager"

// propagation bounds the wait for the apiserver's authorizer to see a new
// RoleBinding.
const propagation = 30 * time.Second

// Granter binds Role to the manager's ServiceAccount in a namespace. The
// zero Granter (no Role) grants nothing: `bastion dev`, envtest suites and
// a manager run with an administrator's kubeconfig need no binding.
type Granter struct {
	Client client.Client
	// Role is the ClusterRole to bind (--namespace-role).
	Role string
	// ServiceAccount and Namespace name the manager's identity
	// (--service-account, --namespace).
	ServiceAccount, Namespace string
}

// Enabled reports whether g binds anything.
func (g *Granter) Enabled() bool { return g != nil && g.Role != "" }

// Grant makes sure the manager may use Secrets, ConfigMaps and Jobs in ns. After
// writing the binding it returns only once the apiserver agrees, so that
// the caller's next write there is not refused.
func (g *Granter) Grant(ctx context.Context, ns string) error {
	if !g.Enabled() {
		return nil
	}
	changed, err := g.bind(ctx, ns)
	if err != nil {
		return fmt.Errorf("binding %s in namespace %s: %w", g.Role, ns, err)
	}
	if !changed {
		return nil
	}
	return g.waitAllowed(ctx, ns)
}

// bind writes the binding unless it is there as it should be, and says
// whether it wrote.
func (g *Granter) bind(ctx context.Context, ns string) (bool, error) {
	want := g.binding(ns)
	have := &rbacv1.RoleBinding{}
	err := g.Client.Get(ctx, client.ObjectKeyFromObject(want), have)
	switch {
	case apierrors.IsNotFound(err):
		return true, client.IgnoreAlreadyExists(g.Client.Create(ctx, want))
	case err != nil:
		return false, err
	case have.RoleRef == want.RoleRef && slices.Equal(have.Subjects, want.Subjects):
		return false, nil
	case have.RoleRef != want.RoleRef:
		// A RoleBinding's roleRef cannot change; a different one (a new
		// release name) is replaced.
		if err := g.Client.Delete(ctx, have); client.IgnoreNotFound(err) != nil {
			return false, err
		}
		return true, client.IgnoreAlreadyExists(g.Client.Create(ctx, want))
	default:
		have.Subjects = want.Subjects
		return true, g.Client.Update(ctx, have)
	}
}

func (g *Granter) binding(ns string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      BindingName,
			Labels:    map[string]string{"app.kubernetes.io/managed-by": "bastion"},
		},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: g.Role},
		Subjects: []rbacv1.Subject{{
			Kind: rbacv1.ServiceAccountKind, Name: g.ServiceAccount, Namespace: g.Namespace,
		}},
	}
}

// waitAllowed asks the apiserver, as the manager, whether it may now
// create Secrets in ns. RBAC reaches the authorizer through an informer,
// so a binding just written may take a moment to count.
func (g *Granter) waitAllowed(ctx context.Context, ns string) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, propagation, true, func(ctx context.Context) (bool, error) {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "create", Resource: "secrets"},
		}}
		if err := g.Client.Create(ctx, review); err != nil {
			return false, err
		}
		last = review.Status.Reason
		return review.Status.Allowed, nil
	})
	if err != nil {
		return fmt.Errorf("the manager may not yet use Secrets in namespace %s (%s): %w", ns, last, err)
	}
	return nil
}
