package controllers_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// resourceConditions reads the status conditions of obj.
func resourceConditions(obj client.Object) []metav1.Condition {
	if status, ok := obj.(bastionv1.ReadyStatus); ok {
		return *status.StatusConditions()
	}
	panic("no conditions for " + obj.GetName())
}

// expectReady waits until obj's Ready condition has status and reason, is
// about obj's current generation, and its message contains each of parts.
func expectReady(t *testing.T, obj client.Object, status metav1.ConditionStatus, reason string, parts ...string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		cond := meta.FindStatusCondition(resourceConditions(obj), bastionv1.ConditionReady)
		g.Expect(cond).NotTo(BeNil(), "%s has no Ready condition", obj.GetName())
		g.Expect(cond.Status).To(Equal(status), cond.Message)
		g.Expect(cond.Reason).To(Equal(reason))
		g.Expect(cond.ObservedGeneration).To(Equal(obj.GetGeneration()))
		for _, part := range parts {
			g.Expect(cond.Message).To(ContainSubstring(part))
		}
	}, timeout, interval).Should(Succeed())
}

func newInventory(ns, name, key string) *bastionv1.Inventory {
	return &bastionv1.Inventory{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: bastionv1.InventorySpec{
			DisplayName: name, Type: bastionv1.InventoryStatic, Inventory: "localhost",
			SSHKeyRef: bastionv1.ObjectRef{Name: key},
		},
	}
}

func TestInventoryReconciler_reportsAMissingKeyUntilItIsCreated(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newIDProject(t, "res-missing-key")

	inventory := newInventory(ns, "hosts", "deploy-key")
	g.Expect(k8sClient.Create(ctx, inventory)).To(Succeed())
	expectReady(t, inventory, metav1.ConditionFalse, bastionv1.ReasonMissingReference, `key "deploy-key" not found`)
	g.Expect(waitForID(t, inventory)).To(Equal(int64(1)))

	g.Expect(k8sClient.Create(ctx, newKeySecret(ns, "deploy-key"))).To(Succeed())
	expectReady(t, inventory, metav1.ConditionTrue, bastionv1.ReasonReconciled)
}

func TestResourceReconcilers_nameEveryMissingReferenceThenTurnReady(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newIDProject(t, "res-every-kind")

	inventory := newInventory(ns, "hosts", "user-key")
	inventory.Spec.BecomeKeyRef = &bastionv1.ObjectRef{Name: "sudo-key"}
	inventory.Spec.RepositoryRef = &bastionv1.ObjectRef{Name: "site"}
	repository := &bastionv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "site"},
		Spec: bastionv1.RepositorySpec{
			DisplayName: "Site", GitURL: "https://example.com/site.git", GitBranch: "main",
			SSHKeyRef: bastionv1.ObjectRef{Name: "git-key"},
		},
	}
	environment := &bastionv1.Environment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prod"},
		Spec:       bastionv1.EnvironmentSpec{DisplayName: "Prod", SecretRef: &bastionv1.ObjectRef{Name: "prod-vars"}},
	}
	integration := &bastionv1.Integration{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "push"},
		Spec: bastionv1.IntegrationSpec{
			DisplayName: "Push", TemplateRef: &bastionv1.ObjectRef{Name: "deploy"},
			AuthMethod: bastionv1.AuthToken, AuthHeader: "X-Token", AuthSecretRef: &bastionv1.ObjectRef{Name: "hook-secret"},
		},
	}
	alias := &bastionv1.IntegrationAlias{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "push-alias"},
		Spec: bastionv1.IntegrationAliasSpec{
			Alias: "a1b2c3d4e5f6g7h8i9", IntegrationRef: &bastionv1.ObjectRef{Name: "push"},
		},
	}
	for _, obj := range []client.Object{inventory, repository, environment, integration, alias} {
		g.Expect(k8sClient.Create(ctx, obj)).To(Succeed(), obj.GetName())
	}

	expectReady(t, inventory, metav1.ConditionFalse, bastionv1.ReasonMissingReference,
		`key "user-key" not found`, `key "sudo-key" not found`)
	expectReady(t, repository, metav1.ConditionFalse, bastionv1.ReasonMissingReference, `key "git-key" not found`)
	expectReady(t, environment, metav1.ConditionFalse, bastionv1.ReasonMissingReference, `secret "prod-vars" not found`)
	expectReady(t, integration, metav1.ConditionFalse, bastionv1.ReasonMissingReference,
		`template "deploy" not found`, `key "hook-secret" not found`)
	// The alias's integration exists, so the alias is ready at once.
	expectReady(t, alias, metav1.ConditionTrue, bastionv1.ReasonReconciled)

	plainVars := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prod-vars"}}
	template := &bastionv1.Template{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deploy"},
		Spec: bastionv1.TemplateSpec{
			DisplayName: "Deploy", Playbook: "site.yml",
			RepositoryRef: bastionv1.ObjectRef{Name: "site"}, EnvironmentRef: bastionv1.ObjectRef{Name: "prod"},
		},
	}
	for _, obj := range []client.Object{
		newKeySecret(ns, "user-key"), newKeySecret(ns, "sudo-key"), newKeySecret(ns, "git-key"),
		newKeySecret(ns, "hook-secret"), plainVars, template,
	} {
		g.Expect(k8sClient.Create(ctx, obj)).To(Succeed(), obj.GetName())
	}
	for _, obj := range []client.Object{inventory, repository, environment, integration, alias} {
		expectReady(t, obj, metav1.ConditionTrue, bastionv1.ReasonReconciled)
	}

	// A referenced object that goes away is missing again.
	g.Expect(k8sClient.Delete(ctx, template)).To(Succeed())
	expectReady(t, integration, metav1.ConditionFalse, bastionv1.ReasonMissingReference, `template "deploy" not found`)
}

func TestResourceReconcilers_aSecretIsAKeyOnlyWithTheKeyTypeLabel(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newIDProject(t, "res-key-label")

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deploy-key"}}
	g.Expect(k8sClient.Create(ctx, secret)).To(Succeed())
	inventory := newInventory(ns, "hosts", "deploy-key")
	g.Expect(k8sClient.Create(ctx, inventory)).To(Succeed())
	expectReady(t, inventory, metav1.ConditionFalse, bastionv1.ReasonMissingReference, `secret "deploy-key" is not a key`)

	secret.Labels = map[string]string{bastionv1.LabelKeyType: string(bastionv1.KeyTypeNone)}
	g.Expect(k8sClient.Update(ctx, secret)).To(Succeed())
	expectReady(t, inventory, metav1.ConditionTrue, bastionv1.ReasonReconciled)
}

func TestResourceReconcilers_viewsAreReadyWithAnID(t *testing.T) {
	ns := newIDProject(t, "res-view")
	view := newView(ns, "ops", nil)
	NewWithT(t).Expect(k8sClient.Create(context.Background(), view)).To(Succeed())
	expectReady(t, view, metav1.ConditionTrue, bastionv1.ReasonReconciled)
	NewWithT(t).Expect(waitForID(t, view)).To(Equal(int64(1)))
}

func TestIntegrationReconciler_givesMatchersAndValuesWithoutIDsDistinctIDs(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newIDProject(t, "res-integration-items")

	matcher := func(name string, id int64) bastionv1.IntegrationMatcher {
		return bastionv1.IntegrationMatcher{ID: id, Name: name, MatchType: "header", Method: "equals", Key: "X-Event", Value: name}
	}
	value := func(name string) bastionv1.IntegrationExtractValue {
		return bastionv1.IntegrationExtractValue{Name: name, ValueSource: "header", Key: "X-" + name, Variable: name}
	}
	integration := &bastionv1.Integration{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "push"},
		Spec: bastionv1.IntegrationSpec{
			DisplayName: "Push",
			// "dup" repeats the id of "kept": ids must be distinct, so the
			// later item gets a new one.
			Matchers:      []bastionv1.IntegrationMatcher{matcher("new", 0), matcher("kept", 7), matcher("dup", 7), matcher("other", 0)},
			ExtractValues: []bastionv1.IntegrationExtractValue{value("ref"), value("sha")},
		},
	}
	g.Expect(k8sClient.Create(ctx, integration)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(integration), integration)).To(Succeed())
		for _, m := range integration.Spec.Matchers {
			g.Expect(m.ID).To(BeNumerically(">", 0), "matcher %s", m.Name)
		}
		for _, v := range integration.Spec.ExtractValues {
			g.Expect(v.ID).To(BeNumerically(">", 0), "value %s", v.Name)
		}
	}, timeout, interval).Should(Succeed())

	matcherIDs := map[string]int64{}
	for _, m := range integration.Spec.Matchers {
		matcherIDs[m.Name] = m.ID
	}
	g.Expect(matcherIDs["kept"]).To(Equal(int64(7)))
	// New ids come after the kept one, so they can never collide with it.
	for _, name := range []string{"new", "dup", "other"} {
		g.Expect(matcherIDs[name]).To(BeNumerically(">", 7), name)
	}
	g.Expect(matcherIDs["new"]).NotTo(Equal(matcherIDs["dup"]))
	g.Expect(matcherIDs["new"]).NotTo(Equal(matcherIDs["other"]))
	g.Expect(matcherIDs["dup"]).NotTo(Equal(matcherIDs["other"]))
	g.Expect([]int64{integration.Spec.ExtractValues[0].ID, integration.Spec.ExtractValues[1].ID}).
		To(ConsistOf(int64(1), int64(2)))
	expectReady(t, integration, metav1.ConditionTrue, bastionv1.ReasonReconciled)
}

// Deleting a view moves its templates to no view, but not a template that
// a GitOps tool keeps: its source names the view, and the tool would put
// the reference back at its next sync. The view goes all the same.
func TestViewCascade_leavesAManagedTemplatesViewAsItsSourceSays(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newIDProject(t, "view-cascade")
	view := newView(ns, "ops", nil)
	g.Expect(k8sClient.Create(ctx, view)).To(Succeed())
	expectReady(t, view, metav1.ConditionTrue, bastionv1.ReasonReconciled)
	template := func(name string, labels map[string]string) *bastionv1.Template {
		return &bastionv1.Template{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: bastionv1.TemplateSpec{DisplayName: name, Playbook: "site.yml", ViewRef: &bastionv1.ObjectRef{Name: "ops"},
				RepositoryRef: bastionv1.ObjectRef{Name: "repo"}, EnvironmentRef: bastionv1.ObjectRef{Name: "env"}}}
	}
	plain := template("plain", nil)
	managed := template("managed", map[string]string{"app.kubernetes.io/managed-by": "argocd"})
	for _, tpl := range []*bastionv1.Template{plain, managed} {
		g.Expect(k8sClient.Create(ctx, tpl)).To(Succeed())
	}

	g.Expect(k8sClient.Delete(ctx, view)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(view), &bastionv1.View{}))
	}, timeout, interval).Should(BeTrue(), "the view is never deleted")
	// The cascade ran before the view's finalizer went: what it did is done.
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(plain), plain)).To(Succeed())
	g.Expect(plain.Spec.ViewRef).To(BeNil(), "a template of the deleted view still names it")
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(managed), managed)).To(Succeed())
	g.Expect(managed.Spec.ViewRef).To(Equal(&bastionv1.ObjectRef{Name: "ops"}), "the cascade rewrote a template Argo CD keeps")
}
