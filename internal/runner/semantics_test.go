package runner

import (
	"strings"
	"testing"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// Task execution semantics of the api-contract (issue #4), each through a
// whole run with real git and the real program.

// The checkout is recursive: a script reads a file that only the
// submodule holds, on a branch and at a fixed commit.
func TestRun_checkoutIncludesSubmodulesRecursively(t *testing.T) {
	inner := gittest.NewRepo(t)
	inner.WriteFile("deep.txt", "from-the-inner-submodule", false)
	lib := gittest.NewRepo(t)
	lib.WriteFile("shared.txt", "from-the-submodule", false)
	lib.Git("-C", lib.Path, "-c", "protocol.file.allow=always", "submodule", "--quiet", "add", inner.Path, "inner")
	lib.Commit("add the inner submodule")

	repo := gittest.NewRepo(t)
	repo.Git("-C", repo.Path, "-c", "protocol.file.allow=always", "submodule", "--quiet", "add", lib.Path, "lib")
	repo.Commit("add the lib submodule")
	head := repo.WriteFile("read.sh", "#!/bin/bash\necho \"lib:$(cat lib/shared.txt)\"\necho \"inner:$(cat lib/inner/deep.txt)\"\n", true)

	spec := runspec.Spec{App: "bash", Playbook: "read.sh", Repository: runspec.Repository{URL: repo.Path, Branch: gittest.Branch}}
	res, out := runTask(t, newInputs(t, spec, nil))
	if !res.Succeeded() || !contains(out, "lib:from-the-submodule") || !contains(out, "inner:from-the-inner-submodule") {
		t.Fatalf("branch: %+v\n%s", res, strings.Join(out, "\n"))
	}

	// A fixed commit checks the submodules out at that commit too.
	repo.WriteFile("later.txt", "after", false)
	spec.Repository.CommitHash = head
	res, out = runTask(t, newInputs(t, spec, nil))
	if !res.Succeeded() || res.CommitHash != head || !contains(out, "lib:from-the-submodule") || !contains(out, "inner:from-the-inner-submodule") {
		t.Fatalf("commit: %+v\n%s", res, strings.Join(out, "\n"))
	}
}

// A static-yaml inventory is written as a .yml file, which ansible's yaml
// inventory plugin reads (it refuses other extensions): the play sees the
// host and its host variable.
func TestRun_staticYamlInventoryGivesAnsibleTheHostAndItsVariables(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", `- hosts: web
  gather_facts: false
  tasks:
    - debug:
        msg: "host={{ inventory_hostname }} role={{ app_role }} group={{ group_names | join(',') }}"
`, false)
	inventory := `all:
  children:
    web:
      hosts:
        web-1:
          ansible_connection: local
          ansible_python_interpreter: /usr/bin/python3
          app_role: frontend
`
	in := newInputs(t, runspec.Spec{App: "ansible", Playbook: "site.yml", Repository: runspec.Repository{URL: repo.Path},
		Inventory: &runspec.Inventory{Type: "static-yaml", Content: inventory}}, nil)
	res, out := runTask(t, in)
	if !res.Succeeded() || !contains(out, "host=web-1 role=frontend group=web") {
		t.Fatalf("%+v\n%s", res, strings.Join(out, "\n"))
	}
}

// The program gets the task's type and versions and the Environment's env
// JSON as process environment: a build task its target version, a deploy
// task its incoming version, a plain task empty ones.
func TestRun_taskTypeVersionsAndEnvironmentReachTheProgram(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("env.sh", `#!/bin/bash
echo "type=[$SEMAPHORE_TASK_TYPE]"
echo "incoming=[$SEMAPHORE_TASK_INCOMING_VERSION]"
echo "target=[$SEMAPHORE_TASK_TARGET_VERSION]"
echo "region=[$REGION] tier=[$TIER]"
`, true)
	env := map[string]string{"REGION": "eu-west-1", "TIER": "gold plated"}
	cases := map[string]struct {
		spec runspec.Spec
		want []string
	}{
		"build": {runspec.Spec{TaskType: "build", TargetVersion: "1.0.7"},
			[]string{"type=[build]", "incoming=[]", "target=[1.0.7]"}},
		"deploy": {runspec.Spec{TaskType: "deploy", IncomingVersion: "v2-rc10"},
			[]string{"type=[deploy]", "incoming=[v2-rc10]", "target=[]"}},
		"plain task": {runspec.Spec{},
			[]string{"type=[]", "incoming=[]", "target=[]"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := tc.spec
			spec.App, spec.Playbook, spec.Env = "bash", "env.sh", env
			spec.Repository = runspec.Repository{URL: repo.Path}
			res, out := runTask(t, newInputs(t, spec, nil))
			if !res.Succeeded() {
				t.Fatalf("%+v\n%s", res, strings.Join(out, "\n"))
			}
			for _, want := range append(tc.want, "region=[eu-west-1] tier=[gold plated]") {
				if !contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, strings.Join(out, "\n"))
				}
			}
		})
	}
}
