package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/nsaccess"
)

const (
	timeout  = 10 * time.Second
	interval = 100 * time.Millisecond
)

func newProject(name string) *bastionv1.Project {
	return &bastionv1.Project{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       bastionv1.ProjectSpec{DisplayName: "Project " + name},
	}
}

func readyCondition(g Gomega, name string) *metav1.Condition {
	p := &bastionv1.Project{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Name: name}, p)).To(Succeed())
	return meta.FindStatusCondition(p.Status.Conditions, bastionv1.ConditionReady)
}

func TestProjectReconciler_createsNamespaceAndReportsReady(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(k8sClient.Create(ctx, newProject("web"))).To(Succeed())

	ns := &corev1.Namespace{}
	g.Eventually(func() error {
		return k8sClient.Get(ctx, client.ObjectKey{Name: "bastion-web"}, ns)
	}, timeout, interval).Should(Succeed())
	g.Expect(ns.Labels).To(HaveKeyWithValue(bastionv1.LabelProject, "web"))
	g.Expect(ns.OwnerReferences).To(ContainElement(HaveField("Name", "web")))

	g.Eventually(func(g Gomega) {
		p := &bastionv1.Project{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "web"}, p)).To(Succeed())
		g.Expect(p.Status.Namespace).To(Equal("bastion-web"))
		cond := meta.FindStatusCondition(p.Status.Conditions, bastionv1.ConditionReady)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(cond.Reason).To(Equal(bastionv1.ReasonReconciled))
		g.Expect(p.Finalizers).To(ContainElement(bastionv1.ProjectFinalizer))
	}, timeout, interval).Should(Succeed())

	// The manager's rights on Secrets there: its namespace role, bound to
	// its ServiceAccount before the project reports ready.
	binding := &rbacv1.RoleBinding{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "bastion-web", Name: nsaccess.BindingName}, binding)).To(Succeed())
	g.Expect(binding.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: suiteOptions.Namespaces.Role}))
	g.Expect(binding.Subjects).To(Equal([]rbacv1.Subject{{Kind: "ServiceAccount", Name: "bastion-manager", Namespace: "bastion-system"}}))

	// A hand edit of the binding is undone on the next reconcile.
	binding.Subjects[0].Name = "someone-else"
	g.Expect(k8sClient.Update(ctx, binding)).To(Succeed())
	touch := &bastionv1.Project{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "web"}, touch)).To(Succeed())
	touched := touch.DeepCopy()
	touched.Spec.AlertChat = "touched"
	// A merge patch: the reconciler may be writing the project's status.
	g.Expect(k8sClient.Patch(ctx, touched, client.MergeFrom(touch))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(binding), binding)).To(Succeed())
		g.Expect(binding.Subjects[0].Name).To(Equal("bastion-manager"))
	}, timeout, interval).Should(Succeed())
}

func TestProjectReconciler_refusesANamespaceThatBelongsToSomethingElse(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	foreign := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: bastionv1.ProjectNamespace("taken")}}
	g.Expect(k8sClient.Create(ctx, foreign)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, newProject("taken"))).To(Succeed())

	g.Eventually(func(g Gomega) {
		cond := readyCondition(g, "taken")
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(cond.Reason).To(Equal(bastionv1.ReasonNamespaceConflict))
		g.Expect(cond.Message).To(ContainSubstring("bastion-taken"))
	}, timeout, interval).Should(Succeed())

	// The foreign namespace is left alone.
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(foreign), foreign)).To(Succeed())
	g.Expect(foreign.OwnerReferences).To(BeEmpty())
}

func TestProjectReconciler_deletesItsNamespaceWithTheProject(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	project := newProject("short-lived")
	g.Expect(k8sClient.Create(ctx, project)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cond := readyCondition(g, "short-lived")
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
	}, timeout, interval).Should(Succeed())

	logged := len(suiteLogs.String())
	g.Expect(k8sClient.Delete(ctx, project)).To(Succeed())

	// envtest runs no namespace controller, so a deleted namespace stays
	// Terminating: what proves the delete is its deletion timestamp.
	g.Eventually(func(g Gomega) {
		ns := &corev1.Namespace{}
		err := k8sClient.Get(ctx, client.ObjectKey{Name: "bastion-short-lived"}, ns)
		if !apierrors.IsNotFound(err) {
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ns.DeletionTimestamp).NotTo(BeNil())
		}
	}, timeout, interval).Should(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: "short-lived"}, &bastionv1.Project{}))
	}, timeout, interval).Should(BeTrue())

	// The deletion is no error: the reconciles its namespace's events
	// queue after the project went log nothing. One worker takes the
	// queue in order, so once a project created now is Ready, those
	// reconciles have run.
	witness := newProject("after-short-lived")
	g.Expect(k8sClient.Create(ctx, witness)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cond := readyCondition(g, witness.Name)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
	}, timeout, interval).Should(Succeed())
	g.Expect(suiteLogs.String()[logged:]).NotTo(ContainSubstring(`"Project":{"name":"short-lived"}`))
}

func TestProjectCRD_rejectsInvalidSpecs(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct {
		project *bastionv1.Project
		message string
	}{
		"name too long for its namespace": {
			project: newProject(strings.Repeat("a", 56)),
			message: "at most 55 characters",
		},
		"name with a dot": {
			project: newProject("my.project"),
			message: "DNS label",
		},
		"negative max parallel tasks": {
			project: func() *bastionv1.Project {
				p := newProject("negative")
				p.Spec.MaxParallelTasks = -1
				return p
			}(),
			message: "spec.maxParallelTasks",
		},
		"no display name": {
			project: &bastionv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "nameless"}},
			message: "spec.displayName",
		},
		"unknown role": {
			project: func() *bastionv1.Project {
				p := newProject("roles")
				p.Spec.Members = []bastionv1.ProjectMember{{User: "alice", Role: "superuser"}}
				return p
			}(),
			message: "spec.members[0].role",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			err := k8sClient.Create(ctx, tc.project)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected Invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.message))
		})
	}
}

func TestProjectReconciler_adoptsANamespaceThatClaimsIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	// Applied in one go with its project, as GitOps tools do: the namespace
	// may exist first, labelled for the project.
	claimed := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: bastionv1.ProjectNamespace("gitops"), Labels: map[string]string{bastionv1.LabelProject: "gitops"},
	}}
	g.Expect(k8sClient.Create(ctx, claimed)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, newProject("gitops"))).To(Succeed())

	g.Eventually(func(g Gomega) {
		cond := readyCondition(g, "gitops")
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
		ns := &corev1.Namespace{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(claimed), ns)).To(Succeed())
		g.Expect(metav1.GetControllerOf(ns)).NotTo(BeNil())
		g.Expect(metav1.GetControllerOf(ns).Name).To(Equal("gitops"))
	}, timeout, interval).Should(Succeed())

	// A label naming another project is no claim.
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: bastionv1.ProjectNamespace("mislabelled"), Labels: map[string]string{bastionv1.LabelProject: "someone-else"},
	}}
	g.Expect(k8sClient.Create(ctx, other)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, newProject("mislabelled"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		cond := readyCondition(g, "mislabelled")
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal(bastionv1.ReasonNamespaceConflict))
	}, timeout, interval).Should(Succeed())
}
