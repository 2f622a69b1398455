package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/objname"
	"github.com/bastion-dev/bastion/internal/taskvars"
)

// A task's secret answers (survey variables of type secret, and the
// `secret` field of POST /tasks) never go into the Task: its spec is
// readable by anyone who may read tasks, and the API answers its
// environment. They go into a Secret of their own that the Task names
// (spec.secretRef); the runner reads it as extra variables (keys
// "var.<name>") and masks the values in the output, and the task
// reconciler deletes it when the run ends.

// secretVarName is what a secret answer's name may be: an Ansible and
// Terraform variable name, which is also a valid Secret key after "var.".
var secretVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseSecretAnswers reads the `secret` field: nothing, or a JSON object of
// names to values. Strings are kept as they are; numbers and booleans as
// their JSON text; null and empty values are no answer. The map is never
// nil: moveSecretAnswers adds to it.
func parseSecretAnswers(text string) (map[string]string, error) {
	if strings.TrimSpace(text) == "" {
		return map[string]string{}, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
		return nil, badRequest("Secret values must be valid JSON: an object of variable names to values")
	}
	answers := map[string]string{}
	for name, raw := range obj {
		if !secretVarName.MatchString(name) {
			return nil, invalidf("secret variable %q must be a variable name: letters, digits and underscores, not starting with a digit", name)
		}
		if value, filled := surveyValue(raw); filled {
			answers[name] = value
		}
	}
	return answers, nil
}

// moveSecretAnswers takes the answers to the template's secret survey
// variables out of the environment and into secrets (an answer in the
// `secret` field wins), so that a client that sends them with the other
// answers does not leave them in the Task. It returns the environment
// without them.
func moveSecretAnswers(survey []bastionv1.SurveyVar, env json.RawMessage, secrets map[string]string) (json.RawMessage, error) {
	if env == nil {
		return nil, nil
	}
	vars := map[string]json.RawMessage{}
	if err := json.Unmarshal(env, &vars); err != nil {
		return nil, badRequest("Environment and extra variables must be valid JSON")
	}
	moved := false
	for _, sv := range survey {
		raw, ok := vars[sv.Name]
		if sv.Type != "secret" || !ok {
			continue
		}
		delete(vars, sv.Name)
		moved = true
		if _, answered := secrets[sv.Name]; answered {
			continue
		}
		if value, filled := surveyValue(raw); filled {
			if !secretVarName.MatchString(sv.Name) {
				return nil, invalidf("secret variable %q must be a variable name: letters, digits and underscores, not starting with a digit", sv.Name)
			}
			secrets[sv.Name] = value
		}
	}
	if !moved {
		return env, nil
	}
	if len(vars) == 0 {
		return nil, nil
	}
	out, err := json.Marshal(vars)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// withAnswers is the environment with the secret answers added, for the
// survey's checks (a required secret variable is answered by either).
func withAnswers(env json.RawMessage, secrets map[string]string) json.RawMessage {
	if len(secrets) == 0 {
		return env
	}
	vars := map[string]any{}
	if env != nil {
		_ = json.Unmarshal(env, &vars)
	}
	for k, v := range secrets {
		vars[k] = v
	}
	out, _ := json.Marshal(vars)
	return out
}

// newTaskSecret writes the task's secret answers to a new Secret in the
// project's namespace; nil when there are none.
func (s *Server) newTaskSecret(ctx context.Context, a *projectAccess, template *bastionv1.Template, answers map[string]string) (*corev1.Secret, error) {
	if len(answers) == 0 {
		return nil, nil
	}
	data := map[string][]byte{}
	for name, value := range answers {
		data["var."+name] = []byte(value)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    a.namespace(),
			GenerateName: objname.GenerateName(template.Spec.DisplayName+" task secrets", "task-secrets"),
			Labels:       map[string]string{bastionv1.LabelTemplate: template.Name, bastionv1.LabelTaskSecrets: "true"},
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
	if err := s.opts.Client.Create(ctx, secret); err != nil {
		return nil, err
	}
	return secret, nil
}

// ownTaskSecret makes the Task the Secret's controller: the
// TaskReconciler then accepts it as the Task's answers, and the cluster's
// garbage collector removes it with the Task if the run never cleans it
// up. The reconciler may have claimed it first (the same owner: nothing to
// do). The patch carries the resourceVersion the Secret was created with,
// so it never replaces an owner someone else set in between; the
// reconciler then fails the task, which names another's Secret. A failure
// is logged, not answered: the Task exists already.
func (s *Server) ownTaskSecret(ctx context.Context, secret *corev1.Secret, task *bastionv1.Task) {
	if secret == nil {
		return
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if taskvars.OwnsSecret(task, secret.OwnerReferences) {
			return nil
		}
		if len(secret.OwnerReferences) > 0 {
			return errors.New("another object owns it")
		}
		patch := client.MergeFromWithOptions(secret.DeepCopy(), client.MergeFromWithOptimisticLock{})
		secret.OwnerReferences = []metav1.OwnerReference{taskvars.SecretOwner(task)}
		err := s.opts.Client.Patch(ctx, secret, patch)
		if apierrors.IsConflict(err) {
			if getErr := s.opts.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret); getErr != nil {
				return getErr
			}
		}
		return err
	})
	if err != nil {
		logAPI().Error(err, "making a task the owner of its secret answers", "namespace", secret.Namespace, "secret", secret.Name)
	}
}

// dropTaskSecret deletes the Secret of a task that could not be created.
func (s *Server) dropTaskSecret(ctx context.Context, secret *corev1.Secret) {
	if secret == nil {
		return
	}
	if err := s.opts.Client.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
		logAPI().Error(err, "deleting the secret answers of a task that was not created", "namespace", secret.Namespace, "secret", secret.Name)
	}
}
