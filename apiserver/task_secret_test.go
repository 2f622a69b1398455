package apiserver_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// The answer to a survey variable of type secret never lands in the Task
// or in an API answer: it goes into a Secret of the task's own, which the
// Task names and which is deleted when the run ends. Answers sent in the
// environment (as an older client might) are moved there too.
func TestTasks_secretAnswersGoToTheTasksOwnSecretNeverIntoTheTask(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	tpl := p.createTemplate(t, "Rotate", func(b map[string]any) {
		b["survey_vars"] = []map[string]any{
			{"name": "host", "title": "Host", "required": true},
			{"name": "db_password", "title": "Database password", "type": "secret", "required": true},
		}
	})
	const canary = "canary-9f3b2-secret-answer"
	before := p.taskCount(t)
	for _, tc := range []struct {
		name string
		body map[string]any
		want string
	}{
		{"no secret answer", map[string]any{"template_id": tpl.ID, "environment": `{"host":"db1"}`}, "Database password is required"},
		{"secret not JSON", map[string]any{"template_id": tpl.ID, "environment": `{"host":"db1"}`, "secret": "db_password=" + canary},
			"Secret values must be valid JSON: an object of variable names to values"},
		{"a secret name that is not a variable name", map[string]any{"template_id": tpl.ID, "environment": `{"host":"db1"}`, "secret": `{"a b":"x","db_password":"y"}`},
			`secret variable "a b" must be a variable name: letters, digits and underscores, not starting with a digit`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, data := p.b.call("POST", p.path("/tasks"), tc.body)
			if code != http.StatusBadRequest || errorOf(t, data) != tc.want {
				t.Errorf("POST /tasks = %d %s, want 400 %q", code, data, tc.want)
			}
			if bytes.Contains(data, []byte(canary)) {
				t.Errorf("the refusal quotes the secret: %s", data)
			}
		})
	}
	if n := p.taskCount(t); n != before {
		t.Fatalf("refused starts made Tasks: %d → %d", before, n)
	}
	if secrets := p.taskSecrets(t); len(secrets) != 0 {
		t.Fatalf("refused starts left %d task Secrets", len(secrets))
	}

	for _, tc := range []struct {
		name string
		body map[string]any
	}{
		{"in the secret field", map[string]any{"template_id": tpl.ID, "environment": `{"host":"db1"}`, "secret": `{"db_password":"` + canary + `"}`}},
		{"in the environment, as an older client sends it", map[string]any{"template_id": tpl.ID, "environment": `{"host":"db1","db_password":"` + canary + `"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, data := p.b.call("POST", p.path("/tasks"), tc.body)
			if code != http.StatusCreated || bytes.Contains(data, []byte(canary)) {
				t.Fatalf("POST /tasks = %d %s, want 201 without the secret", code, data)
			}
			var started apiTask
			if err := json.Unmarshal(data, &started); err != nil {
				t.Fatal(err)
			}
			if started.Environment != `{"host":"db1"}` || started.Secret != "" {
				t.Errorf("the task answers environment %q and secret %q", started.Environment, started.Secret)
			}
			_, got := p.b.call("GET", p.path("/tasks/%d", started.ID), nil)
			if bytes.Contains(got, []byte(canary)) {
				t.Errorf("GET the task answers the secret: %s", got)
			}
			obj := p.taskObject(t, started.ID)
			raw, _ := json.Marshal(obj)
			if bytes.Contains(raw, []byte(canary)) {
				t.Errorf("the Task object holds the secret: %s", raw)
			}
			if obj.Spec.SecretRef == nil {
				t.Fatal("the Task names no Secret")
			}
			secret := &corev1.Secret{}
			if err := e.K8s.Get(t.Context(), client.ObjectKey{Namespace: p.ns, Name: obj.Spec.SecretRef.Name}, secret); err != nil {
				t.Fatal(err)
			}
			if string(secret.Data["var.db_password"]) != canary || len(secret.Data) != 1 {
				t.Errorf("the task's Secret holds %v, want only var.db_password", keysOfData(secret.Data))
			}
			// Owned by this Task alone, as its controller, whether the API or
			// the TaskReconciler (which may see the Task first) set it.
			if o := secret.OwnerReferences; len(o) != 1 || o[0].Kind != "Task" || o[0].UID != obj.UID || o[0].Controller == nil || !*o[0].Controller {
				t.Errorf("the task's Secret is not controlled by the Task alone: %+v", o)
			}

			// The run ends: its Secret goes with it.
			p.waitStatus(t, started.ID, bastionv1.TaskStarting)
			p.setStatus(t, started.ID, bastionv1.TaskError)
			eventually(t, 20*time.Second, func() (bool, string) {
				err := e.K8s.Get(t.Context(), client.ObjectKeyFromObject(secret), &corev1.Secret{})
				return client.IgnoreNotFound(err) == nil && err != nil, "the task's Secret outlives its run"
			})
		})
	}
}

// taskSecrets lists the Secrets the API wrote with tasks' secret answers.
func (p *tplProject) taskSecrets(t *testing.T) []corev1.Secret {
	t.Helper()
	list := &corev1.SecretList{}
	if err := p.e.K8s.List(t.Context(), list, client.InNamespace(p.ns), client.MatchingLabels{bastionv1.LabelTaskSecrets: "true"}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}
