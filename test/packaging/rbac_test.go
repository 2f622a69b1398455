package packaging

import (
	"context"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
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
	{"update", "coordination.k8s.io", "leases", "", releaseNamespace},
}

// What no part of Bastion does, so the ServiceAccount must not be able to.
var managerMustNot = []access{
	{"create", "", "pods", "", projectNS},      // pods come from Jobs only
	{"create", "", "pods", "exec", projectNS},  // never runs commands in pods
	{"get", "", "pods", "log", projectNS},      // output comes over the stream
	{"update", "batch", "jobs", "", projectNS}, // a Job is created once, then deleted
	{"create", "", "serviceaccounts", "token", projectNS},
	{"create", "rbac.authorization.k8s.io", "rolebindings", "", projectNS},
	{"escalate", "rbac.authorization.k8s.io", "clusterroles", "", ""},
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
// get no access.
func TestRBAC_managerCanDoWhatItNeedsAndTaskPodsNothing(t *testing.T) {
	objs, _ := renderObjects(t, nil)
	ensureNamespace(t, releaseNamespace)
	ctx := context.Background()
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			if err := k8sClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.ForceOwnership, client.FieldOwner("rbac-test")); err != nil {
				t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	}
	manager := "system:serviceaccount:" + releaseNamespace + ":" + releaseName
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
