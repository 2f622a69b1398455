package packaging

import (
	"context"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// access is one request the manager's ServiceAccount makes (or must not).
type access struct {
	verb, group, resource, subresource, namespace string
}

// A namespace a project owns (the manager creates it) and one it does not.
const (
	projectNS = "bastion-demo"
	otherNS   = "kube-system"
)

// What the controllers and the API server do, as listed in
// docs/architecture.md ("Packaging and RBAC").
var managerNeeds = []access{
	{"create", "", "namespaces", "", ""},
	{"watch", "", "namespaces", "", ""},
	{"delete", "", "namespaces", "", ""},
	{"update", "", "namespaces", "", ""}, // adopting a namespace applied with its Project
	{"create", "batch", "jobs", "", projectNS},
	{"watch", "batch", "jobs", "", projectNS},
	{"delete", "batch", "jobs", "", projectNS},
	{"watch", "", "pods", "", projectNS},
	{"deletecollection", "", "pods", "", projectNS},
	{"create", "", "secrets", "", projectNS},
	{"get", "", "secrets", "", projectNS},
	{"delete", "", "secrets", "", projectNS},
	{"create", "", "secrets", "", releaseNamespace},
	{"update", "", "configmaps", "", releaseNamespace},
	{"create", "automation.bastion.dev", "tasks", "", projectNS},
	{"patch", "automation.bastion.dev", "tasks", "status", projectNS},
	{"update", "automation.bastion.dev", "tasks", "finalizers", projectNS},
	{"create", "automation.bastion.dev", "templates", "", projectNS},
	{"delete", "automation.bastion.dev", "integrations", "", projectNS},
	{"update", "automation.bastion.dev", "projects", "", ""},
	{"update", "automation.bastion.dev", "projects", "finalizers", ""},
	{"create", "automation.bastion.dev", "users", "", ""},
	{"patch", "automation.bastion.dev", "schedules", "status", projectNS},
	{"create", "events.k8s.io", "events", "", projectNS},
	{"patch", "networking.k8s.io", "networkpolicies", "", projectNS},
	// Leader election among replicas: the Lease in the release namespace.
	{"get", "coordination.k8s.io", "leases", "", releaseNamespace},
	{"create", "coordination.k8s.io", "leases", "", releaseNamespace},
	{"update", "coordination.k8s.io", "leases", "", releaseNamespace},
}

// What no part of Bastion does, so the ServiceAccount must not be able to.
var managerMustNot = []access{
	{"create", "", "pods", "", projectNS},      // pods come from Jobs only
	{"create", "", "pods", "exec", projectNS},  // never runs commands in pods
	{"get", "", "pods", "log", projectNS},      // output comes over the stream
	{"update", "batch", "jobs", "", projectNS}, // a Job is created once, then deleted
	{"patch", "batch", "jobs", "", projectNS},
	// Jobs and their pods are created and deleted only where the namespace
	// role is bound: a Job in kube-system would run as any of its
	// ServiceAccounts. Reading them stays cluster-wide (the cache's watch).
	{"create", "batch", "jobs", "", otherNS},
	{"create", "batch", "jobs", "", ""},
	{"delete", "batch", "jobs", "", otherNS},
	{"deletecollection", "", "pods", "", otherNS},
	{"delete", "", "pods", "", "default"},
	{"create", "", "serviceaccounts", "token", projectNS},
	{"escalate", "rbac.authorization.k8s.io", "clusterroles", "", ""},
	{"bind", "rbac.authorization.k8s.io", "clusterroles", "", ""}, // only its namespace role, by name
	// Secrets and ConfigMaps only where the namespace role is bound.
	{"get", "", "secrets", "", otherNS},
	{"list", "", "secrets", "", otherNS},
	{"list", "", "secrets", "", ""}, // no cluster-wide list or watch
	{"watch", "", "secrets", "", ""},
	{"get", "", "secrets", "", "default"},
	{"get", "", "configmaps", "", otherNS},
	{"create", "apps", "deployments", "", projectNS},
	{"delete", "apiextensions.k8s.io", "customresourcedefinitions", "", ""},
	{"update", "coordination.k8s.io", "leases", "", otherNS}, // leader election: own namespace only
	{"delete", "networking.k8s.io", "networkpolicies", "", projectNS},
	{"get", "", "nodes", "", ""},
}

// Task pods run as their namespace's default ServiceAccount with no token
// mounted; even with one they may do nothing.
var taskPodMustNot = []access{
	{"get", "", "secrets", "", projectNS},
	{"list", "", "pods", "", projectNS},
	{"get", "automation.bastion.dev", "tasks", "", projectNS},
	{"create", "batch", "jobs", "", projectNS},
}

// The chart's RBAC, applied for real, gives the manager's ServiceAccount
// what the controllers need and nothing listed as never used; task pods
// get no access. Secrets, ConfigMaps and creating Jobs come only from the
// namespace role: in the release namespace from the chart, and in a
// project namespace once the manager has bound the role there itself (as
// the Project controller does, internal/nsaccess), which it may do for
// that role and no other.
func TestRBAC_managerCanDoWhatItNeedsAndTaskPodsNothing(t *testing.T) {
	objs, _ := renderObjects(t, nil)
	assertManagerRBAC(t, objs, "system:serviceaccount:"+releaseNamespace+":"+releaseName)
}

// The same for kustomize's config/default, whose ServiceAccount is
// bastion-manager.
func TestRBAC_configDefaultManagerCanDoWhatItNeedsAndTaskPodsNothing(t *testing.T) {
	objs := decodeAll(t, "kustomize build config/default", kustomizeBuild(t))
	assertManagerRBAC(t, objs, "system:serviceaccount:"+releaseNamespace+":bastion-manager")
}

// assertManagerRBAC applies the RBAC objects and the admission policy of
// objs for real and asks, by SubjectAccessReview as manager, for each
// access it needs and each it must not have.
func assertManagerRBAC(t *testing.T, objs []*unstructured.Unstructured, manager string) {
	t.Helper()
	ensureNamespace(t, releaseNamespace)
	ctx := context.Background()
	// A project namespace, as the manager creates it: labelled with its
	// project.
	project := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: projectNS, Labels: map[string]string{projectLabel: "demo"}}}
	if err := k8sClient.Create(ctx, project); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			if err := k8sClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.ForceOwnership, client.FieldOwner("rbac-test")); err != nil {
				t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	}
	// The chart and config/default name their roles alike but bind
	// different ServiceAccounts: the binding below is each test's own.
	binding := managerBinding(projectNS, "bastion-manager", "bastion-namespace", manager)
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), binding.DeepCopy()) })
	if allowed(t, manager, releaseNamespace, access{"get", "", "secrets", "", projectNS}) {
		t.Fatal("the manager reads a project's Secrets before it bound its namespace role there")
	}

	// As the manager: RBAC refuses binding cluster-admin (rights it does
	// not hold) in the project namespace; binding its namespace role works.
	asManager := impersonating(t, manager, releaseNamespace)
	if err := asManager.Create(ctx, managerBinding(projectNS, "try-cluster-admin", "cluster-admin", manager), client.DryRunAll); !apierrors.IsForbidden(err) {
		t.Errorf("the manager bound cluster-admin in a project namespace: %v", err)
	}
	if err := asManager.Create(ctx, binding.DeepCopy()); err != nil {
		t.Fatalf("the manager cannot bind bastion-namespace in a project namespace: %v", err)
	}
	refusedByPolicy(t, asManager, manager)

	for _, a := range managerNeeds {
		if !allowed(t, manager, releaseNamespace, a) {
			t.Errorf("the manager cannot %+v", a)
		}
	}
	for _, a := range managerMustNot {
		if allowed(t, manager, releaseNamespace, a) {
			t.Errorf("the manager can %+v", a)
		}
	}
	for _, a := range taskPodMustNot {
		if allowed(t, "system:serviceaccount:"+projectNS+":default", projectNS, a) {
			t.Errorf("a task pod can %+v", a)
		}
	}
	// Creating a Job in kube-system, asked exactly as issue #19 asks it.
	if allowed(t, manager, releaseNamespace, access{"create", "batch", "jobs", "", "kube-system"}) {
		t.Error("a SubjectAccessReview says the manager may create jobs -n kube-system")
	}
}

const projectLabel = "automation.bastion.dev/project"

// refusedByPolicy shows the chart's admission policy at work: RBAC alone
// would let the manager bind its namespace role anywhere, relabel any
// namespace and delete any; the policy allows each only for project
// namespaces. Dry runs, so that nothing changes when it does not refuse.
func refusedByPolicy(t *testing.T, asManager client.Client, manager string) {
	t.Helper()
	ctx := context.Background()
	unrelated := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "unrelated"}}
	if err := k8sClient.Create(ctx, unrelated); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	attempts := map[string]func() error{
		// Roles whose rights the manager holds pass RBAC's escalation
		// check; the policy still allows only the namespace role.
		"bind its own ClusterRole in a project namespace": func() error {
			return asManager.Create(ctx, managerBinding(projectNS, "try-manager", releaseName+"-manager", manager), client.DryRunAll)
		},
		"bind its namespace role in " + otherNS: func() error {
			return asManager.Create(ctx, managerBinding(otherNS, "bastion-manager", releaseName+"-namespace", manager), client.DryRunAll)
		},
		"label " + otherNS + " as a project's": func() error {
			ns := &corev1.Namespace{}
			if err := asManager.Get(ctx, client.ObjectKey{Name: otherNS}, ns); err != nil {
				return err
			}
			if ns.Labels == nil {
				ns.Labels = map[string]string{}
			}
			ns.Labels[projectLabel] = "demo"
			return asManager.Update(ctx, ns, client.DryRunAll)
		},
		"delete a namespace of no project": func() error {
			return asManager.Delete(ctx, unrelated.DeepCopy(), client.DryRunAll)
		},
		// The namespace role is bound in the manager's own namespace too;
		// RBAC allows a Job there, the policy does not.
		"run a Job in its own namespace": func() error {
			return asManager.Create(ctx, probeJob(releaseNamespace), client.DryRunAll)
		},
	}
	// A new policy reaches admission within seconds.
	deadline := time.Now().Add(30 * time.Second)
	for what, attempt := range attempts {
		for {
			err := attempt()
			if err != nil && strings.Contains(err.Error(), "Bastion manager") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the manager may %s (%v)", what, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// What the manager does for projects still passes.
	if err := asManager.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: projectNS}}, client.DryRunAll); err != nil {
		t.Errorf("the manager cannot delete a project namespace: %v", err)
	}
	if err := asManager.Create(ctx, probeJob(projectNS), client.DryRunAll); err != nil {
		t.Errorf("the manager cannot run a Job in a project namespace: %v", err)
	}
	// And RBAC alone refuses a Job where the role is not bound.
	if err := asManager.Create(ctx, probeJob(otherNS), client.DryRunAll); !apierrors.IsForbidden(err) {
		t.Errorf("the manager may create a Job in %s: %v", otherNS, err)
	}
}

// probeJob is a minimal Job in ns, for dry-run creates as the manager.
func probeJob(ns string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rbac-probe"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "probe", Image: "busybox"}},
		}}},
	}
}

// managerBinding is the RoleBinding the manager makes in a project
// namespace (internal/nsaccess), binding role to user's ServiceAccount.
func managerBinding(ns, name, role, user string) *rbacv1.RoleBinding {
	saName := user[strings.LastIndex(user, ":")+1:]
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: saName, Namespace: releaseNamespace}},
	}
}

// impersonating is a client acting as the ServiceAccount user.
func impersonating(t *testing.T, user, saNamespace string) client.Client {
	t.Helper()
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"}}
	c, err := client.New(as, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func allowed(t *testing.T, user, saNamespace string, a access) bool {
	t.Helper()
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource, Namespace: a.namespace,
		},
	}}
	if err := k8sClient.Create(context.Background(), review); err != nil {
		t.Fatal(err)
	}
	return review.Status.Allowed
}
