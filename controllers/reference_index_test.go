package controllers_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/kinds"
)

// The manager's cache indexes every kind that refers to something by what
// it refers to, whichever reconciler owns the kind: the API answers /refs
// and refuses deletes from this index. A kind without it fails the list.
func TestReferenceIndex_isRegisteredForEveryKindThatRefers(t *testing.T) {
	if !suiteCacheSynced(t.Context()) {
		t.Fatal("the manager's cache never synced")
	}
	for _, kind := range kinds.All() {
		if len(kind.Targets()) == 0 {
			continue
		}
		err := suiteCache.List(context.Background(), kind.NewObjectList(),
			client.MatchingFields{kinds.ReferencesField: kind.Targets()[0].IndexKey("anything")})
		if err != nil {
			t.Errorf("%s: listing by %s: %v", kind.KindName(), kinds.ReferencesField, err)
		}
	}
}

// A schedule (its own reconciler) and a template (a ResourceReconciler)
// are found by what they refer to, and each only by that.
func TestReferenceIndex_findsTheSchedulesAndTemplatesThatReferToAnObject(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(suiteCacheSynced(ctx)).To(BeTrue(), "the manager's cache never synced")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "reference-index"}}
	g.Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	tpl := &bastionv1.Template{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "deploy"}, Spec: bastionv1.TemplateSpec{
		DisplayName: "Deploy", App: bastionv1.AppAnsible, Playbook: "site.yml",
		RepositoryRef: bastionv1.ObjectRef{Name: "app"}, EnvironmentRef: bastionv1.ObjectRef{Name: "prod"},
		Vaults: []bastionv1.TemplateVault{{Name: "vault", KeyRef: bastionv1.ObjectRef{Name: "vault-key"}}},
	}}
	sch := &bastionv1.Schedule{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "nightly"}, Spec: bastionv1.ScheduleSpec{
		TemplateRef: bastionv1.ObjectRef{Name: "deploy"}, CronFormat: "0 0 * * *", Active: true,
		RunOnlyOnNewCommit: true, RepositoryRef: &bastionv1.ObjectRef{Name: "app"},
	}}
	g.Expect(k8sClient.Create(ctx, tpl)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, sch)).To(Succeed())

	names := func(target kinds.Target, name string) []string {
		referrers, err := kinds.Referring(ctx, suiteCache, ns.Name, target, name)
		g.Expect(err).NotTo(HaveOccurred())
		var out []string
		for _, r := range referrers {
			out = append(out, r.Kind.KindName()+"/"+r.Object.GetName())
		}
		return out
	}
	g.Eventually(func() []string { return names(kinds.RefRepository, "app") }, timeout, interval).
		Should(ConsistOf("template/deploy", "schedule/nightly"))
	g.Expect(names(kinds.RefTemplate, "deploy")).To(ConsistOf("schedule/nightly"))
	g.Expect(names(kinds.RefKey, "vault-key")).To(ConsistOf("template/deploy"))
	// A plain Secret of that name is not the key the template uses.
	g.Expect(names(kinds.RefSecret, "vault-key")).To(BeEmpty())
	g.Expect(names(kinds.RefEnvironment, "app")).To(BeEmpty())
}
