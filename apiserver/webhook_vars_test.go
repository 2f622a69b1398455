package apiserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestWebhooks_forbiddenValuesAndTaskParamsAnswerAReasonAndStartNothing: a
// webhook sender meets the rule of a task_runner (internal/taskvars). An
// extracted value or a task_params environment with a name no task may
// set, a variable that is not the template's survey's, or a branch or
// playbook the template does not let a task choose: the authentic request
// gets 200 with the reason, no task starts, and the sent value is nowhere.
// The template lets a task set arguments: task_params' arguments still
// meet the allow-list, and its limit never names a file.
func TestWebhooks_forbiddenValuesAndTaskParamsAnswerAReasonAndStartNothing(t *testing.T) {
	e := startEnv(t)
	f := newHookFixture(t, e)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.K8s.Get(t.Context(), client.ObjectKeyFromObject(f.tpl), f.tpl); err != nil {
			return err
		}
		f.tpl.Spec.AllowOverrideArgsInTask = true
		return e.K8s.Update(t.Context(), f.tpl)
	})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"host":"` + varsCanary + `","colour":"red"}`)
	value := func(variable, key string) []map[string]any {
		return []map[string]any{{"name": variable, "value_source": "body", "body_data_type": "json", "key": key, "variable": variable}}
	}
	var answers []string
	for _, tc := range []struct {
		name   string
		params map[string]any
		values []map[string]any
		reason string
	}{
		{"an extracted ansible_host", nil, value("ansible_host", "host"), forbiddenMsg("ansible_host")},
		{"an extracted ansible_python_interpreter", nil, value("ansible_python_interpreter", "host"), forbiddenMsg("ansible_python_interpreter")},
		{"an extracted value that is not a survey variable", nil, value("colour", "colour"), notSurveyMsg("colour")},
		{"task_params environment with ansible_ssh_common_args",
			map[string]any{"environment": map[string]any{"ansible_ssh_common_args": "-o ProxyCommand=" + varsCanary}}, nil,
			forbiddenMsg("ansible_ssh_common_args")},
		{"task_params playbook", map[string]any{"playbook": "other.yml"}, nil,
			"This template does not allow a task to override its playbook (allow_override_playbook_in_task is off)"},
		{"task_params git_branch", map[string]any{"git_branch": "attacker"}, nil,
			"This template does not allow a task to override its branch (git_branch) (allow_override_branch_in_task is off)"},
		{"task_params limit naming a file", map[string]any{"limit": "web1,@/etc/passwd"}, nil,
			"limit must be host patterns: it may not contain @ (ansible would read a file)"},
		{"task_params arguments with -e", map[string]any{"arguments": []string{"-e", "ansible_host=" + varsCanary}}, nil,
			argumentMsg("-e")},
		{"task_params arguments with --extra-vars @FILE", map[string]any{"arguments": []string{"-v", "--extra-vars=@/bastion/secrets/x"}}, nil,
			argumentMsg("--extra-vars")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fields := map[string]any{"name": tc.name, "auth_method": "token", "auth_header": "X-Token", "auth_secret_id": f.keyID}
			if tc.params != nil {
				fields["task_params"] = tc.params
			}
			name, url := f.integration(t, fields, nil, tc.values)
			code, data := deliver(t, url, body, map[string]string{"X-Token": webhookCanary})
			answers = append(answers, string(data))
			var msg struct {
				Message string `json:"message"`
			}
			want := `no task started: integration "` + tc.name + `": ` + tc.reason
			if code != http.StatusOK || json.Unmarshal(data, &msg) != nil || msg.Message != want {
				t.Errorf("delivery = %d %s, want 200 %q", code, data, want)
			}
			if tasks := e.tasksOf(t, f.ns, name); len(tasks) != 0 {
				t.Errorf("%d tasks started", len(tasks))
			}
		})
	}
	if haystack := strings.Join(answers, "\n") + e.Log.String(); strings.Contains(haystack, varsCanary) || strings.Contains(haystack, webhookCanary) {
		t.Error("a sent value or the webhook secret appears in an answer or the log")
	}
}
