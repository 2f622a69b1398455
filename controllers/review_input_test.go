package controllers_test

import (
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// A task deleted before it finished (kubectl delete, a template's cascade)
// leaves no input Secret behind, with its runner's token and runspec: the
// envtest apiserver, like `bastion dev`, runs no garbage collector, so the
// owner reference alone deletes nothing.
func TestTaskReconciler_deletingAnUnfinishedTaskDeletesItsInputSecret(t *testing.T) {
	p := newTaskProject(t, "tasks-delinput", 0)
	task := p.task("doomed", "deploy-site", nil)
	p.startPod("doomed")
	p.waitStatus("doomed", bastionv1.TaskRunning)
	ctx := context.Background()
	key := client.ObjectKey{Namespace: p.ns, Name: bastionv1.TaskInputSecretName(task)}
	p.g.Expect(k8sClient.Get(ctx, key, &corev1.Secret{})).To(Succeed())

	p.g.Expect(k8sClient.Delete(ctx, p.get("doomed"))).To(Succeed())
	p.g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(task), &bastionv1.Task{}))
	}, timeout, interval).Should(BeTrue())
	p.g.Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &corev1.Secret{})) }, timeout, interval).
		Should(BeTrue(), "the deleted task's input Secret (its token) is deleted")
}

// A Task created again under the name of an earlier one (GitOps re-applies
// it, `kubectl replace --force`) meets that task's input Secret if it is
// still there: it must not run the earlier runspec (another playbook,
// another inventory) nor accept the earlier runner's token.
func TestTaskReconciler_aStaleInputSecretOfTheSameNameIsNotReused(t *testing.T) {
	p := newTaskProject(t, "tasks-staleinput", 0)
	stale, err := json.Marshal(runspec.Spec{Namespace: p.ns, Name: "again", Playbook: "evil.yml"})
	p.g.Expect(err).NotTo(HaveOccurred())
	p.create(&corev1.Secret{
		// As prepareRun made it for the earlier task "again".
		ObjectMeta: metav1.ObjectMeta{Name: "again-input", Labels: map[string]string{launch.LabelTask: "again"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: bastionv1.GroupVersion.String(), Kind: "Task", Name: "again",
				UID: "0b5e1e7e-0000-4000-8000-000000000001", Controller: ptr.To(true)}}},
		Data: map[string][]byte{runspec.TaskFile: stale, runspec.TokenFile: []byte("stale-token")},
	})
	p.task("again", "deploy-site", nil)
	p.job("again")
	task := p.get("again")

	secret := &corev1.Secret{}
	p.g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "again-input"}, secret)).To(Succeed())
	p.g.Expect(metav1.IsControlledBy(secret, task)).To(BeTrue(), "the input Secret is this task's")
	p.g.Expect(string(secret.Data[runspec.TokenFile])).NotTo(Equal("stale-token"))
	var spec runspec.Spec
	p.g.Expect(json.Unmarshal(secret.Data[runspec.TaskFile], &spec)).To(Succeed())
	p.g.Expect(spec.Playbook).To(Equal("site.yml"))
}

// A Task whose input Secret's name (<task>-input) is the name of a Secret
// that is no task's input at all (a key, someone's credentials) neither
// runs with it nor deletes it: the task fails, saying why, and the Secret
// stays as it was. A kubectl user who may create Tasks may not thereby
// delete the namespace's Secrets.
func TestTaskReconciler_aSecretThatMerelySharesTheInputsNameIsNeverUsedNorDeleted(t *testing.T) {
	p := newTaskProject(t, "tasks-inputclash", 0)
	ctx := context.Background()
	victim := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "prod-input", Labels: map[string]string{bastionv1.LabelKeyType: string(bastionv1.KeyTypeLoginPassword)}},
		Type:       corev1.SecretTypeBasicAuth,
		Data:       map[string][]byte{"username": []byte("root"), "password": []byte("PROD-CANARY")},
	}
	p.create(victim)
	p.task("prod", "deploy-site", nil)
	failed := p.waitStatus("prod", bastionv1.TaskError)
	p.g.Expect(failed.Status.Message).To(ContainSubstring("prod-input"))

	p.g.Eventually(func() []string { return p.get("prod").Finalizers }, timeout, interval).ShouldNot(ContainElement("automation.bastion.dev/task-run"))
	p.g.Expect(k8sClient.Delete(ctx, p.get("prod"))).To(Succeed())
	p.g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: p.ns, Name: "prod"}, &bastionv1.Task{}))
	}, timeout, interval).Should(BeTrue())
	got := &corev1.Secret{}
	p.g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: p.ns, Name: "prod-input"}, got)).To(Succeed(), "the key is not deleted")
	p.g.Expect(got.UID).To(Equal(victim.UID))
	p.g.Expect(string(got.Data["password"])).To(Equal("PROD-CANARY"))
}
