package nsaccess_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/bastion-dev/bastion/internal/nsaccess"
)

// The manager, as a ServiceAccount that may only create RoleBindings and
// bind two roles, grants itself Secrets in a namespace; its very next write
// there succeeds; a new role replaces the binding; and a second Grant
// changes nothing.
func TestGrant_bindsTheRoleAndReturnsOnceTheManagerMayWrite(t *testing.T) {
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest (is KUBEBUILDER_ASSETS set?): %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	admin, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	create := func(obj client.Object) {
		t.Helper()
		if err := admin.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "system"}})
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "project"}})
	secrets := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create"}}}
	create(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "ns-role"}, Rules: secrets})
	create(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "ns-role-2"}, Rules: secrets})
	create(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "manager"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"rolebindings"}, Verbs: []string{"get", "create", "update", "delete"}},
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: []string{"ns-role", "ns-role-2"}},
	}})
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "bastion", Namespace: "system"}
	create(&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "manager"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "manager"}, Subjects: []rbacv1.Subject{subject}})

	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:system:bastion",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:system", "system:authenticated"}}
	manager, err := client.New(as, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "project", Name: "key"}}
	if err := manager.Create(ctx, secret.DeepCopy()); !apierrors.IsForbidden(err) {
		t.Fatalf("before the grant, creating a Secret gave %v, want forbidden", err)
	}

	g := &nsaccess.Granter{Client: manager, Role: "ns-role", ServiceAccount: "bastion", Namespace: "system"}
	if err := g.Grant(ctx, "project"); err != nil {
		t.Fatal(err)
	}
	if err := manager.Create(ctx, secret.DeepCopy()); err != nil {
		t.Fatalf("right after the grant: %v", err)
	}
	binding := &rbacv1.RoleBinding{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "project", Name: nsaccess.BindingName}, binding); err != nil {
		t.Fatal(err)
	}
	if binding.RoleRef.Name != "ns-role" || len(binding.Subjects) != 1 || binding.Subjects[0] != subject {
		t.Fatalf("binding %+v %+v", binding.RoleRef, binding.Subjects)
	}
	version := binding.ResourceVersion

	if err := g.Grant(ctx, "project"); err != nil {
		t.Fatal(err)
	}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(binding), binding); err != nil || binding.ResourceVersion != version {
		t.Fatalf("a second grant rewrote the binding (%v)", err)
	}

	g.Role = "ns-role-2" // a roleRef cannot change: the binding is replaced
	if err := g.Grant(ctx, "project"); err != nil {
		t.Fatal(err)
	}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(binding), binding); err != nil || binding.RoleRef.Name != "ns-role-2" {
		t.Fatalf("after a role change: %+v (%v)", binding.RoleRef, err)
	}

	if err := (&nsaccess.Granter{}).Grant(ctx, "elsewhere"); err != nil {
		t.Fatalf("a granter without a role grants nothing and fails nothing: %v", err)
	}
}
