package runner

import (
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
