package controllers_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// readyKind is one kind under the status convention: how to make an
// object of it, and how to change its spec.
type readyKind struct {
	name   string
	new    func(namespace string) readyObject
	change func(readyObject)
}

// readyObject is an object of one of the kinds with a Ready condition.
type readyObject interface {
	client.Object
	bastionv1.ReadyStatus
}

// readyKinds are every kind but the Task (whose status has its own owner
// and test). Keys are Secrets and have no status of ours.
var readyKinds = []readyKind{
	{"Project",
		func(string) readyObject {
			return &bastionv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "ready-status-project"}, Spec: bastionv1.ProjectSpec{DisplayName: "Ready"}}
		},
		func(o readyObject) { o.(*bastionv1.Project).Spec.DisplayName = "Ready, renamed" }},
	{"User",
		func(string) readyObject {
			return &bastionv1.User{ObjectMeta: metav1.ObjectMeta{Name: "ready-status-user"},
				Spec: bastionv1.UserSpec{Username: "ready-status", Name: "Ready", Email: "ready-status@example.com"}}
		},
		func(o readyObject) { o.(*bastionv1.User).Spec.Name = "Ready, renamed" }},
	{"Repository",
		func(ns string) readyObject {
			return &bastionv1.Repository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ready"},
				Spec: bastionv1.RepositorySpec{DisplayName: "Ready", GitURL: "https://example.com/r.git", GitBranch: "main", SSHKeyRef: bastionv1.ObjectRef{Name: "no-key"}}}
		},
		func(o readyObject) { o.(*bastionv1.Repository).Spec.GitBranch = "next" }},
	{"Inventory",
		func(ns string) readyObject {
			return &bastionv1.Inventory{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ready"},
				Spec: bastionv1.InventorySpec{DisplayName: "Ready", Type: "static", Inventory: "localhost", SSHKeyRef: bastionv1.ObjectRef{Name: "no-key"}}}
		},
		func(o readyObject) { o.(*bastionv1.Inventory).Spec.Inventory = "127.0.0.1" }},
	{"Environment",
		func(ns string) readyObject {
			return &bastionv1.Environment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ready"},
				Spec: bastionv1.EnvironmentSpec{DisplayName: "Ready"}}
		},
		func(o readyObject) { o.(*bastionv1.Environment).Spec.Env = map[string]string{"A": "1"} }},
	{"View",
		func(ns string) readyObject {
			return &bastionv1.View{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ready"}, Spec: bastionv1.ViewSpec{Title: "Ready"}}
		},
		func(o readyObject) { o.(*bastionv1.View).Spec.Position = 3 }},
	{"Template",
		func(ns string) readyObject {
			return &bastionv1.Template{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ready"},
				Spec: bastionv1.TemplateSpec{DisplayName: "Ready", Playbook: "ping.yml",
					RepositoryRef: bastionv1.ObjectRef{Name: "ready"}, EnvironmentRef: bastionv1.ObjectRef{Name: "ready"}}}
		},
		func(o readyObject) { o.(*bastionv1.Template).Spec.Playbook = "pong.yml" }},
	{"Schedule",
		func(ns string) readyObject {
			return &bastionv1.Schedule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ready"},
				Spec: bastionv1.ScheduleSpec{TemplateRef: bastionv1.ObjectRef{Name: "ready"}, CronFormat: "0 0 29 2 *"}}
		},
		func(o readyObject) { o.(*bastionv1.Schedule).Spec.CronFormat = "0 0 28 2 *" }},
	{"Integration",
		func(ns string) readyObject {
			return &bastionv1.Integration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ready"},
				Spec: bastionv1.IntegrationSpec{DisplayName: "Ready", TemplateRef: &bastionv1.ObjectRef{Name: "ready"}}}
		},
		func(o readyObject) { o.(*bastionv1.Integration).Spec.Searchable = true }},
	{"IntegrationAlias",
		func(ns string) readyObject {
			return &bastionv1.IntegrationAlias{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ready"},
				Spec: bastionv1.IntegrationAliasSpec{Alias: "ready-status-alias-1", IntegrationRef: &bastionv1.ObjectRef{Name: "ready"}}}
		},
		func(o readyObject) { o.(*bastionv1.IntegrationAlias).Spec.Alias = "ready-status-alias-2" }},
}

// Every kind's controller reports, as flux's do, a Ready condition and the
// generation its status describes; a change of the spec is observed too.
func TestStatusConvention_everyKindReportsReadyForItsGeneration(t *testing.T) {
	ctx := context.Background()
	ns := newIDProject(t, "ready-status")
	for _, kind := range readyKinds {
		t.Run(kind.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := kind.new(ns)
			g.Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			// Gone before the next kind: a Template still being deleted
			// would take the next kind's Schedule, which names it, along
			// (the cascade).
			t.Cleanup(func() {
				_ = k8sClient.Delete(ctx, obj)
				NewWithT(t).Eventually(func() bool {
					return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), kind.new(ns)))
				}, timeout, interval).Should(BeTrue(), "%s %s is not gone", kind.name, obj.GetName())
			})
			key := client.ObjectKeyFromObject(obj)

			g.Eventually(observedGeneration(ctx, key, kind.new(ns)), timeout, interval).Should(BeNumerically("==", 1))

			g.Eventually(func(g Gomega) {
				current := kind.new(ns)
				g.Expect(k8sClient.Get(ctx, key, current)).To(Succeed())
				kind.change(current)
				g.Expect(k8sClient.Update(ctx, current)).To(Succeed())
			}, timeout, interval).Should(Succeed())
			g.Eventually(observedGeneration(ctx, key, kind.new(ns)), timeout, interval).Should(BeNumerically("==", 2))
		})
	}
}

// observedGeneration reads the object and answers the generation its
// status describes, once status.observedGeneration and the Ready
// condition agree with metadata.generation (else 0).
func observedGeneration(ctx context.Context, key client.ObjectKey, into readyObject) func(g Gomega) int64 {
	return func(g Gomega) int64 {
		g.Expect(k8sClient.Get(ctx, key, into)).To(Succeed())
		ready := meta.FindStatusCondition(*into.StatusConditions(), bastionv1.ConditionReady)
		if ready == nil || ready.ObservedGeneration != into.GetGeneration() || *into.StatusObservedGeneration() != into.GetGeneration() {
			return 0
		}
		g.Expect(ready.Reason).NotTo(BeEmpty())
		return into.GetGeneration()
	}
}
