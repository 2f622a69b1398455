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
