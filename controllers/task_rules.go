package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/taskvars"
)

// taskRulesProblem applies internal/taskvars to a task of template: what
// POST /tasks and webhooks refuse with a 400, a Task made another way
// (kubectl, a tool) fails on, before it is queued and again before its run
// starts (the template may have changed in between). It answers what the
// user reads on the failed task, "" when the task keeps the rules.
func (r *TaskReconciler) taskRulesProblem(ctx context.Context, task *bastionv1.Task, template *bastionv1.Template) (string, error) {
	if err := taskvars.CheckSurvey(&template.Spec); err != nil {
		return fmt.Sprintf("template %s: %v", template.Spec.DisplayName, err), nil
	}
	names, err := extraVarNames(task)
	if err != nil {
		return err.Error(), nil
	}
	secretNames, problem, err := r.taskSecretVarNames(ctx, task)
	if err != nil || problem != "" {
		return problem, err
	}
	if err := taskvars.CheckTask(&template.Spec, &task.Spec, append(names, secretNames...)); err != nil {
		return err.Error(), nil
	}
	return "", nil
}

// extraVarNames are the names of the task's extra variables.
func extraVarNames(task *bastionv1.Task) ([]string, error) {
	raw := rawOf(task.Spec.ExtraVars)
	if raw == nil || len(*raw) == 0 {
		return nil, nil
	}
	vars := map[string]json.RawMessage{}
	if err := json.Unmarshal(*raw, &vars); err != nil {
		return nil, fmt.Errorf("Environment and extra variables must be valid JSON: %v", err)
	}
	return slices.Collect(maps.Keys(vars)), nil
}

// taskSecretVarNames are the variables the task's own Secret sets (keys
// "var.NAME"). A task may not set the program's environment at all (keys
// "env.NAME"): only the Environment, which the managers wrote, does. A
// missing Secret is resolve's to report. Only the keys are looked at.
func (r *TaskReconciler) taskSecretVarNames(ctx context.Context, task *bastionv1.Task) (names []string, problem string, err error) {
	ref := task.Spec.SecretRef
	if ref == nil || ref.Name == "" {
		return nil, "", nil
	}
	secret := &corev1.Secret{}
	err = r.APIReader.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: ref.Name}, secret)
	if apierrors.IsNotFound(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	if problem, err := r.claimTaskSecret(ctx, task, secret); err != nil || problem != "" {
		return nil, problem, err
	}
	keys := slices.Collect(maps.Keys(secret.Data))
	sort.Strings(keys)
	for _, key := range keys {
		if name, ok := strings.CutPrefix(key, "env."); ok {
			return nil, fmt.Sprintf("the environment variable %q cannot be set by a task: only the template's Environment sets the program's environment", name), nil
		}
		if name, ok := strings.CutPrefix(key, "var."); ok {
			names = append(names, name)
		}
	}
	return names, "", nil
}

// claimTaskSecret makes sure the Secret the task names is its own secret
// answers: labelled as task secrets and controlled by this Task. Anything
// else a Task could name (a key's Secret, another task's answers) would be
// mounted into its run and, at its end, deleted. The API writes the Secret
// before the Task and owns it to the Task just after, so an unowned
// labelled Secret is claimed here: an update carrying the resourceVersion,
// so that of two Tasks naming it only one ever owns it. While another Task
// names the same unowned Secret, neither claims it (an error: retried),
// and the API's owner decides. A problem is the task's failure.
func (r *TaskReconciler) claimTaskSecret(ctx context.Context, task *bastionv1.Task, secret *corev1.Secret) (string, error) {
	if secret.Labels[bastionv1.LabelTaskSecrets] != "true" {
		return fmt.Sprintf("the Secret %q named by secretRef is not a task's secret answers (it lacks the %s label): a task may name only its own", secret.Name, bastionv1.LabelTaskSecrets), nil
	}
	if taskvars.OwnsSecret(task, secret.OwnerReferences) {
		return "", nil
	}
	if len(secret.OwnerReferences) > 0 {
		return fmt.Sprintf("the Secret %q named by secretRef belongs to another object: a task may name only its own secret answers", secret.Name), nil
	}
	shared, err := r.otherTaskNames(ctx, task, secret.Name)
	if err != nil {
		return "", err
	}
	if shared {
		return "", fmt.Errorf("the Secret %q is named by another Task too: waiting for its owner", secret.Name)
	}
	secret.OwnerReferences = []metav1.OwnerReference{taskvars.SecretOwner(task)}
	return "", r.Update(ctx, secret) // a conflict is retried, and then reads the owner
}

// otherTaskNames reports whether another Task of the namespace names the
// Secret as its secretRef.
func (r *TaskReconciler) otherTaskNames(ctx context.Context, task *bastionv1.Task, secret string) (bool, error) {
	tasks := &bastionv1.TaskList{}
	if err := r.APIReader.List(ctx, tasks, client.InNamespace(task.Namespace)); err != nil {
		return false, err
	}
	return slices.ContainsFunc(tasks.Items, func(t bastionv1.Task) bool {
		return t.UID != task.UID && t.Spec.SecretRef != nil && t.Spec.SecretRef.Name == secret
	}), nil
}
