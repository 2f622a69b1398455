package apiserver_test

import (
	"fmt"
	"net/http"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// TestPaths_hostileURLsBranchesAndPlaybooksAre400AndWriteNothing: the
// cases of issue 11 item 8 that the API can know about before anything
// runs. Each is a 400 with a clear message, and the project's objects
// (templates and tasks included) are as they were. What the API cannot
// know (a symbolic link in the checkout, a shell word in a value) is the
// runner's: internal/runner's TestRun_* cases.
func TestPaths_hostileURLsBranchesAndPlaybooksAre400AndWriteNothing(t *testing.T) {
	e := startEnv(t)
	b, pid, seed := resourceProject(t, e, "Hostile paths")
	keyID, keyName := seed.key("Deploy", "paths-pw")
	repoID, repoName := seed.repository("app", keyName)
	_, invName := seed.inventory("hosts", keyName)
	envID, envName := seed.environment("prod")
	tplID := seed.template("site", repoName, envName, invName, "")
	p := fmt.Sprintf("/api/project/%d", pid)
	repoBody := func(url, branch string) map[string]any {
		return map[string]any{"name": "r", "git_url": url, "git_branch": branch, "ssh_key_id": keyID}
	}
	tplBody := func(playbook string) map[string]any {
		return map[string]any{"name": "t", "playbook": playbook, "repository_id": repoID, "environment_id": envID, "app": "ansible"}
	}
	const badPlaybook = "the playbook must be a relative path inside the repository"
	before := seed.snapshot() + templatesAndTasks(t, e, seed.ns)
	for _, tc := range []struct {
		name, method, path string
		body               map[string]any
		want               string
	}{
		{"ext:: transport", "POST", "/repositories", repoBody("ext::sh -c touch% /tmp/bastion-pwned", "main"), "Incorrect URL"},
		{"fd:: transport", "POST", "/repositories", repoBody("fd::17", "main"), "Incorrect URL"},
		{"--upload-pack as the URL", "POST", "/repositories", repoBody("--upload-pack=touch /tmp/bastion-pwned", "main"), "Incorrect URL"},
		{"ssh host that is an option", "POST", "/repositories", repoBody("ssh://-oProxyCommand=touch%20x/r.git", "main"), "Incorrect URL"},
		{"ssh user that is an option", "POST", "/repositories", repoBody("ssh://-oProxyCommand=x@git.example/r.git", "main"), "Incorrect URL"},
		{"newline then an option", "POST", "/repositories", repoBody("https://git.example/r.git\n--upload-pack=x", "main"), "Incorrect URL"},
		{"branch --foo", "POST", "/repositories", repoBody("https://git.example/r.git", "--foo"), "the branch is not a valid git branch name"},
		{"branch with a command", "POST", "/repositories", repoBody("https://git.example/r.git", "main;id`id`$(id)|x"), ""},
		{"playbook with ..", "POST", "/templates", tplBody("../../etc/passwd"), badPlaybook},
		{"playbook .. midway", "POST", "/templates", tplBody("plays/../../x.yml"), badPlaybook},
		{"absolute playbook", "POST", "/templates", tplBody("/etc/passwd"), badPlaybook},
		{"playbook with NUL", "POST", "/templates", tplBody("site.yml\x00.sh"), badPlaybook},
		{"task playbook with ..", "POST", "/tasks", map[string]any{"template_id": tplID, "playbook": "../x.yml"}, badPlaybook},
		{"task branch --foo", "POST", "/tasks", map[string]any{"template_id": tplID, "git_branch": "--foo"}, "git_branch must not start with -"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, data := b.call(tc.method, p+tc.path, tc.body)
			if tc.want == "" {
				// A ; in a branch is a legal git ref name: it is accepted as
				// data (git receives it as one argv element after --branch).
				if code != http.StatusNoContent && code != http.StatusCreated {
					t.Fatalf("%s = %d %s, want it accepted as a plain value", tc.name, code, data)
				}
				return
			}
			if code != http.StatusBadRequest || errorOf(t, data) != tc.want {
				t.Fatalf("%s %s = %d %s, want 400 %q", tc.method, tc.path, code, data, tc.want)
			}
		})
	}
	// The one accepted row made one repository; nothing else changed.
	after := seed.snapshot() + templatesAndTasks(t, e, seed.ns)
	if before == after {
		t.Fatal("the branch with a ; was not stored")
	}
	list := &bastionv1.RepositoryList{}
	if err := e.K8s.List(t.Context(), list, client.InNamespace(seed.ns)); err != nil || len(list.Items) != 2 {
		t.Fatalf("repositories after the hostile requests: %d (%v), want the seeded one and the ; branch", len(list.Items), err)
	}
	if code, _ := b.call("GET", fmt.Sprintf("%s/templates", p), nil); code != http.StatusOK {
		t.Fatalf("templates list = %d", code)
	}
	if got := templatesAndTasks(t, e, seed.ns); got != templatesAndTasksOf(before) {
		t.Fatalf("templates or tasks changed: %s -> %s", templatesAndTasksOf(before), got)
	}
}

// templatesAndTasks counts a namespace's Templates and Tasks.
func templatesAndTasks(t *testing.T, e *apiEnv, ns string) string {
	t.Helper()
	tpls, tasks := &bastionv1.TemplateList{}, &bastionv1.TaskList{}
	for _, l := range []client.ObjectList{tpls, tasks} {
		if err := e.K8s.List(t.Context(), l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	return fmt.Sprintf("|templates=%d tasks=%d", len(tpls.Items), len(tasks.Items))
}

func templatesAndTasksOf(snapshot string) string {
	for i := len(snapshot) - 1; i >= 0; i-- {
		if snapshot[i] == '|' {
			return snapshot[i:]
		}
	}
	return ""
}
