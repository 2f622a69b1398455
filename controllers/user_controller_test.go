package controllers_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/users"
)

func userReady(g Gomega, name string) *metav1.Condition {
	u := &bastionv1.User{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Name: name}, u)).To(Succeed())
	return meta.FindStatusCondition(u.Status.Conditions, bastionv1.ConditionReady)
}

func TestUserReconciler_saysWhetherTheUserCanSignIn(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	// Applied with kubectl: no password yet.
	user := &bastionv1.User{ObjectMeta: metav1.ObjectMeta{Name: "carol"},
		Spec: bastionv1.UserSpec{Username: "carol", Name: "Carol", Email: "carol@example.com"}}
	g.Expect(k8sClient.Create(ctx, user)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cond := userReady(g, "carol")
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(cond.Reason).To(Equal(bastionv1.ReasonNoPassword))
		g.Expect(cond.Message).To(ContainSubstring("bastion user change-by-login --login carol"))
	}, timeout, interval).Should(Succeed())

	// The operator sets one, as the message says.
	store := &users.Store{Client: k8sClient, Namespace: suiteOptions.ManagerNamespace}
	g.Expect(store.SetPassword(ctx, user, "a-new-password")).To(Succeed())
	g.Eventually(func(g Gomega) {
		cond := userReady(g, "carol")
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
	}, timeout, interval).Should(Succeed())

	// External users sign in elsewhere.
	external := &bastionv1.User{ObjectMeta: metav1.ObjectMeta{Name: "dave"},
		Spec: bastionv1.UserSpec{Username: "dave", Name: "Dave", Email: "dave@example.com", External: true}}
	g.Expect(k8sClient.Create(ctx, external)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cond := userReady(g, "dave")
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
	}, timeout, interval).Should(Succeed())
}

// TestUserReconciler_marksALoginThatNamesTwoUsers: a User applied with
// kubectl whose username is another user's email (which the API refuses)
// is not Ready, and says why.
func TestUserReconciler_marksALoginThatNamesTwoUsers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	erin := &bastionv1.User{ObjectMeta: metav1.ObjectMeta{Name: "erin"},
		Spec: bastionv1.UserSpec{Username: "erin", Name: "Erin", Email: "erin@example.com", External: true}}
	g.Expect(k8sClient.Create(ctx, erin)).To(Succeed())
	mallory := &bastionv1.User{ObjectMeta: metav1.ObjectMeta{Name: "mallory"},
		Spec: bastionv1.UserSpec{Username: "ERIN@example.com", Name: "Mallory", Email: "mallory@example.com", External: true}}
	g.Expect(k8sClient.Create(ctx, mallory)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cond := userReady(g, "mallory")
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(cond.Reason).To(Equal(bastionv1.ReasonLoginConflict))
		g.Expect(cond.Message).To(ContainSubstring("another user's email"))
	}, timeout, interval).Should(Succeed())

	// Once the clash is gone, the other user is Ready again.
	g.Eventually(func(g Gomega) {
		g.Expect(userReady(g, "erin").Reason).To(Equal(bastionv1.ReasonLoginConflict))
	}, timeout, interval).Should(Succeed())
	g.Expect(k8sClient.Delete(ctx, mallory)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cond := userReady(g, "erin")
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
	}, timeout, interval).Should(Succeed())
}
