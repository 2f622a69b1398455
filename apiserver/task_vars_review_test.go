package apiserver_test

import (
	"net/http"
	"testing"
)

// TestReview_aTaskRunnersLimitCannotNameAFile: ansible-playbook reads
// `--limit @FILE` as a file of host patterns and prints every line that
// matches no host ("Could not match supplied host pattern, ignoring:
// <line>"), so a limit is a file read on the runner: under `bastion dev`
// the manager's kubeconfig and database, in a pod the mounted Secrets and
// the runner's input. A task_runner sets limit freely (no template switch),
// so POST /tasks must refuse any pattern that starts with "@", alone or in
// a comma list, with a 400 and no Task.
func TestReview_aTaskRunnersLimitCannotNameAFile(t *testing.T) {
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
		if code != http.StatusBadRequest {
			t.Errorf("POST /tasks with limit %q = %d %s, want 400 (ansible reads @FILE as a file of hosts and prints its lines)", limit, code, data)
		}
	}
	if n := p.taskCount(t); n != before {
		t.Errorf("a limit naming a file started %d task(s)", n-before)
	}
}

// TestReview_argumentsAreADoorAroundTheNameRule: docs/features.md says a
// name that changes how the run connects or executes is "never settable,
// whatever the template says", but with allow_override_args_in_task a task
// passes `-e ansible_python_interpreter=…` (or `--extra-vars @/bastion/
// secrets/…`, `--ssh-common-args`, `--become-exe`, `-i`) straight to
// ansible-playbook. Either taskvars also reads the variables of -e/--extra-vars
// arguments (and refuses @FILE), or the docs and the editor's help must say
// that this switch hands the task the whole command line. This test takes
// the first reading; the lead decides.
func TestReview_argumentsAreADoorAroundTheNameRule(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	open := p.createTemplate(t, "Args Ansible", func(b map[string]any) { b["allow_override_args_in_task"] = true })
	before := p.taskCount(t)
	for _, args := range []string{
		`["-e", "ansible_python_interpreter=/bin/sh -c 'echo PWNED' #"]`,
		`["--extra-vars", "{\"ansible_host\": \"attacker.example\"}"]`,
		`["-eansible_connection=local"]`,
		`["--extra-vars=@/bastion/secrets/vault-key/password"]`,
	} {
		code, data := p.b.call("POST", p.path("/tasks"), map[string]any{"template_id": open.ID, "arguments": args})
		if code != http.StatusBadRequest {
			t.Errorf("POST /tasks with arguments %s = %d, want 400 naming the variable (%s)", args, code, data)
		}
	}
	if n := p.taskCount(t); n != before {
		t.Logf("%d task(s) started with -e of a forbidden name", n-before)
	}
}

// TestReview_heldSpellingsOfForbiddenNamesThroughPOSTTasks: what the review
// tried that held. Case variations, a JSON escape, a key repeated around
// the forbidden one, unicode lookalikes, dots and brackets, and the same in
// the secret answers: each is a 400 and no task, with the opt-in on.
func TestReview_heldSpellingsOfForbiddenNamesThroughPOSTTasks(t *testing.T) {
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
