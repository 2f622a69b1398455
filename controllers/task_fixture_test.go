package controllers_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// taskProject is a project with a key, a repository, an environment and a
// plain template, ready to run tasks.
type taskProject struct {
	t  testing.TB
	g  Gomega
	ns string
}

func newTaskProject(t testing.TB, name string, maxParallel int32) *taskProject {
	t.Helper()
	return newTaskProjectWith(t, name, func(p *bastionv1.Project) { p.Spec.MaxParallelTasks = maxParallel })
}

// newTaskProjectWith is newTaskProject with the Project's spec set by mutate.
func newTaskProjectWith(t testing.TB, name string, mutate func(*bastionv1.Project)) *taskProject {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	project := newProject(name)
	mutate(project)
	g.Expect(k8sClient.Create(ctx, project)).To(Succeed())
	ns := bastionv1.ProjectNamespace(name)
	g.Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}) }, timeout, interval).Should(Succeed())

	p := &taskProject{t: t, g: g, ns: ns}
	p.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "deploy-key", Labels: map[string]string{bastionv1.LabelKeyType: string(bastionv1.KeyTypeLoginPassword)}},
		Type:       corev1.SecretTypeBasicAuth,
		Data:       map[string][]byte{"username": []byte("deploy"), "password": []byte("s3cret")},
	})
	p.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "no-key", Labels: map[string]string{bastionv1.LabelKeyType: string(bastionv1.KeyTypeNone)}},
	})
	p.create(&bastionv1.Repository{ObjectMeta: metav1.ObjectMeta{Name: "site"}, Spec: bastionv1.RepositorySpec{
		DisplayName: "Site", GitURL: "https://git.example.com/site.git", GitBranch: "main", SSHKeyRef: bastionv1.ObjectRef{Name: "deploy-key"},
	}})
	p.create(&bastionv1.Environment{ObjectMeta: metav1.ObjectMeta{Name: "prod"}, Spec: bastionv1.EnvironmentSpec{DisplayName: "Production"}})
	p.create(&bastionv1.Inventory{ObjectMeta: metav1.ObjectMeta{Name: "hosts"}, Spec: bastionv1.InventorySpec{
		DisplayName: "Hosts", Type: bastionv1.InventoryStatic, Inventory: "[web]\nweb1\n", SSHKeyRef: bastionv1.ObjectRef{Name: "no-key"},
	}})
	p.template("deploy-site", func(*bastionv1.TemplateSpec) {})
	return p
}

func (p *taskProject) create(obj client.Object) {
	p.t.Helper()
	obj.SetNamespace(p.ns)
	p.g.Expect(k8sClient.Create(context.Background(), obj)).To(Succeed())
}

func (p *taskProject) template(name string, mutate func(*bastionv1.TemplateSpec)) {
	p.t.Helper()
	spec := bastionv1.TemplateSpec{
		DisplayName: name, Playbook: "site.yml",
		RepositoryRef: bastionv1.ObjectRef{Name: "site"}, EnvironmentRef: bastionv1.ObjectRef{Name: "prod"},
		InventoryRef: &bastionv1.ObjectRef{Name: "hosts"},
	}
	mutate(&spec)
	p.create(&bastionv1.Template{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
}

func (p *taskProject) task(name, template string, mutate func(*bastionv1.TaskSpec)) *bastionv1.Task {
	p.t.Helper()
	task := &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: template}}}
	if mutate != nil {
		mutate(&task.Spec)
	}
	p.create(task)
	return task
}

func (p *taskProject) get(name string) *bastionv1.Task {
	task := &bastionv1.Task{}
	p.g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: name}, task)).To(Succeed())
	return task
}

// waitStatus waits until the task reaches want, and returns it.
func (p *taskProject) waitStatus(name string, want bastionv1.TaskStatusValue) *bastionv1.Task {
	p.t.Helper()
	var task *bastionv1.Task
	p.g.Eventually(func(g Gomega) {
		task = &bastionv1.Task{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: name}, task)).To(Succeed())
		g.Expect(task.Status.Status).To(Equal(want), "task %s: %s", name, task.Status.Message)
	}, timeout, interval).Should(Succeed())
	return task
}

func (p *taskProject) job(name string) *batchv1.Job {
	p.t.Helper()
	job := &batchv1.Job{}
	p.g.Eventually(func() error {
		return k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: name}, job)
	}, timeout, interval).Should(Succeed())
	return job
}

func (p *taskProject) update(name string, mutate func(*bastionv1.Task)) {
	p.t.Helper()
	p.g.Eventually(func() error {
		task := p.get(name)
		mutate(task)
		return k8sClient.Update(context.Background(), task)
	}, timeout, interval).Should(Succeed())
}

// --- playing the kubelet -----------------------------------------------------

// startPod creates the Job's pod and marks it Running, as the kubelet would.
// report writes facts of the run into status.run as the runner endpoint
// does: a merge patch of those fields alone, under its field manager.
func (p *taskProject) report(name string, facts *bastionv1.TaskRun) {
	p.t.Helper()
	body, err := json.Marshal(map[string]any{"status": map[string]any{"run": facts}})
	p.g.Expect(err).NotTo(HaveOccurred())
	task := &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: name}}
	p.g.Expect(k8sClient.Status().Patch(context.Background(), task, client.RawPatch(types.MergePatchType, body),
		client.FieldOwner(bastionv1.RunFieldManager))).To(Succeed())
}

func (p *taskProject) startPod(task string) *corev1.Pod {
	p.t.Helper()
	ctx := context.Background()
	job := p.job(task)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: task + "-pod", Namespace: p.ns, Labels: job.Spec.Template.Labels},
		Spec:       job.Spec.Template.Spec,
	}
	p.g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	pod.Status.Phase = corev1.PodRunning
	p.g.Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
	return pod
}

// finishJob sets the Job's status as the job controller does on success or
// failure.
func (p *taskProject) finishJob(task string, success bool) {
	p.t.Helper()
	ctx := context.Background()
	p.g.Eventually(func() error {
		job := p.job(task)
		now := metav1.Now()
		start := metav1.NewTime(now.Add(-time.Second))
		job.Status.StartTime = &start
		if success {
			job.Status.Succeeded = 1
			job.Status.CompletionTime = &now
			job.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
			}
		} else {
			job.Status.Failed = 1
			job.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now, LastProbeTime: now},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now, LastProbeTime: now},
			}
		}
		return k8sClient.Status().Update(ctx, job)
	}, timeout, interval).Should(Succeed())
}

// runToEnd plays a whole run: pod running, then the Job finishing.
func (p *taskProject) runToEnd(task string, success bool) {
	p.t.Helper()
	p.startPod(task)
	p.waitStatus(task, bastionv1.TaskRunning)
	p.finishJob(task, success)
	if success {
		p.waitStatus(task, bastionv1.TaskSuccess)
	} else {
		p.waitStatus(task, bastionv1.TaskError)
	}
}

func jobExists(ns, name string) bool {
	return k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &batchv1.Job{}) == nil
}
