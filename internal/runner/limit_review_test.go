package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// TestReview_aLimitNamingAFileNeverPrintsTheFile: `--limit @FILE` makes
// ansible-playbook read FILE as host patterns and print each line that
// matches no host. A task's limit comes from whoever starts it (a
// task_runner, a kubectl user with rights on Tasks), so a limit of
// "@<a mounted Secret>" printed that Secret into the task's log. Here the
// file is an ssh key that the run mounts but does not use as a key (a
// Task whose secretRef names a key's Secret), so nothing redacts it. The
// runner must refuse such a limit (or never pass "@"), and the key must
// appear nowhere in the output.
func TestReview_aLimitNamingAFileNeverPrintsTheFile(t *testing.T) {
	const keyLine = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQREVIEW-CANARY"
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg=hello\n", false)
	spec := runspec.Spec{App: "ansible", Playbook: "site.yml", Repository: runspec.Repository{URL: repo.Path},
		Inventory:  &runspec.Inventory{Type: "static", Content: "web1 ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"},
		TaskSecret: "prod-ssh"}
	in := newInputs(t, spec, map[string]map[string]string{"prod-ssh": {
		"ssh-privatekey": "-----BEGIN OPENSSH PRIVATE KEY-----\n" + keyLine + "\n-----END OPENSSH PRIVATE KEY-----\n",
	}})
	for _, limit := range []string{
		"@" + filepath.Join(in.secretsDir, "prod-ssh", "ssh-privatekey"),
		"web1,@" + filepath.Join(in.secretsDir, "prod-ssh", "ssh-privatekey"),
	} {
		in.Spec.Limit = limit
		_, out := runTask(t, in)
		if joined := strings.Join(out, "\n"); strings.Contains(joined, keyLine) {
			t.Errorf("limit %q: the mounted key's line is in the task's output:\n%s", limit, joined)
		}
	}
}

// TestReview_ansibleWrapsALongSecretPastTheRedaction: the redaction masks a
// secret where it appears whole in a line, but ansible-playbook wraps its
// warnings at 80 columns and breaks words longer than that. A secret
// variable of the Environment (redacted: the runner knows it) longer than
// a line, printed by ansible in a warning (here through a limit naming the
// mounted Secret, as any task_runner can send), reaches the log in pieces,
// unmasked. Compared without whitespace, the value must not be there.
func TestReview_ansibleWrapsALongSecretPastTheRedaction(t *testing.T) {
	token := strings.Repeat("eyJhbGciOiJSUzI1NiJ9REVIEWCANARY", 5) // 160 characters, a JWT's shape
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg=hello\n", false)
	spec := runspec.Spec{App: "ansible", Playbook: "site.yml", Repository: runspec.Repository{URL: repo.Path},
		Inventory:         &runspec.Inventory{Type: "static", Content: "web1 ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"},
		EnvironmentSecret: "env-secrets"}
	in := newInputs(t, spec, map[string]map[string]string{"env-secrets": {"var.api_token": token}})
	in.Spec.Limit = "web1,@" + filepath.Join(in.secretsDir, "env-secrets", "var.api_token")
	_, out := runTask(t, in)
	joined := strings.Join(out, "\n")
	if strings.Contains(strings.Join(strings.Fields(joined), ""), token[:64]) {
		t.Errorf("the Environment's secret reached the output in wrapped pieces:\n%s", joined)
	}
}

// TestReview_aTasksSecretAnswerOverridesTheEnvironmentsSecretVariable: the
// contract says the Environment wins over the task's variables, and
// mergeVars does so for plain ones; but vars() lays the task Secret's
// "var." keys over the Environment Secret's, so a task (a survey answer,
// or any name with the opt-in) replaces a secret variable its managers set
// (a deploy target, an API endpoint, a password the playbook trusts).
func TestReview_aTasksSecretAnswerOverridesTheEnvironmentsSecretVariable(t *testing.T) {
	target := filepath.Join(t.TempDir(), "deploy_target")
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", "- hosts: all\n  gather_facts: false\n  tasks:\n    - copy:\n        dest: "+target+"\n        content: \"{{ deploy_target }}\"\n", false)
	spec := runspec.Spec{App: "ansible", Playbook: "site.yml", Repository: runspec.Repository{URL: repo.Path},
		Inventory:         &runspec.Inventory{Type: "static", Content: "web1 ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"},
		EnvironmentSecret: "env-secrets", TaskSecret: "task-answers"}
	in := newInputs(t, spec, map[string]map[string]string{
		"env-secrets":  {"var.deploy_target": "managers-choice"},
		"task-answers": {"var.deploy_target": "task-runners-choice"},
	})
	res, out := runTask(t, in)
	if !res.Succeeded() {
		t.Fatalf("%+v\n%s", res, strings.Join(out, "\n"))
	}
	got, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "managers-choice" {
		t.Errorf("deploy_target = %q, want the Environment's %q (the Environment wins)", got, "managers-choice")
	}
}
