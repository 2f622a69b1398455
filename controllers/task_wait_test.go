package controllers_test

import (
	"context"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers"
)

// expectWaiting waits until the task waits with Ready=False for reason,
// its message naming what is missing.
func (p *taskProject) expectWaiting(name, reason, missing string) {
	p.t.Helper()
	p.g.Eventually(func(g Gomega) {
		task := &bastionv1.Task{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: name}, task)).To(Succeed())
		g.Expect(task.Status.Status).To(Equal(bastionv1.TaskWaiting), "task %s: %s", name, task.Status.Message)
		cond := meta.FindStatusCondition(task.Status.Conditions, bastionv1.ConditionReady)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(cond.Reason).To(Equal(reason))
		g.Expect(cond.Message).To(ContainSubstring("waiting for " + missing))
	}, timeout, interval).Should(Succeed())
}

// A task that arrives before its template, and a template before its
// repository, waits and then runs: the order of a GitOps apply.
func TestTaskReconciler_waitsForItsTemplateAndInputs(t *testing.T) {
	p := newTaskProject(t, "tasks-wait", 0)
	p.task("early", "late", nil)
	p.expectWaiting("early", bastionv1.ReasonWaitingForTemplate, `template "late"`)

	p.template("late", func(s *bastionv1.TemplateSpec) { s.RepositoryRef = bastionv1.ObjectRef{Name: "late-repo"} })
	p.expectWaiting("early", bastionv1.ReasonWaitingForInputs, `repository "late-repo"`)

	p.create(&bastionv1.Repository{ObjectMeta: metav1.ObjectMeta{Name: "late-repo"}, Spec: bastionv1.RepositorySpec{
		DisplayName: "Late", GitURL: "https://git.example.com/late.git", GitBranch: "main", SSHKeyRef: bastionv1.ObjectRef{Name: "late-key"},
	}})
	p.expectWaiting("early", bastionv1.ReasonWaitingForInputs, `key "late-key"`)

	// Keys are Secrets, which are polled rather than watched.
	p.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "late-key",
		Labels: map[string]string{bastionv1.LabelKeyType: string(bastionv1.KeyTypeNone)}}})
	task := p.waitStatus("early", bastionv1.TaskStarting)
	// The wait is over: Ready now sums up the task's state.
	ready := meta.FindStatusCondition(task.Status.Conditions, bastionv1.ConditionReady)
	p.g.Expect(ready).NotTo(BeNil())
	p.g.Expect(ready.Status).To(Equal(metav1.ConditionUnknown))
	p.g.Expect(ready.Reason).To(Equal("Starting"))
	p.job("early")
}

// A task whose template never comes stays waiting through the grace
// period, then fails saying what it waited for.
func TestTaskReconciler_failsWhenItsTemplateNeverComes(t *testing.T) {
	p := newTaskProject(t, "tasks-missing", 0)
	p.task("orphan", "no-such-template", nil)
	p.expectWaiting("orphan", bastionv1.ReasonWaitingForTemplate, `template "no-such-template"`)
	p.g.Consistently(func() bastionv1.TaskStatusValue { return p.get("orphan").Status.Status }, "1s", interval).
		Should(Equal(bastionv1.TaskWaiting))

	// The reconciler's clock is the suite's fake one: step it past the grace.
	suiteClock.Step(controllers.DefaultInputGrace)
	task := p.waitStatus("orphan", bastionv1.TaskError)
	p.g.Expect(task.Status.Message).To(Equal(`template "no-such-template" not found (waited 2m0s for it)`))
	ready := meta.FindStatusCondition(task.Status.Conditions, bastionv1.ConditionReady)
	p.g.Expect(ready).NotTo(BeNil())
	p.g.Expect([]string{string(ready.Status), ready.Reason, ready.Message}).To(Equal(
		[]string{"False", "Failed", `template "no-such-template" not found (waited 2m0s for it)`}))
}

// Stopping a task that waits for its inputs stops it at once.
func TestTaskReconciler_aWaitingTaskStopsAtOnce(t *testing.T) {
	p := newTaskProject(t, "tasks-wait-stop", 0)
	p.task("waiter", "not-yet", nil)
	p.expectWaiting("waiter", bastionv1.ReasonWaitingForTemplate, `template "not-yet"`)
	p.update("waiter", func(task *bastionv1.Task) { task.Spec.Stop = bastionv1.StopForce })
	p.g.Expect(p.waitStatus("waiter", bastionv1.TaskStopped).Status.Message).To(Equal("stopped before it started"))
}

// The samples applied in the worst order a GitOps tool could choose, the
// task first and the keys last, into a project of their own: no task
// fails for ordering, every one starts.
func TestSamples_inAnyOrderNoTaskFailsForOrdering(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(k8sClient.Create(ctx, newProject("samples-reversed"))).To(Succeed())
	p := &taskProject{t: t, g: g, ns: bastionv1.ProjectNamespace("samples-reversed")}
	g.Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKey{Name: p.ns}, &corev1.Namespace{}) }, timeout, interval).Should(Succeed())
	samples := readSamples(t)
	var tasks []string
	for _, s := range slices.Backward(samples) {
		switch s.obj.GetKind() {
		case "Project", "Namespace", "User":
			continue
		case "Task":
			tasks = append(tasks, s.obj.GetName())
		}
		obj := s.obj.DeepCopy()
		obj.SetNamespace(p.ns)
		g.Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "%s", s)
	}
	g.Expect(tasks).NotTo(BeEmpty())
	for _, name := range tasks {
		task := p.waitStatus(name, bastionv1.TaskStarting)
		g.Expect(task.Status.Message).To(BeEmpty())
		p.job(name)
	}
}
