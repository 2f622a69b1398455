package controllers_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers"
	"github.com/bastion-dev/bastion/internal/runproto"
	"github.com/bastion-dev/bastion/internal/runspec"
	"github.com/bastion-dev/bastion/internal/store"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden files")

func TestTaskReconciler_createsTheExpectedJobAndFollowsItToSuccess(t *testing.T) {
	p := newTaskProject(t, "tasks-golden", 0)
	p.task("run-1", "deploy-site", func(s *bastionv1.TaskSpec) { s.Message = "first run" })

	job := p.job("run-1")
	p.waitStatus("run-1", bastionv1.TaskStarting)
	assertGoldenJob(t, job)

	// The input Secret holds the runspec, and no key material.
	input := &corev1.Secret{}
	p.g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "run-1-input"}, input)).To(Succeed())
	p.g.Expect(string(input.Data[runspec.TaskFile])).To(ContainSubstring(`"url":"https://git.example.com/site.git"`))
	p.g.Expect(string(input.Data[runspec.TaskFile])).NotTo(ContainSubstring("s3cret"))
	p.g.Expect(input.Data[runspec.TokenFile]).To(HaveLen(64))
	p.g.Expect(p.get("run-1").Labels).To(HaveKey(bastionv1.LabelID), "a task created without an id gets one")
	// The runner's report is there, empty, from the write that recorded the
	// launch: the runner endpoint adds even the first facts to it without
	// reading the Task (apiserver TestRunnerFacts_aLaunchedTasksFirstFactsReadNothing).
	p.g.Expect(p.get("run-1").Status.Run).To(Equal(&bastionv1.TaskRun{}))

	p.startPod("run-1")
	running := p.waitStatus("run-1", bastionv1.TaskRunning)
	p.g.Expect(running.Status.Start).NotTo(BeNil())
	p.g.Expect(running.Status.End).To(BeNil())

	p.finishJob("run-1", true)
	done := p.waitStatus("run-1", bastionv1.TaskSuccess)
	p.g.Expect(done.Status.End).NotTo(BeNil())
	// The run's finalizer gives way to the history's (a user's delete
	// takes the stored output and summary along).
	p.g.Eventually(func() []string { return p.get("run-1").Finalizers }, timeout, interval).
		Should(Equal([]string{controllers.TaskHistoryFinalizer}))
	p.g.Eventually(func() bool {
		return k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "run-1-input"}, &corev1.Secret{}) != nil
	}, timeout, interval).Should(BeTrue(), "the input Secret (with the run's token) is deleted when the task ends")
}

// assertGoldenJob compares the Job's spec with testdata/job.golden.yaml
// (`go test ./controllers -run Golden -update` rewrites it).
func assertGoldenJob(t *testing.T, job *batchv1.Job) {
	t.Helper()
	spec := job.Spec.DeepCopy()
	// Fields the apiserver defaults or generates differ between runs.
	spec.Selector = nil
	spec.ManualSelector = nil
	delete(spec.Template.Labels, "batch.kubernetes.io/controller-uid")
	delete(spec.Template.Labels, "controller-uid")
	delete(spec.Template.Labels, "batch.kubernetes.io/job-name")
	delete(spec.Template.Labels, "job-name")
	got, err := yaml.Marshal(map[string]any{
		"labels":          job.Labels,
		"ownerReferences": []string{job.OwnerReferences[0].Kind + "/" + job.OwnerReferences[0].Name},
		"spec":            spec,
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "job.golden.yaml")
	if *updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("the Job differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestTaskReconciler_failsWithTheJobsReason(t *testing.T) {
	p := newTaskProject(t, "tasks-fail", 0)
	p.task("broken", "deploy-site", nil)
	p.runToEnd("broken", false)
	task := p.get("broken")
	p.g.Expect(task.Status.Message).To(ContainSubstring("BackoffLimitExceeded"))
	p.g.Expect(task.Status.End).NotTo(BeNil())
}

func TestTaskReconciler_failsAtOnceOnAnImagePullError(t *testing.T) {
	p := newTaskProject(t, "tasks-image", 0)
	p.task("no-image", "deploy-site", nil)
	job := p.job("no-image")
	pod := &corev1.Pod{}
	pod.Name, pod.Namespace, pod.Labels = "no-image-pod", p.ns, job.Spec.Template.Labels
	pod.Spec = job.Spec.Template.Spec
	p.g.Expect(k8sClient.Create(context.Background(), pod)).To(Succeed())
	pod.Status.Phase = corev1.PodPending
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "runner", Image: "bastion-runner-ansible:latest",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: `pull access denied for bastion-runner-ansible`}},
	}}
	p.g.Expect(k8sClient.Status().Update(context.Background(), pod)).To(Succeed())

	task := p.waitStatus("no-image", bastionv1.TaskError)
	p.g.Expect(task.Status.Message).To(ContainSubstring("ErrImagePull"))
	p.g.Expect(task.Status.Message).To(ContainSubstring("pull access denied"))
}

func TestTaskReconciler_queuesWhenProjectLimitReached(t *testing.T) {
	p := newTaskProject(t, "tasks-queue", 2)
	names := []string{"q1", "q2", "q3", "q4", "q5"}
	// Created within one second, as the API creates them: with ids stamped
	// in order of arrival, which is what first-in-first-out follows.
	for i, n := range names {
		task := &bastionv1.Task{Spec: bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: "deploy-site"}}}
		task.Name = n
		task.Labels = map[string]string{bastionv1.LabelID: strconv.Itoa(1001 + i)}
		p.create(task)
	}
	p.waitStatus("q1", bastionv1.TaskStarting)
	p.waitStatus("q2", bastionv1.TaskStarting)
	for _, n := range names[2:] {
		task := p.waitStatus(n, bastionv1.TaskWaiting)
		p.g.Eventually(func(g Gomega) {
			cond := meta.FindStatusCondition(p.get(n).Status.Conditions, bastionv1.ConditionQueued)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Message).To(Or(ContainSubstring("2 of 2 tasks of this project are running"), ContainSubstring("older tasks")))
		}, timeout, interval).Should(Succeed())
		p.g.Expect(jobExists(p.ns, task.Name)).To(BeFalse(), "a queued task has no Job")
	}

	// As tasks finish, the oldest waiting one starts, and never more than two run.
	p.runToEnd("q1", true)
	p.waitStatus("q3", bastionv1.TaskStarting)
	p.g.Consistently(func() bastionv1.TaskStatusValue { return p.get("q4").Status.Status }, "1s", interval).Should(Equal(bastionv1.TaskWaiting))
	p.runToEnd("q2", false)
	p.waitStatus("q4", bastionv1.TaskStarting)
	p.runToEnd("q3", true)
	p.waitStatus("q5", bastionv1.TaskStarting)
	p.g.Expect(meta.FindStatusCondition(p.get("q5").Status.Conditions, bastionv1.ConditionQueued)).To(BeNil())
}

// Raising a project's max_parallel_tasks starts its waiting tasks at
// once, oldest first, without waiting for a running one to finish.
func TestTaskReconciler_raisingTheProjectLimitStartsWaitingTasks(t *testing.T) {
	p := newTaskProject(t, "tasks-raise", 1)
	for i, n := range []string{"r1", "r2", "r3", "r4"} {
		task := &bastionv1.Task{Spec: bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: "deploy-site"}}}
		task.Name = n
		task.Labels = map[string]string{bastionv1.LabelID: strconv.Itoa(2001 + i)}
		p.create(task)
	}
	p.waitStatus("r1", bastionv1.TaskStarting)
	for _, n := range []string{"r2", "r3", "r4"} {
		p.waitStatus(n, bastionv1.TaskWaiting)
	}

	ctx := context.Background()
	p.g.Eventually(func() error {
		project := &bastionv1.Project{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: "tasks-raise"}, project); err != nil {
			return err
		}
		project.Spec.MaxParallelTasks = 3
		return k8sClient.Update(ctx, project)
	}, timeout, interval).Should(Succeed())
	p.waitStatus("r2", bastionv1.TaskStarting)
	p.waitStatus("r3", bastionv1.TaskStarting)
	p.g.Consistently(func() bastionv1.TaskStatusValue { return p.get("r4").Status.Status }, "1s", interval).Should(Equal(bastionv1.TaskWaiting))
	p.runToEnd("r1", true)
	p.waitStatus("r4", bastionv1.TaskStarting)
}

func TestTaskReconciler_stopsGracefullyThroughStopping(t *testing.T) {
	p := newTaskProject(t, "tasks-stop", 0)
	p.task("long", "deploy-site", nil)
	p.startPod("long")
	p.waitStatus("long", bastionv1.TaskRunning)

	// A finalizer holds the Job the way a pod finishing its grace period
	// would: the task must wait in stopping until the run is really gone.
	const hold = "test.bastion.dev/hold"
	setJobFinalizers(p, "long", []string{hold})

	p.update("long", func(task *bastionv1.Task) { task.Spec.Stop = bastionv1.StopGraceful })
	p.waitStatus("long", bastionv1.TaskStopping)
	p.g.Eventually(func() bool { return p.job("long").DeletionTimestamp != nil }, timeout, interval).Should(BeTrue(), "the launcher deletes the Job")
	p.g.Consistently(func() bastionv1.TaskStatusValue { return p.get("long").Status.Status }, "1s", interval).Should(Equal(bastionv1.TaskStopping))

	setJobFinalizers(p, "long", nil)
	p.g.Eventually(func() bool { return jobExists(p.ns, "long") }, timeout, interval).Should(BeFalse())
	stopped := p.waitStatus("long", bastionv1.TaskStopped)
	p.g.Expect(stopped.Status.End).NotTo(BeNil())
}

func TestTaskReconciler_forceStopIsImmediate(t *testing.T) {
	p := newTaskProject(t, "tasks-force", 0)
	p.task("stuck", "deploy-site", nil)
	p.startPod("stuck")
	p.waitStatus("stuck", bastionv1.TaskRunning)

	p.update("stuck", func(task *bastionv1.Task) { task.Spec.Stop = bastionv1.StopForce })
	task := p.waitStatus("stuck", bastionv1.TaskStopped)
	p.g.Expect(task.Status.Message).To(Equal("force stopped"))
	p.g.Eventually(func() bool { return jobExists(p.ns, "stuck") }, timeout, interval).Should(BeFalse())
	p.g.Eventually(func() error {
		return k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "stuck-pod"}, &corev1.Pod{})
	}, timeout, interval).ShouldNot(Succeed(), "the run's pod is killed")
}

func TestTaskReconciler_stoppingAQueuedTaskStopsItWithoutARun(t *testing.T) {
	p := newTaskProject(t, "tasks-stopq", 1)
	p.task("first", "deploy-site", nil)
	p.waitStatus("first", bastionv1.TaskStarting)
	p.task("second", "deploy-site", nil)
	p.waitStatus("second", bastionv1.TaskWaiting)
	p.update("second", func(task *bastionv1.Task) { task.Spec.Stop = bastionv1.StopGraceful })
	task := p.waitStatus("second", bastionv1.TaskStopped)
	p.g.Expect(task.Status.Start).To(BeNil())
	p.g.Expect(jobExists(p.ns, "second")).To(BeFalse())
}

// The runner reports facts in status.run (as the runner endpoint writes
// them); the reconciler alone derives the task's state from them and the
// user's spec.confirmed.
func TestTaskReconciler_confirmMovesAWaitingConfirmationTaskOn(t *testing.T) {
	p := newTaskProject(t, "tasks-confirm", 0)
	p.task("plan", "deploy-site", nil)
	p.startPod("plan")
	p.waitStatus("plan", bastionv1.TaskRunning)

	// The runner reports a Terraform plan with changes.
	p.report("plan", &bastionv1.TaskRun{Phase: runproto.PhaseWaitingConfirmation})
	p.waitStatus("plan", bastionv1.TaskWaitingConfirmation)
	p.g.Consistently(func() bastionv1.TaskStatusValue { return p.get("plan").Status.Status }, "1s", interval).
		Should(Equal(bastionv1.TaskWaitingConfirmation), "a running pod does not undo waiting_confirmation")

	p.update("plan", func(task *bastionv1.Task) { task.Spec.Confirmed = true })
	p.waitStatus("plan", bastionv1.TaskConfirmed)
	p.report("plan", &bastionv1.TaskRun{Phase: runproto.PhaseRunning})
	p.waitStatus("plan", bastionv1.TaskRunning)
	p.finishJob("plan", true)
	// No report of the end from this runner: past the grace for it
	// (TestTaskReconciler_aRunSeenEndedWaitsBrieflyForItsRunnersReport),
	// the Job's word holds.
	p.waitStatus("plan", bastionv1.TaskSuccess)
}

// The runner's exit, recorded with its last line, finishes the task while
// its pod is still running; the runner's message, not the Job's, is the
// task's. The status says what it was derived from.
func TestTaskReconciler_theRunnersReportedExitFinishesTheTask(t *testing.T) {
	p := newTaskProject(t, "tasks-exit", 0)
	p.task("ok", "deploy-site", nil)
	p.task("broken", "deploy-site", nil)
	for _, name := range []string{"ok", "broken"} {
		p.startPod(name)
		p.waitStatus(name, bastionv1.TaskRunning)
	}
	p.report("ok", &bastionv1.TaskRun{Commit: &bastionv1.TaskRunCommit{Hash: "0123abcd", Message: "Fix"},
		Exit: &bastionv1.TaskRunExit{Code: 0, Lines: 3, Time: metav1.Now()}})
	p.report("broken", &bastionv1.TaskRun{Exit: &bastionv1.TaskRunExit{Code: 1, Message: `cloning the repository: exit status 128`, Time: metav1.Now()}})

	ok := p.waitStatus("ok", bastionv1.TaskSuccess)
	p.g.Expect(ok.Status.End).NotTo(BeNil())
	p.g.Expect(ok.Status.CommitHash).To(Equal("0123abcd"))
	p.g.Expect(ok.Status.ObservedGeneration).To(Equal(ok.Generation))
	ready := meta.FindStatusCondition(ok.Status.Conditions, bastionv1.ConditionReady)
	p.g.Expect(ready).NotTo(BeNil())
	p.g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))

	broken := p.waitStatus("broken", bastionv1.TaskError)
	p.g.Expect(broken.Status.Message).To(Equal(`cloning the repository: exit status 128`))
	ready = meta.FindStatusCondition(broken.Status.Conditions, bastionv1.ConditionReady)
	p.g.Expect(ready).NotTo(BeNil())
	p.g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
	p.g.Expect(ready.Reason).To(Equal("Failed"))

	// Released only once the run is over: the finalizer waits for the Job.
	p.g.Consistently(func() []string { return p.get("ok").Finalizers }, "1s", interval).Should(ContainElement(controllers.TaskFinalizer))
	p.finishJob("ok", true)
	p.g.Eventually(func() []string { return p.get("ok").Finalizers }, timeout, interval).ShouldNot(ContainElement(controllers.TaskFinalizer))
}

// A run seen ended before its runner's report of the end waits a moment
// for that report (the cache is nearly always what is behind): the
// runner's word then makes the end, not the pod's. A runner that reports
// nothing more leaves the pod's word to hold after the grace.
func TestTaskReconciler_aRunSeenEndedWaitsBrieflyForItsRunnersReport(t *testing.T) {
	p := newTaskProject(t, "tasks-late-report", 0)
	for _, name := range []string{"late", "silent"} {
		p.task(name, "deploy-site", nil)
		p.startPod(name)
		p.waitStatus(name, bastionv1.TaskRunning)
		p.report(name, &bastionv1.TaskRun{Phase: runproto.PhaseRunning})
		p.g.Eventually(func() string { return runPhase(p.get(name)) }, timeout, interval).Should(Equal(runproto.PhaseRunning))
		p.finishJob(name, false)
	}
	p.g.Consistently(func() bastionv1.TaskStatusValue { return p.get("late").Status.Status }, "300ms", interval).
		Should(Equal(bastionv1.TaskRunning), "the task ended on the pod's word without waiting for its runner's")
	p.report("late", &bastionv1.TaskRun{Exit: &bastionv1.TaskRunExit{Code: 2, Message: "the playbook failed", Time: metav1.Now()}})
	late := p.waitStatus("late", bastionv1.TaskError)
	p.g.Expect(late.Status.Message).To(Equal("the playbook failed"))

	// Past the grace (a second), the failed Job's word holds.
	silent := p.waitStatus("silent", bastionv1.TaskError)
	p.g.Expect(silent.Status.Message).To(ContainSubstring("backoff limit"))
}

func runPhase(task *bastionv1.Task) string {
	if task.Status.Run == nil {
		return ""
	}
	return task.Status.Run.Phase
}

func TestTaskReconciler_buildVersionsIncrementAndDeploysInheritThem(t *testing.T) {
	p := newTaskProject(t, "tasks-versions", 0)
	p.template("build", func(s *bastionv1.TemplateSpec) { s.Type = bastionv1.TemplateBuild; s.StartVersion = "1.0.0" })
	p.template("rc", func(s *bastionv1.TemplateSpec) { s.Type = bastionv1.TemplateBuild; s.StartVersion = "v2-rc9" })
	p.template("deploy", func(s *bastionv1.TemplateSpec) {
		s.Type = bastionv1.TemplateDeploy
		s.BuildTemplateRef = &bastionv1.ObjectRef{Name: "build"}
		s.Autorun = true
	})

	for i, want := range []string{"1.0.0", "1.0.1", "1.0.2"} {
		name := "build-" + string(rune('a'+i))
		p.task(name, "build", nil)
		p.g.Eventually(func() string { return p.get(name).Status.Version }, timeout, interval).Should(Equal(want))
	}
	p.task("rc-a", "rc", nil)
	p.task("rc-b", "rc", nil)
	p.g.Eventually(func() []string {
		return []string{p.get("rc-a").Status.Version, p.get("rc-b").Status.Version}
	}, timeout, interval).Should(ConsistOf("v2-rc9", "v2-rc10"))

	// A failed build queues no autorun; a successful one does, with its version.
	p.runToEnd("build-a", false)
	p.runToEnd("build-b", true)
	autorun := "deploy-after-build-b"
	deploy := p.waitStatus(autorun, bastionv1.TaskStarting)
	p.g.Expect(deploy.Status.Version).To(Equal("1.0.1"))
	p.g.Expect(deploy.Spec.BuildTaskRef.Name).To(Equal("build-b"))
	p.g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "deploy-after-build-a"}, &bastionv1.Task{})).NotTo(Succeed())

	// A deploy of a build that did not succeed is refused with a reason.
	p.task("deploy-failed", "deploy", func(s *bastionv1.TaskSpec) { s.BuildTaskRef = &bastionv1.ObjectRef{Name: "build-a"} })
	refused := p.waitStatus("deploy-failed", bastionv1.TaskError)
	p.g.Expect(refused.Status.Message).To(ContainSubstring("did not succeed"))
	p.task("deploy-none", "deploy", nil)
	p.g.Expect(p.waitStatus("deploy-none", bastionv1.TaskError).Status.Message).To(Equal("Build version is required"))
}

func TestTaskReconciler_runspecCarriesVariablesArgumentsAndBranchPrecedence(t *testing.T) {
	p := newTaskProject(t, "tasks-runspec", 0)

	p.template("args", func(s *bastionv1.TemplateSpec) {
		s.Arguments = []string{"--tags", "web"}
		s.AllowOverrideArgsInTask = true
		s.AllowOverrideBranchInTask = true
		s.GitBranch = "template-branch"
	})
	p.task("with-args", "args", func(s *bastionv1.TaskSpec) {
		s.Arguments = []string{"--check"}
		s.GitBranch = "task-branch"
	})
	p.job("with-args")
	input := &corev1.Secret{}
	p.g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "with-args-input"}, input)).To(Succeed())
	spec := string(input.Data[runspec.TaskFile])
	p.g.Expect(spec).To(ContainSubstring(`"arguments":["--tags","web","--check"]`))
	p.g.Expect(spec).To(ContainSubstring(`"branch":"task-branch"`))
	p.g.Expect(spec).To(ContainSubstring(`"key":{"secret":"deploy-key","type":"login_password"}`))
	p.g.Expect(strings.Count(spec, "s3cret")).To(BeZero())

	job := p.job("with-args")
	var mounted []string
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			mounted = append(mounted, v.Secret.SecretName)
		}
	}
	// Only what this task needs: its input and the repository key (the
	// inventory's key is of type none).
	p.g.Expect(mounted).To(ConsistOf("with-args-input", "deploy-key"))
}

func setJobFinalizers(p *taskProject, name string, finalizers []string) {
	p.t.Helper()
	p.g.Eventually(func() error {
		job := p.job(name)
		job.Finalizers = finalizers
		return k8sClient.Update(context.Background(), job)
	}, timeout, interval).Should(Succeed())
}

func TestTemplateReconciler_namesMissingReferencesAndGetsAnID(t *testing.T) {
	p := newTaskProject(t, "tasks-template-refs", 0)
	p.template("dangling", func(s *bastionv1.TemplateSpec) {
		s.EnvironmentRef = bastionv1.ObjectRef{Name: "staging"}
		s.BuildTemplateRef = &bastionv1.ObjectRef{Name: "no-build"}
	})
	p.g.Eventually(func(g Gomega) {
		tpl := &bastionv1.Template{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "dangling"}, tpl)).To(Succeed())
		g.Expect(tpl.Labels).To(HaveKey(bastionv1.LabelID))
		cond := meta.FindStatusCondition(tpl.Status.Conditions, bastionv1.ConditionReady)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal(bastionv1.ReasonMissingReference))
		g.Expect(cond.Message).To(ContainSubstring(`environment "staging" not found`))
		g.Expect(cond.Message).To(ContainSubstring(`template "no-build" not found`))
	}, timeout, interval).Should(Succeed())

	p.create(&bastionv1.Environment{Spec: bastionv1.EnvironmentSpec{DisplayName: "Staging"}, ObjectMeta: metaName("staging")})
	p.template("no-build", func(*bastionv1.TemplateSpec) {})
	p.g.Eventually(func(g Gomega) {
		tpl := &bastionv1.Template{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "dangling"}, tpl)).To(Succeed())
		cond := meta.FindStatusCondition(tpl.Status.Conditions, bastionv1.ConditionReady)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
	}, timeout, interval).Should(Succeed())
}

func metaName(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

func TestTaskReconciler_prunesFinishedTasksBeyondTheTemplatesKeepLast(t *testing.T) {
	p := newTaskProject(t, "tasks-retention", 0)
	keep := int32(2)
	p.template("nightly", func(s *bastionv1.TemplateSpec) { s.KeepLast = &keep })

	// A task that is still running is never pruned, however old.
	p.task("n0", "nightly", func(*bastionv1.TaskSpec) {})
	p.startPod("n0")
	p.waitStatus("n0", bastionv1.TaskRunning)

	project := &bastionv1.Project{}
	p.g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Name: "tasks-retention"}, project)).To(Succeed())
	projectID, _ := strconv.ParseInt(project.Labels[bastionv1.LabelID], 10, 64)
	// Output of the task that will be pruned first.
	p.g.Expect(suiteStore.AppendLines(context.Background(), store.TaskKey{ProjectID: projectID, TaskID: 2001},
		[]store.Line{{Seq: 1, Time: time.Now(), Output: "kept"}})).To(Succeed())
	for i, n := range []string{"n1", "n2", "n3", "n4"} {
		task := &bastionv1.Task{Spec: bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: "nightly"}}}
		task.Name = n
		task.Labels = map[string]string{bastionv1.LabelID: strconv.Itoa(2001 + i)}
		p.create(task)
		p.runToEnd(n, i%2 == 0)
	}

	exists := func(name string) bool {
		return k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: name}, &bastionv1.Task{}) == nil
	}
	p.g.Eventually(func() []bool { return []bool{exists("n1"), exists("n2")} }, timeout, interval).Should(Equal([]bool{false, false}))
	p.g.Consistently(func() []bool { return []bool{exists("n0"), exists("n3"), exists("n4")} }, "1s", interval).Should(Equal([]bool{true, true, true}))
	// Tasks of other templates are not counted.
	p.g.Expect(exists("n0")).To(BeTrue())

	// The pruned tasks stay in the history: their summaries and output are
	// in the store.
	summaries, err := suiteStore.ListTaskSummaries(context.Background(), projectID, store.SummaryFilter{}, 0, 100)
	p.g.Expect(err).NotTo(HaveOccurred())
	byID := map[int64]string{}
	for _, s := range summaries {
		byID[s.TaskID] = s.Status + "/" + s.TplAlias
	}
	p.g.Expect(byID).To(HaveKeyWithValue(int64(2001), "success/nightly"))
	p.g.Expect(byID).To(HaveKeyWithValue(int64(2002), "error/nightly"))
	lines, err := suiteStore.Lines(context.Background(), store.TaskKey{ProjectID: projectID, TaskID: 2001}, 0, 10)
	p.g.Expect(err).NotTo(HaveOccurred())
	p.g.Expect(lines).To(HaveLen(1), "a pruned task's output stays")

	// Starts and results are in the project's activity log.
	p.g.Eventually(func(g Gomega) {
		events, err := suiteStore.Events(context.Background(), []int64{projectID}, 100)
		g.Expect(err).NotTo(HaveOccurred())
		var descriptions []string
		for _, e := range events {
			g.Expect(e.ObjectType).To(Equal("task"))
			descriptions = append(descriptions, e.Description)
		}
		g.Expect(descriptions).To(ContainElements(
			"Task 2001 of nightly started", "Task 2001 of nightly finished: success",
			"Task 2002 of nightly finished: failed"))
	}, timeout, interval).Should(Succeed())
}

func TestTaskReconciler_mountsTheTasksOwnSecretAndTheEnvironmentsButNeverCopiesThem(t *testing.T) {
	p := newTaskProject(t, "tasks-secrets", 0)
	p.create(&corev1.Secret{ObjectMeta: metaName("prod-secrets"), Data: map[string][]byte{"var.db_password": []byte("hunter2")}})
	p.create(&bastionv1.Environment{ObjectMeta: metaName("with-secrets"), Spec: bastionv1.EnvironmentSpec{
		DisplayName: "With secrets", SecretRef: &bastionv1.ObjectRef{Name: "prod-secrets"},
	}})
	p.template("secretive", func(s *bastionv1.TemplateSpec) {
		s.EnvironmentRef = bastionv1.ObjectRef{Name: "with-secrets"}
		s.SurveyVars = []bastionv1.SurveyVar{{Name: "token", Title: "Token", Type: "secret"}}
	})
	answers := metaName("run-answers")
	answers.Labels = map[string]string{bastionv1.LabelTaskSecrets: "true"}
	p.create(&corev1.Secret{ObjectMeta: answers, Data: map[string][]byte{"var.token": []byte("t0ken")}})
	p.task("secret-run", "secretive", func(s *bastionv1.TaskSpec) { s.SecretRef = &bastionv1.ObjectRef{Name: "run-answers"} })

	job := p.job("secret-run")
	var mounted []string
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			mounted = append(mounted, v.Secret.SecretName)
		}
	}
	p.g.Expect(mounted).To(ConsistOf("secret-run-input", "deploy-key", "prod-secrets", "run-answers"))
	input := &corev1.Secret{}
	p.g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "secret-run-input"}, input)).To(Succeed())
	spec := string(input.Data[runspec.TaskFile])
	p.g.Expect(spec).To(ContainSubstring(`"environmentSecret":"prod-secrets"`))
	p.g.Expect(spec).To(ContainSubstring(`"taskSecret":"run-answers"`))
	p.g.Expect(spec).NotTo(Or(ContainSubstring("hunter2"), ContainSubstring("t0ken")))
}

// TestTaskReconciler_runspecNamesTheVariablesWhoseValueIsTheTasks: the
// Environment's variables win over the task's, and the runspec names only
// the task's surviving ones (top-level), so the runner keeps them from
// ansible's templating while the Environment's Jinja still renders.
func TestTaskReconciler_runspecNamesTheVariablesWhoseValueIsTheTasks(t *testing.T) {
	p := newTaskProject(t, "tasks-taskvars", 0)
	p.create(&bastionv1.Environment{ObjectMeta: metaName("jinja"), Spec: bastionv1.EnvironmentSpec{
		DisplayName: "Jinja", ExtraVars: &apiextensionsv1.JSON{Raw: []byte(`{"sum":"{{ 1 + 1 }}","shared":"env"}`)},
	}})
	p.template("vars", func(s *bastionv1.TemplateSpec) {
		s.EnvironmentRef = bastionv1.ObjectRef{Name: "jinja"}
		s.AllowOverrideExtraVarsInTask = true
	})
	p.task("with-vars", "vars", func(s *bastionv1.TaskSpec) {
		s.ExtraVars = &apiextensionsv1.JSON{Raw: []byte(`{"answer":"{{ lookup('pipe','id') }}","shared":"task","nested":{"a":["{{ x }}"]}}`)}
	})
	p.job("with-vars")
	input := &corev1.Secret{}
	p.g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "with-vars-input"}, input)).To(Succeed())
	var spec runspec.Spec
	p.g.Expect(json.Unmarshal(input.Data[runspec.TaskFile], &spec)).To(Succeed())
	p.g.Expect(spec.TaskVarNames).To(Equal([]string{"answer", "nested"}))
	var vars map[string]any
	p.g.Expect(json.Unmarshal(spec.ExtraVars, &vars)).To(Succeed())
	p.g.Expect(vars).To(HaveKeyWithValue("shared", "env"))
	p.g.Expect(vars).To(HaveKeyWithValue("sum", "{{ 1 + 1 }}"))
	p.g.Expect(vars).To(HaveKeyWithValue("answer", "{{ lookup('pipe','id') }}"))

	// A task without variables names none (the field is left out).
	p.task("no-vars", "vars", nil)
	p.job("no-vars")
	p.g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "no-vars-input"}, input)).To(Succeed())
	p.g.Expect(string(input.Data[runspec.TaskFile])).NotTo(ContainSubstring("taskVarNames"))
}
