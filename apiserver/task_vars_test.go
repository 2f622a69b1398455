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

// argumentMsg is the 400 of a task argument outside its app's allow-list.
func argumentMsg(arg string) string {
	return fmt.Sprintf("the argument %q cannot be set by a task: it changes how the run connects or what it executes", arg)
}

// limitFileMsg is the 400 of a limit holding "@".
const limitFileMsg = "limit must be host patterns: it may not contain @ (ansible would read a file)"

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

// TestTaskVars_aTaskRunnersLimitCannotNameAFile: ansible-playbook reads
// `--limit @FILE` as a file of host patterns and prints every line that
// matches no host ("Could not match supplied host pattern, ignoring:
// <line>"), so a limit would be a file read on the runner: under `bastion
// dev` the manager's kubeconfig and database, in a pod the mounted Secrets
// and the runner's input. A task_runner sets limit freely (no template
// switch), so POST /tasks refuses any "@", alone or in a list, with a 400
// and no Task; a limit of host patterns starts.
func TestTaskVars_aTaskRunnersLimitCannotNameAFile(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	tpl := p.createTemplate(t, "Hello Ansible", nil)

	runner, pw := e.newUser(t, "limitrunner", false)
	if code, data := p.b.call("POST", p.path("/users"), map[string]any{"user_id": userIDOf(t, runner), "role": "task_runner"}); code != http.StatusNoContent {
		t.Fatalf("adding the task_runner = %d %s", code, data)
	}
	tr := e.signIn(t, runner.Spec.Username, pw)
	before := p.taskCount(t)

	for _, limit := range []string{
		"@/home/bastion/.local/share/bastion/dev/kubeconfig",
		"@/bastion/secrets/deploy-key/ssh-privatekey",
		"web1,@/etc/passwd",
		"web1:@/bastion/input/spec.json",
	} {
		code, data := tr.call("POST", p.path("/tasks"), map[string]any{"template_id": tpl.ID, "limit": limit})
		if code != http.StatusBadRequest || !strings.Contains(string(data), limitFileMsg) {
			t.Errorf("POST /tasks with limit %q = %d %s, want 400 %q", limit, code, data, limitFileMsg)
		}
	}
	if n := p.taskCount(t); n != before {
		t.Errorf("a limit naming a file started %d task(s)", n-before)
	}
	if code, data := tr.call("POST", p.path("/tasks"), map[string]any{"template_id": tpl.ID, "limit": "web1,db*"}); code != http.StatusCreated {
		t.Errorf("POST /tasks with limit of host patterns = %d %s, want 201", code, data)
	}
}

// TestTaskVars_taskArgumentsMeetTheAppsAllowList: with
// allow_override_args_in_task a task's arguments may narrow, check or
// describe its run, but `-e ansible_python_interpreter=…`, `--extra-vars
// @/bastion/secrets/…`, `-eansible_connection=local` (which would set a
// name that is never settable, or read a file) are a 400 naming the
// argument, and no Task; allowed options start the task.
func TestTaskVars_taskArgumentsMeetTheAppsAllowList(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	open := p.createTemplate(t, "Args Ansible", func(b map[string]any) { b["allow_override_args_in_task"] = true })
	before := p.taskCount(t)
	for _, tc := range []struct{ args, named string }{
		{`["-e", "ansible_python_interpreter=/bin/sh -c 'echo ` + varsCanary + `' #"]`, "-e"},
		{`["--extra-vars", "{\"ansible_host\": \"attacker.example\"}"]`, "--extra-vars"},
		{`["-eansible_connection=local"]`, "-e"},
		{`["--extra-vars=@/bastion/secrets/vault-key/password"]`, "--extra-vars"},
		{`["-v", "-i", "/etc/hosts"]`, "-i"},
		{`["--ssh-common-args=-o ProxyCommand=` + varsCanary + `"]`, "--ssh-common-args"},
		{`["other.yml"]`, "other.yml"},
	} {
		code, data := p.b.call("POST", p.path("/tasks"), map[string]any{"template_id": open.ID, "arguments": tc.args})
		if code != http.StatusBadRequest || !strings.Contains(string(data), strings.ReplaceAll(argumentMsg(tc.named), `"`, `\"`)) {
			t.Errorf("POST /tasks with arguments %s = %d %s, want 400 %q", tc.args, code, data, argumentMsg(tc.named))
		}
		if strings.Contains(string(data), varsCanary) {
			t.Errorf("the refusal repeats the argument's value: %s", data)
		}
	}
	if n := p.taskCount(t); n != before {
		t.Errorf("%d task(s) started with refused arguments", n-before)
	}
	if code, data := p.b.call("POST", p.path("/tasks"), map[string]any{"template_id": open.ID, "arguments": `["-vv", "--tags", "web", "-Cl", "web1"]`}); code != http.StatusCreated {
		t.Errorf("POST /tasks with allowed arguments = %d %s, want 201", code, data)
	}
}

// TestTaskVars_spellingsOfForbiddenNamesAreRefused: case variations, a JSON
// escape, a key repeated around the forbidden one, unicode lookalikes,
// dots and brackets, and the same in the secret answers: each is a 400
// and no task, with the opt-in on.
func TestTaskVars_spellingsOfForbiddenNamesAreRefused(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	open := p.createTemplate(t, "Open Ansible", func(b map[string]any) { b["allow_override_extra_vars_in_task"] = true })
	before := p.taskCount(t)
	for _, env := range []string{
		`{"ANSIBLE_HOST":"x"}`,
		`{"Ansible_Python_Interpreter":"/bin/sh"}`,
		`{"\u0061nsible_host":"x"}`,
		`{"colour":"a","ansible_host":"x","colour":"b"}`,
		`{"ansible_host":"x","ansible_host":"y"}`,
		"{\"ａnsible_host\":\"x\"}",       // fullwidth a
		"{\"ansible\u200b_host\":\"x\"}", // zero-width space
		`{"ansible_host.x":"x"}`,
		`{"hostvars[web1]":"x"}`,
		`{"vars":{"ansible_host":"x"}}`,
		`{"HostVars":{}}`,
	} {
		for _, field := range []string{"environment", "secret"} {
			code, data := p.b.call("POST", p.path("/tasks"), map[string]any{"template_id": open.ID, field: env})
			if code != http.StatusBadRequest {
				t.Errorf("%s %s = %d %s, want 400", field, env, code, data)
			}
		}
	}
	if n := p.taskCount(t); n != before {
		t.Errorf("%d task(s) started", n-before)
	}
}
