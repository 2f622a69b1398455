package controllers_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// expectNoRun checks that a task never got a run: no Job, no input Secret.
func (p *taskProject) expectNoRun(name string) {
	p.t.Helper()
	ctx := context.Background()
	err := k8sClient.Get(ctx, client.ObjectKey{Namespace: p.ns, Name: name}, &batchv1.Job{})
	p.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "task %s has a Job (%v)", name, err)
	err = k8sClient.Get(ctx, client.ObjectKey{Namespace: p.ns, Name: name + "-input"}, &corev1.Secret{})
	p.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "task %s has an input Secret (%v)", name, err)
}

// TestTaskReconciler_aTaskThatBreaksTheTemplatesRuleFailsWithoutARun: the
// second door. A Task applied with kubectl meets the rule POST /tasks
// applies (internal/taskvars): a name no task may set, a variable the
// template does not ask for, a secret answer of either, an environment
// variable in its Secret, an override the template does not allow, or a
// template whose survey asks for a forbidden name. It fails with the same
// words, and no Job is ever made.
func TestTaskReconciler_aTaskThatBreaksTheTemplatesRuleFailsWithoutARun(t *testing.T) {
	p := newTaskProject(t, "tasks-rules", 0)
	p.template("closed", func(s *bastionv1.TemplateSpec) { s.SurveyVars = []bastionv1.SurveyVar{{Name: "tag", Title: "Tag"}} })
	p.template("open", func(s *bastionv1.TemplateSpec) {
		s.AllowOverrideArgsInTask, s.AllowOverrideBranchInTask, s.AllowOverrideExtraVarsInTask = true, true, true
		s.AllowOverrideInventoryInTask, s.AllowOverridePlaybookInTask = true, true
	})
	p.template("asks-host", func(s *bastionv1.TemplateSpec) {
		s.SurveyVars = []bastionv1.SurveyVar{{Name: "ansible_host", Title: "Host"}}
	})
	answers := map[string]string{bastionv1.LabelTaskSecrets: "true"}
	p.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "answers-env", Labels: answers}, Data: map[string][]byte{"env.PATH": []byte("/tmp/evil")}})
	p.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "answers-host", Labels: answers}, Data: map[string][]byte{"var.ansible_host": []byte("elsewhere")}})
	vars := func(raw string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(raw)} }

	for _, tc := range []struct {
		name, template string
		mutate         func(*bastionv1.TaskSpec)
		want           string
	}{
		{"interpreter", "open", func(s *bastionv1.TaskSpec) {
			s.ExtraVars = vars(`{"ansible_python_interpreter":"/bin/sh -c 'echo PWNED' #"}`)
		}, `the variable "ansible_python_interpreter" cannot be set by a task: it changes how the run connects or what it executes`},
		{"not-asked", "closed", func(s *bastionv1.TaskSpec) { s.ExtraVars = vars(`{"tag":"v1","colour":"red"}`) },
			`the variable "colour" cannot be set by a task: it is not a survey variable of this template, and the template does not let a task set other variables (allow_override_extra_vars_in_task is off)`},
		{"secret-var", "open", func(s *bastionv1.TaskSpec) { s.SecretRef = &bastionv1.ObjectRef{Name: "answers-host"} },
			`the variable "ansible_host" cannot be set by a task: it changes how the run connects or what it executes`},
		{"secret-env", "open", func(s *bastionv1.TaskSpec) { s.SecretRef = &bastionv1.ObjectRef{Name: "answers-env"} },
			`the environment variable "PATH" cannot be set by a task: only the template's Environment sets the program's environment`},
		{"branch", "closed", func(s *bastionv1.TaskSpec) { s.GitBranch = "attacker" },
			"This template does not allow a task to override its branch (git_branch) (allow_override_branch_in_task is off)"},
		{"commit", "closed", func(s *bastionv1.TaskSpec) { s.CommitHash = "0123abcd" },
			"This template does not allow a task to override its commit (commit_hash) (allow_override_branch_in_task is off)"},
		{"inventory", "closed", func(s *bastionv1.TaskSpec) { s.InventoryRef = &bastionv1.ObjectRef{Name: "hosts"} },
			"This template does not allow a task to override its inventory (inventory_id) (allow_override_inventory_in_task is off)"},
		{"playbook", "closed", func(s *bastionv1.TaskSpec) { s.Playbook = "other.yml" },
			"This template does not allow a task to override its playbook (allow_override_playbook_in_task is off)"},
		{"arguments", "closed", func(s *bastionv1.TaskSpec) { s.Arguments = []string{"-e", "@/etc/shadow"} },
			"This template does not allow a task to override its arguments (allow_override_args_in_task is off)"},
		{"argument-extra-vars", "open", func(s *bastionv1.TaskSpec) { s.Arguments = []string{"-v", "-eansible_connection=local"} },
			`the argument "-e" cannot be set by a task: it changes how the run connects or what it executes`},
		{"limit-file", "closed", func(s *bastionv1.TaskSpec) { s.Limit = "web1,@/bastion/secrets/deploy-key/password" },
			"limit must be host patterns: it may not contain @ (ansible would read a file)"},
		{"forbidden-survey", "asks-host", nil,
			`template asks-host: survey variable "ansible_host": a task may not set this variable, since it changes how the run connects or what it executes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.task(tc.name, tc.template, tc.mutate)
			failed := p.waitStatus(tc.name, bastionv1.TaskError)
			p.g.Expect(failed.Status.Message).To(Equal(tc.want))
			p.expectNoRun(tc.name)
		})
	}

	// What the templates allow runs: a survey answer; with the opt-ins,
	// other variables and every override.
	p.task("asked", "closed", func(s *bastionv1.TaskSpec) { s.ExtraVars = vars(`{"tag":"v1"}`) })
	p.job("asked")
	p.task("opted-in", "open", func(s *bastionv1.TaskSpec) {
		s.ExtraVars = vars(`{"colour":"red"}`)
		s.GitBranch, s.CommitHash, s.Playbook, s.Arguments = "dev", "0123abcd", "other.yml", []string{"--check"}
		s.InventoryRef = &bastionv1.ObjectRef{Name: "hosts"}
	})
	p.job("opted-in")
}

// TestTaskReconciler_aTaskWaitingWhenItsTemplateClosesFailsBeforeItsRun:
// the rule is the template's as it is when the run starts, not only when
// the task was made: a queued task whose template turned its opt-in off
// fails instead of running.
func TestTaskReconciler_aTaskWaitingWhenItsTemplateClosesFailsBeforeItsRun(t *testing.T) {
	p := newTaskProject(t, "tasks-rules-late", 1)
	p.template("open", func(s *bastionv1.TemplateSpec) { s.AllowOverrideExtraVarsInTask = true })
	p.task("first", "open", nil)
	p.job("first") // holds the project's only slot
	p.task("second", "open", func(s *bastionv1.TaskSpec) { s.ExtraVars = &apiextensionsv1.JSON{Raw: []byte(`{"colour":"red"}`)} })
	p.waitStatus("second", bastionv1.TaskWaiting)

	tpl := &bastionv1.Template{}
	p.g.Eventually(func() error {
		if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "open"}, tpl); err != nil {
			return err
		}
		tpl.Spec.AllowOverrideExtraVarsInTask = false
		return k8sClient.Update(context.Background(), tpl)
	}, timeout, interval).Should(Succeed())
	p.update("first", func(task *bastionv1.Task) { task.Spec.Stop = bastionv1.StopForce })

	failed := p.waitStatus("second", bastionv1.TaskError)
	p.g.Expect(failed.Status.Message).To(ContainSubstring(`the variable "colour" cannot be set by a task`))
	p.expectNoRun("second")
}

// TestScheduleReconciler_theTaskOfAScheduleMeetsTheTemplatesRule: a
// Schedule carries no task parameters, so its tasks set nothing; but a
// template made with kubectl whose survey asks for a forbidden name fails
// the scheduled task too, with the reason, and nothing runs.
func TestScheduleReconciler_theTaskOfAScheduleMeetsTheTemplatesRule(t *testing.T) {
	f := newScheduleFixture(t, "sched-rules", "/srv/git/code")
	tpl := &bastionv1.Template{}
	f.g.Eventually(func() error {
		if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: f.namespace, Name: "nightly"}, tpl); err != nil {
			return err
		}
		tpl.Spec.SurveyVars = []bastionv1.SurveyVar{{Name: "ansible_ssh_common_args", Title: "SSH options"}}
		return k8sClient.Update(context.Background(), tpl)
	}, timeout, interval).Should(Succeed())
	s := f.schedule("rules", "*/5 * * * *", nil)
	f.reconcileAt(s.Name, f.firstRun(s).Add(10*time.Second))
	f.expectTaskCount(s.Name, 1)
	task := f.tasks(f.g, s.Name)[0]
	f.g.Eventually(func(g Gomega) {
		got := &bastionv1.Task{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(&task), got)).To(Succeed())
		g.Expect(got.Status.Status).To(Equal(bastionv1.TaskError))
		g.Expect(got.Status.Message).To(Equal(`template Nightly: survey variable "ansible_ssh_common_args": a task may not set this variable, since it changes how the run connects or what it executes`))
	}, timeout, interval).Should(Succeed())
	err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: f.namespace, Name: task.Name}, &batchv1.Job{})
	f.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the scheduled task has a Job (%v)", err)
}

// jobOrFailure waits until the task has a Job or has failed, and answers
// the Job (nil when the task failed without one).
func (p *taskProject) jobOrFailure(name string) *batchv1.Job {
	p.t.Helper()
	var job *batchv1.Job
	p.g.Eventually(func() bool {
		j := &batchv1.Job{}
		if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: name}, j); err == nil {
			job = j
			return true
		}
		return p.get(name).Status.Status == bastionv1.TaskError
	}, timeout, interval).Should(BeTrue())
	return job
}

// mounts reports whether the Job's pod mounts the Secret.
func mounts(job *batchv1.Job, secret string) bool {
	return slices.ContainsFunc(job.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == secret
	})
}

// TestTaskReconciler_aTaskCannotNameAKeysSecretAsItsAnswers: a kubectl
// user with rights on Tasks only (no right to read Secrets) names a key's
// Secret as the Task's secretRef, with a limit that would make ansible
// print it. The Secret is not a task's answers (no task-secrets label):
// the task fails saying so, with no Job, and the Secret is untouched.
func TestTaskReconciler_aTaskCannotNameAKeysSecretAsItsAnswers(t *testing.T) {
	p := newTaskProject(t, "secretref-key", 0)
	p.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "prod-ssh", Labels: map[string]string{bastionv1.LabelKeyType: string(bastionv1.KeyTypeSSH)}},
		Data:       map[string][]byte{"ssh-privatekey": []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nCANARY\n-----END OPENSSH PRIVATE KEY-----\n")},
	})
	p.task("steal-key", "deploy-site", func(s *bastionv1.TaskSpec) { s.SecretRef = &bastionv1.ObjectRef{Name: "prod-ssh"} })
	if job := p.jobOrFailure("steal-key"); job != nil {
		t.Fatalf("a Task naming a key's Secret as its answers got a Job (mounts prod-ssh: %v)", mounts(job, "prod-ssh"))
	}
	p.g.Expect(p.get("steal-key").Status.Message).To(Equal(
		`the Secret "prod-ssh" named by secretRef is not a task's secret answers (it lacks the automation.bastion.dev/task-secrets label): a task may name only its own`))
	p.expectNoRun("steal-key")
	key := &corev1.Secret{}
	p.g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "prod-ssh"}, key)).To(Succeed())
	p.g.Expect(key.OwnerReferences).To(BeEmpty())
}

// TestTaskReconciler_aTaskCannotTakeAnotherTasksAnswers: the answers'
// Secret the API wrote for one task (labelled, still unowned when the
// reconciler first sees the task) is claimed by that Task, by UID. A
// second Task naming it, as a kubectl user who read the first's spec
// would, fails with no Job, and its end does not delete the Secret; the
// owner's run mounts it, and the owner's end deletes it.
func TestTaskReconciler_aTaskCannotTakeAnotherTasksAnswers(t *testing.T) {
	p := newTaskProject(t, "secretref-task", 0)
	p.template("asks-password", func(s *bastionv1.TemplateSpec) {
		s.SurveyVars = []bastionv1.SurveyVar{{Name: "db_password", Title: "Password", Type: "secret"}}
	})
	p.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "victim-answers", Labels: map[string]string{
			bastionv1.LabelTaskSecrets: "true", bastionv1.LabelTemplate: "asks-password",
		}},
		Data: map[string][]byte{"var.db_password": []byte("VICTIM-PASSWORD")},
	})
	victim := p.task("victim", "asks-password", func(s *bastionv1.TaskSpec) { s.SecretRef = &bastionv1.ObjectRef{Name: "victim-answers"} })
	p.g.Expect(mounts(p.job("victim"), "victim-answers")).To(BeTrue())
	answers := &corev1.Secret{}
	p.g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "victim-answers"}, answers)).To(Succeed())
	p.g.Expect(answers.OwnerReferences).To(ConsistOf(And(HaveField("UID", victim.UID), HaveField("Controller", HaveValue(BeTrue())))))

	p.task("thief", "asks-password", func(s *bastionv1.TaskSpec) { s.SecretRef = &bastionv1.ObjectRef{Name: "victim-answers"} })
	if job := p.jobOrFailure("thief"); job != nil {
		t.Fatalf("a Task naming another task's answers got a Job (mounts victim-answers: %v)", mounts(job, "victim-answers"))
	}
	p.g.Expect(p.get("thief").Status.Message).To(Equal(
		`the Secret "victim-answers" named by secretRef belongs to another object: a task may name only its own secret answers`))
	p.g.Consistently(func() error {
		return k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "victim-answers"}, &corev1.Secret{})
	}, 2*time.Second, interval).Should(Succeed(), "the thief's end deleted another task's answers")

	p.runToEnd("victim", true)
	p.g.Eventually(func() bool {
		err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "victim-answers"}, &corev1.Secret{})
		return apierrors.IsNotFound(err)
	}, timeout, interval).Should(BeTrue(), "the owner's end keeps its answers")
}

// TestTaskReconciler_duplicateAndEscapedKeysInExtraVarsAreRefused: a Task
// applied with kubectl whose extraVars repeat a key around a forbidden
// one, spell ansible_host with a JSON escape, or nest it under vars fails
// naming the variable: the check and the runner read the same decoded
// object.
func TestTaskReconciler_duplicateAndEscapedKeysInExtraVarsAreRefused(t *testing.T) {
	p := newTaskProject(t, "dup-keys", 0)
	p.template("open", func(s *bastionv1.TemplateSpec) { s.AllowOverrideExtraVarsInTask = true })
	for name, raw := range map[string]string{
		"duplicate": `{"colour":"x","ansible_host":"attacker.example","colour":"y"}`,
		"escaped":   `{"\u0061nsible_host":"attacker.example"}`,
		"nested":    `{"colour":"x","vars":{"ansible_host":"attacker.example"}}`,
	} {
		p.task(name, "open", func(s *bastionv1.TaskSpec) { s.ExtraVars = &apiextensionsv1.JSON{Raw: []byte(raw)} })
		if job := p.jobOrFailure(name); job != nil {
			t.Errorf("%s: %s got a Job", name, raw)
			continue
		}
		if msg := p.get(name).Status.Message; !strings.Contains(msg, `"ansible_host"`) && !strings.Contains(msg, `"vars"`) {
			t.Errorf("%s: failed with %q, not naming the variable", name, msg)
		}
	}
}
