package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// The values of every refused variable: none may come back in an answer
// or reach the log.
const varsCanary = "VARS-CANARY-echo-PWNED-7f31"

// forbiddenMsg is the 400 of a name no task may set (internal/taskvars).
func forbiddenMsg(name string) string {
	return fmt.Sprintf("the variable %q cannot be set by a task: it changes how the run connects or what it executes", name)
}

// notSurveyMsg is the 400 of a name the template does not let a task set.
func notSurveyMsg(name string) string {
	return fmt.Sprintf("the variable %q cannot be set by a task: it is not a survey variable of this template, "+
		"and the template does not let a task set other variables (allow_override_extra_vars_in_task is off)", name)
}

// TestTaskVars_everyDoorOfPOSTTasksRefusesWhatTheTemplateDoesNotAllow: the
// attack of issue #19 (ansible_python_interpreter in the environment) and
// its siblings, through the environment, the secret answers and the code
// and host overrides, on a template with no opt-in and on one with every
// opt-in. Each is a 400 naming the variable or field, with no Task and no
// Secret made and the value nowhere.
func TestTaskVars_everyDoorOfPOSTTasksRefusesWhatTheTemplateDoesNotAllow(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	survey := []map[string]any{{"name": "tag", "title": "Tag"}, {"name": "db_password", "title": "Password", "type": "secret"}}
	closed := p.createTemplate(t, "Hello Ansible", func(b map[string]any) { b["survey_vars"] = survey })
	open := p.createTemplate(t, "Open Ansible", func(b map[string]any) { allowEveryOverride(b); b["survey_vars"] = survey })
	script := p.createTemplate(t, "Open Bash", func(b map[string]any) { allowEveryOverride(b); b["app"] = "bash"; b["playbook"] = "run.sh" })
	plan := p.createTemplate(t, "Open Terraform", func(b map[string]any) { allowEveryOverride(b); b["app"] = "terraform"; b["playbook"] = "." })
	tasksBefore := p.taskCount(t)

	env := func(tpl apiTemplate, name string) map[string]any {
		vars, _ := json.Marshal(map[string]string{name: "/bin/sh -c 'echo " + varsCanary + "' #"})
		return map[string]any{"template_id": tpl.ID, "environment": string(vars)}
	}
	secret := func(tpl apiTemplate, name string) map[string]any {
		vars, _ := json.Marshal(map[string]string{name: varsCanary})
		return map[string]any{"template_id": tpl.ID, "secret": string(vars)}
	}
	override := func(tpl apiTemplate, field string, value any) map[string]any {
		return map[string]any{"template_id": tpl.ID, field: value}
	}
	var answers []string
	for _, tc := range []struct {
		name string
		body map[string]any
		want string
	}{
		// The attack, and the names it lists.
		{"ansible_python_interpreter in the environment", env(closed, "ansible_python_interpreter"), forbiddenMsg("ansible_python_interpreter")},
		{"ansible_python_interpreter even with the opt-in", env(open, "ansible_python_interpreter"), forbiddenMsg("ansible_python_interpreter")},
		{"ansible_ssh_common_args", env(open, "ansible_ssh_common_args"), forbiddenMsg("ansible_ssh_common_args")},
		{"ansible_host", env(open, "ansible_host"), forbiddenMsg("ansible_host")},
		{"ansible_connection", env(open, "ansible_connection"), forbiddenMsg("ansible_connection")},
		{"ansible_become_exe", env(open, "ansible_become_exe"), forbiddenMsg("ansible_become_exe")},
		{"a magic variable", env(open, "hostvars"), forbiddenMsg("hostvars")},
		{"another variable without the opt-in", env(closed, "colour"), notSurveyMsg("colour")},
		// The secret answers are the same door.
		{"ansible_become_password as a secret answer", secret(open, "ansible_become_password"), forbiddenMsg("ansible_become_password")},
		{"another secret answer without the opt-in", secret(closed, "api_token"), notSurveyMsg("api_token")},
		// bash and terraform: names of the program's environment.
		{"PATH for bash", env(script, "PATH"), forbiddenMsg("PATH")},
		{"BASH_ENV for bash", env(script, "BASH_ENV"), forbiddenMsg("BASH_ENV")},
		{"LD_PRELOAD for bash", env(script, "LD_PRELOAD"), forbiddenMsg("LD_PRELOAD")},
		{"GIT_SSH_COMMAND for bash", secret(script, "GIT_SSH_COMMAND"), forbiddenMsg("GIT_SSH_COMMAND")},
		{"TF_CLI_ARGS for terraform", env(plan, "TF_CLI_ARGS"), forbiddenMsg("TF_CLI_ARGS")},
		{"SSH_AUTH_SOCK for terraform", env(plan, "SSH_AUTH_SOCK"), forbiddenMsg("SSH_AUTH_SOCK")},
		// Code and hosts: only with the template's switch.
		{"a branch", override(closed, "git_branch", "attacker"), "This template does not allow a task to override its branch (git_branch) (allow_override_branch_in_task is off)"},
		{"a commit", override(closed, "commit_hash", "0123abcd"), "This template does not allow a task to override its commit (commit_hash) (allow_override_branch_in_task is off)"},
		{"an inventory", override(closed, "inventory_id", p.inv.id), "This template does not allow a task to override its inventory (inventory_id) (allow_override_inventory_in_task is off)"},
		{"a playbook", override(closed, "playbook", "other.yml"), "This template does not allow a task to override its playbook (allow_override_playbook_in_task is off)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, data := p.b.call("POST", p.path("/tasks"), tc.body)
			answers = append(answers, string(data))
			if code != http.StatusBadRequest || errorOf(t, data) != tc.want {
				t.Errorf("POST /tasks = %d %s, want 400 %q", code, data, tc.want)
			}
		})
	}
	if n := p.taskCount(t); n != tasksBefore {
		t.Errorf("refused starts made Tasks: %d → %d", tasksBefore, n)
	}
	if secrets := p.taskSecrets(t); len(secrets) != 0 {
		t.Errorf("refused starts left %d task Secrets", len(secrets))
	}
	if haystack := strings.Join(answers, "\n") + e.Log.String(); strings.Contains(haystack, varsCanary) {
		t.Error("a refused value appears in an answer or the log")
	}

	// What the templates allow: survey answers always; with the opt-in,
	// other variables and each override.
	p.startTask(t, map[string]any{"template_id": closed.ID, "environment": `{"tag":"v1"}`, "secret": `{"db_password":"x"}`})
	p.startTask(t, map[string]any{"template_id": open.ID, "environment": `{"tag":"v1","colour":"red"}`, "secret": `{"api_token":"x"}`,
		"git_branch": "dev", "commit_hash": "0123abcd", "inventory_id": p.inv.id, "playbook": "other.yml"})
	p.startTask(t, map[string]any{"template_id": script.ID, "environment": `{"path":"lower case is a plain variable","STAGE":"prod"}`})
}

// TestTaskVars_surveyVariablesCannotCarryForbiddenNames: a template may not
// ask its tasks for a name no task may set, on create or update (400
// naming it); nothing is written.
func TestTaskVars_surveyVariablesCannotCarryForbiddenNames(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	kept := p.createTemplate(t, "Kept", func(b map[string]any) { b["survey_vars"] = []map[string]any{{"name": "tag", "title": "Tag"}} })
	count := func() int {
		list := &bastionv1.TemplateList{}
		if err := e.K8s.List(t.Context(), list, client.InNamespace(p.ns)); err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	}
	before := count()
	for _, tc := range []struct {
		app, name, want string
	}{
		{"ansible", "ansible_host", `survey variable "ansible_host": a task may not set this variable, since it changes how the run connects or what it executes`},
		{"", "inventory_hostname", `survey variable "inventory_hostname": a task may not set this variable, since it changes how the run connects or what it executes`},
		{"bash", "PATH", `survey variable "PATH": a task may not set this variable, since it changes how the run connects or what it executes`},
		{"terraform", "TF_CLI_CONFIG_FILE", `survey variable "TF_CLI_CONFIG_FILE": a task may not set this variable, since it changes how the run connects or what it executes`},
		{"bash", "a=b", `survey variable "a=b": a variable name has letters, digits and underscores only, and does not start with a digit`},
	} {
		t.Run(tc.app+" "+tc.name, func(t *testing.T) {
			body := p.templateBody("Asks "+tc.name, func(b map[string]any) {
				b["app"] = tc.app
				b["survey_vars"] = []map[string]any{{"name": tc.name, "title": "X"}}
			})
			if code, data := p.b.call("POST", p.path("/templates"), body); code != http.StatusBadRequest || errorOf(t, data) != tc.want {
				t.Errorf("POST = %d %s, want 400 %q", code, data, tc.want)
			}
			body["id"] = kept.ID
			if code, data := p.b.call("PUT", p.path("/templates/%d", kept.ID), body); code != http.StatusBadRequest || errorOf(t, data) != tc.want {
				t.Errorf("PUT = %d %s, want 400 %q", code, data, tc.want)
			}
		})
	}
	if n := count(); n != before {
		t.Errorf("refused templates were made: %d → %d", before, n)
	}
	if got := p.templateObject(t, kept.ID).Spec.SurveyVars; len(got) != 1 || got[0].Name != "tag" {
		t.Errorf("a refused update changed the template's survey: %+v", got)
	}
}

// TestTaskVars_templateSwitchesAreOffByDefaultAndRoundTrip: the new fields
// read back as written, and a template that never set them has them off.
func TestTaskVars_templateSwitchesAreOffByDefaultAndRoundTrip(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	fields := []string{"allow_override_branch_in_task", "allow_override_inventory_in_task",
		"allow_override_playbook_in_task", "allow_override_extra_vars_in_task"}
	read := func(id int64) map[string]any {
		var got map[string]any
		p.b.must("GET", p.path("/templates/%d", id), nil, http.StatusOK, &got)
		return got
	}
	plain := p.createTemplate(t, "Plain", nil)
	open := p.createTemplate(t, "Open", allowEveryOverride)
	for _, f := range fields {
		if v := read(plain.ID)[f]; v != false {
			t.Errorf("a new template's %s = %v, want false", f, v)
		}
		if v := read(open.ID)[f]; v != true {
			t.Errorf("%s written true reads %v", f, v)
		}
	}
	spec := p.templateObject(t, open.ID).Spec
	if !spec.AllowOverrideBranchInTask || !spec.AllowOverrideInventoryInTask || !spec.AllowOverridePlaybookInTask || !spec.AllowOverrideExtraVarsInTask {
		t.Errorf("the Template's spec = %+v", spec)
	}
	if spec := p.templateObject(t, plain.ID).Spec; spec.AllowOverrideBranchInTask || spec.AllowOverrideExtraVarsInTask {
		t.Errorf("a plain Template's spec = %+v", spec)
	}
}
