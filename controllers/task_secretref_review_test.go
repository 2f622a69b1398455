package controllers_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

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

// TestReview_aKubectlTaskCannotMountAKeysSecretAsItsAnswers: a kubectl user
// with rights on Tasks only (no right to read Secrets) names a key's
// Secret (an ssh key the template does not use) as the Task's secretRef.
// Its keys are neither "var." nor "env.", so taskRulesProblem sees no name
// to refuse, and the run mounts the key into the task pod, where the
// runner never redacts it (it is not used as a key). With a limit
// "@/bastion/secrets/prod-ssh/ssh-privatekey" ansible prints it into the
// log. A Task's secretRef should name only its own answers' Secret (the
// API's: labelled task-secrets, of this template, owned by no other Task).
func TestReview_aKubectlTaskCannotMountAKeysSecretAsItsAnswers(t *testing.T) {
	p := newTaskProject(t, "review-secretref-key", 0)
	p.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "prod-ssh", Labels: map[string]string{bastionv1.LabelKeyType: string(bastionv1.KeyTypeSSH)}},
		Data:       map[string][]byte{"ssh-privatekey": []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nREVIEW-CANARY\n-----END OPENSSH PRIVATE KEY-----\n")},
	})
	p.task("steal-key", "deploy-site", func(s *bastionv1.TaskSpec) {
		s.SecretRef = &bastionv1.ObjectRef{Name: "prod-ssh"}
		s.Limit = "@/bastion/secrets/prod-ssh/ssh-privatekey"
	})
	if job := p.jobOrFailure("steal-key"); job != nil {
		t.Errorf("a Task naming a key's Secret as its answers got a Job (mounts prod-ssh: %v)", mounts(job, "prod-ssh"))
	}
}

// TestReview_aKubectlTaskCannotTakeAnotherTasksAnswers: a Task names, as its
// secretRef, the answers' Secret the API wrote for another user's task.
// It runs with that user's secret answers, and when it ends
// deleteOwnSecret deletes the Secret (it carries the task-secrets label),
// so the other task, still waiting, loses its answers.
func TestReview_aKubectlTaskCannotTakeAnotherTasksAnswers(t *testing.T) {
	p := newTaskProject(t, "review-secretref-task", 0)
	p.template("asks-password", func(s *bastionv1.TemplateSpec) {
		s.SurveyVars = []bastionv1.SurveyVar{{Name: "db_password", Title: "Password", Type: "secret"}}
	})
	p.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "victim-answers", Labels: map[string]string{
			bastionv1.LabelTaskSecrets: "true", bastionv1.LabelTemplate: "asks-password",
		}},
		Data: map[string][]byte{"var.db_password": []byte("VICTIM-PASSWORD")},
	})
	p.task("thief", "asks-password", func(s *bastionv1.TaskSpec) { s.SecretRef = &bastionv1.ObjectRef{Name: "victim-answers"} })
	if job := p.jobOrFailure("thief"); job != nil {
		t.Errorf("a Task naming another task's answers got a Job (mounts victim-answers: %v)", mounts(job, "victim-answers"))
		p.runToEnd("thief", true)
	}
	err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: "victim-answers"}, &corev1.Secret{})
	if apierrors.IsNotFound(err) {
		t.Error("the thief's end deleted another task's answers' Secret")
	}
}

// TestReview_aKubectlTaskWithALimitNamingAFileFails: the second door of the
// limit attack (see apiserver's TestReview_aTaskRunnersLimitCannotNameAFile
// and internal/runner's TestReview_aLimitNamingAFileNeverPrintsTheFile):
// a Task applied with kubectl whose limit has a pattern starting with "@"
// must fail before any Job, as POST /tasks should refuse it.
func TestReview_aKubectlTaskWithALimitNamingAFileFails(t *testing.T) {
	p := newTaskProject(t, "review-limit-file", 0)
	p.task("read-file", "deploy-site", func(s *bastionv1.TaskSpec) { s.Limit = "web1,@/bastion/secrets/deploy-key/password" })
	if job := p.jobOrFailure("read-file"); job != nil {
		t.Errorf("a Task whose limit names a file got a Job (limit %q)", p.get("read-file").Spec.Limit)
	}
}

// TestReview_heldDuplicateAndEscapedKeysInAKubectlTasksExtraVars: what the
// review tried that held. A Task applied with kubectl whose extraVars
// repeat a key around a forbidden one, or spell ansible_host with a JSON
// escape, fails naming ansible_host: the check and the runner read the
// same decoded object.
func TestReview_heldDuplicateAndEscapedKeysInAKubectlTasksExtraVars(t *testing.T) {
	p := newTaskProject(t, "review-dup-keys", 0)
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
