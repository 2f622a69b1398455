package controllers_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

// Ids travel in labels, and an object applied with one keeps it (backups,
// GitOps). A kubectl user of the project who applies an object under the id
// of another, then deletes it, must not wipe the other's stored history.

// idOf waits for obj's id label and returns it.
func idOf(g Gomega, obj client.Object) int64 {
	var id int64
	g.Eventually(func() bool {
		if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return false
		}
		var ok bool
		id, ok = ids.FromLabels(obj)
		return ok
	}, timeout, interval).Should(BeTrue(), "%s gets an id", obj.GetName())
	return id
}

// storeHistory stores a finished task's summary and output.
func storeHistory(g Gomega, key store.TaskKey, templateID int64) {
	ctx := context.Background()
	g.Expect(suiteStore.AppendLines(ctx, key, []store.Line{{Seq: 1, Time: time.Now(), Output: "audited"}})).To(Succeed())
	g.Expect(suiteStore.PutTaskSummary(ctx, store.TaskSummary{ProjectID: key.ProjectID, TaskID: key.TaskID,
		TemplateID: templateID, Status: string(bastionv1.TaskSuccess), Created: time.Now()})).To(Succeed())
}

func expectHistory(g Gomega, key store.TaskKey) {
	ctx := context.Background()
	_, err := suiteStore.TaskSummary(ctx, key)
	g.Expect(err).NotTo(HaveOccurred(), "task %d's summary is kept", key.TaskID)
	lines, err := suiteStore.Lines(ctx, key, 0, 10)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lines).To(HaveLen(1), "task %d's output is kept", key.TaskID)
}

func deleteAndWait(g Gomega, obj client.Object) {
	ctx := context.Background()
	g.Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)) }, timeout, interval).
		Should(BeTrue(), "%s is deleted", obj.GetName())
}

func TestTaskReconciler_aDeletedTaskUnderAFinishedTasksIDLeavesItsHistory(t *testing.T) {
	p := newTaskProject(t, "history-task", 0)
	pid := idOf(p.g, &bastionv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "history-task"}})
	finished := store.TaskKey{ProjectID: pid, TaskID: 4242}
	storeHistory(p.g, finished, 1)

	// Unfinished (its template never comes), under the finished task's id.
	forged := &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Name: "forged", Namespace: p.ns,
		Labels: map[string]string{bastionv1.LabelID: ids.Format(finished.TaskID)}},
		Spec: bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: "never"}}}
	p.g.Expect(k8sClient.Create(context.Background(), forged)).To(Succeed())
	p.g.Eventually(func() []string { return p.get("forged").Finalizers }, timeout, interval).Should(ContainElement("automation.bastion.dev/task-run"))
	deleteAndWait(p.g, forged)
	expectHistory(p.g, finished)

	// A task's own output, which no summary will show, still goes with it.
	own := p.task("own", "never", nil)
	ownKey := store.TaskKey{ProjectID: pid, TaskID: idOf(p.g, own)}
	p.g.Eventually(func() []string { return p.get("own").Finalizers }, timeout, interval).Should(ContainElement("automation.bastion.dev/task-run"))
	p.g.Expect(suiteStore.AppendLines(context.Background(), ownKey, []store.Line{{Seq: 1, Time: time.Now(), Output: "partial"}})).To(Succeed())
	deleteAndWait(p.g, own)
	lines, err := suiteStore.Lines(context.Background(), ownKey, 0, 10)
	p.g.Expect(err).NotTo(HaveOccurred())
	p.g.Expect(lines).To(BeEmpty(), "the unfinished task's own output is deleted")
}

func TestTemplateCascade_aTemplateUnderAnotherTemplatesIDLeavesItsHistory(t *testing.T) {
	p := newTaskProject(t, "history-tpl", 0)
	pid := idOf(p.g, &bastionv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "history-tpl"}})
	tid := idOf(p.g, &bastionv1.Template{ObjectMeta: metav1.ObjectMeta{Name: "deploy-site", Namespace: p.ns}})
	kept := store.TaskKey{ProjectID: pid, TaskID: 4343}
	storeHistory(p.g, kept, tid)

	impostor := &bastionv1.Template{ObjectMeta: metav1.ObjectMeta{Name: "impostor", Namespace: p.ns,
		Labels: map[string]string{bastionv1.LabelID: ids.Format(tid)}},
		Spec: bastionv1.TemplateSpec{DisplayName: "impostor", Playbook: "site.yml",
			RepositoryRef: bastionv1.ObjectRef{Name: "site"}, EnvironmentRef: bastionv1.ObjectRef{Name: "prod"}}}
	p.g.Expect(k8sClient.Create(context.Background(), impostor)).To(Succeed())
	p.g.Eventually(func() []string {
		got := &bastionv1.Template{}
		_ = k8sClient.Get(context.Background(), client.ObjectKeyFromObject(impostor), got)
		return got.Finalizers
	}, timeout, interval).Should(ContainElement(bastionv1.CascadeFinalizer))
	deleteAndWait(p.g, impostor)
	expectHistory(p.g, kept)
}

// A user's delete of a finished task (kubectl, like the API) takes its
// stored output and summary along; retention's prune keeps them
// (TestTaskReconciler_prunesFinishedTasksBeyondTheTemplatesKeepLast).
func TestTaskReconciler_aUsersDeleteOfAFinishedTaskTakesItsHistory(t *testing.T) {
	p := newTaskProject(t, "history-delete", 0)
	for _, name := range []string{"current", "legacy"} {
		p.task(name, "deploy-site", func(*bastionv1.TaskSpec) {})
		p.runToEnd(name, true)
		key := p.key(name)
		p.g.Expect(suiteStore.AppendLines(context.Background(), key, []store.Line{{Seq: 1, Time: time.Now(), Output: "done"}})).To(Succeed())
		p.g.Eventually(func() []string { return p.get(name).Finalizers }, timeout, interval).
			Should(Equal([]string{controllers.TaskHistoryFinalizer}))
		expectHistory(p.g, key)
	}

	// A task finished before the history finalizer existed has none: the
	// reconciler gives it one.
	p.update("legacy", func(t *bastionv1.Task) { t.Finalizers = nil })
	p.g.Eventually(func() []string { return p.get("legacy").Finalizers }, timeout, interval).
		Should(Equal([]string{controllers.TaskHistoryFinalizer}))

	for _, name := range []string{"current", "legacy"} {
		key := p.key(name)
		deleteAndWait(p.g, p.get(name))
		_, err := suiteStore.TaskSummary(context.Background(), key)
		p.g.Expect(err).To(MatchError(store.ErrNotFound), "%s's summary goes with it", name)
		lines, err := suiteStore.Lines(context.Background(), key, 0, 10)
		p.g.Expect(err).NotTo(HaveOccurred())
		p.g.Expect(lines).To(BeEmpty(), "%s's output goes with it", name)
	}
}
