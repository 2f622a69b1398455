package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// hostileValues are shell words that each create a file named after the
// marker if any shell ever interprets them.
func hostileValues(marker string) []string {
	return []string{
		"; touch " + marker + "-semicolon",
		"$(touch " + marker + "-dollar)",
		"`touch " + marker + "-backtick`",
		"| touch " + marker + "-pipe",
		"x\ntouch " + marker + "-newline",
		"&& touch " + marker + "-and",
	}
}

func assertNoMarker(t *testing.T, dir string) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, "pwned*"))
	if len(matches) > 0 {
		t.Fatalf("a value was run by a shell: %v exist", matches)
	}
}

// TestRun_shellWordsInArgumentsAndVariablesAreInertForBash runs the real
// bash app with shell words in its arguments, extra variables and
// environment: the script prints each as one value, and no file appears.
func TestRun_shellWordsInArgumentsAndVariablesAreInertForBash(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	repo := gittest.NewRepo(t)
	repo.WriteFile("run.sh", "#!/bin/bash\nprintf 'arg:[%s]\\n' \"$@\"\necho \"env:[$SURVEY]\"\n", true)
	values := hostileValues(marker)
	vars := map[string]string{}
	for i, v := range values {
		vars["v"+string(rune('a'+i))] = v
	}
	extra, _ := json.Marshal(vars)
	in := newInputs(t, runspec.Spec{
		App: "bash", Playbook: "run.sh",
		Repository: runspec.Repository{URL: repo.Path, Branch: gittest.Branch},
		ExtraVars:  extra, Arguments: values, Env: map[string]string{"SURVEY": values[1]},
	}, nil)
	res, out := runTask(t, in)
	if !res.Succeeded() {
		t.Fatalf("run failed: %+v\n%s", res, strings.Join(out, "\n"))
	}
	assertNoMarker(t, filepath.Dir(marker))
	for _, v := range values {
		first, _, _ := strings.Cut(v, "\n")
		if !contains(out, "arg:["+first) {
			t.Errorf("the argument %q did not reach the script as one value:\n%s", v, strings.Join(out, "\n"))
		}
	}
	if !contains(out, "env:["+values[1]+"]") {
		t.Errorf("the environment value was changed:\n%s", strings.Join(out, "\n"))
	}
}

// TestRun_shellWordsInExtraVariablesAndLimitAreInertForAnsible runs the
// real ansible-playbook with the same words as survey answers (extra
// variables), as its limit and as arguments: the play prints them, and no
// file appears.
func TestRun_shellWordsInExtraVariablesAndLimitAreInertForAnsible(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug:\n        msg: \"answer={{ answer }}\"\n", false)
	// Jinja too: the task's variables reach ansible tagged !unsafe.
	values := append(hostileValues(marker), "{{ lookup('pipe','touch "+marker+"-jinja') }}")
	for i, v := range values {
		extra, _ := json.Marshal(map[string]string{"answer": v})
		in := newInputs(t, runspec.Spec{
			App: "ansible", Playbook: "site.yml",
			Repository: runspec.Repository{URL: repo.FileURL(), Branch: gittest.Branch},
			Inventory:  &runspec.Inventory{Type: "static", Content: "localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"},
			ExtraVars:  extra, TaskVarNames: []string{"answer"}, Limit: "localhost," + v,
		}, nil)
		res, out := runTask(t, in)
		assertNoMarker(t, filepath.Dir(marker))
		if i == 0 && !contains(out, "answer=; touch") {
			t.Fatalf("the play did not print the value as text (%+v):\n%s", res, strings.Join(out, "\n"))
		}
		if i == len(values)-1 && !contains(out, "answer="+v) {
			t.Fatalf("the play did not print the Jinja as text (%+v):\n%s", res, strings.Join(out, "\n"))
		}
	}
}

// TestRun_jinjaInTaskVariablesIsTextButTheEnvironmentsIsTemplated runs the
// real ansible-playbook with a lookup('pipe') in a task variable, nested in
// another, and in a secret answer: none runs, and the play prints the
// first two as written; the Environment's "{{ 1 + 1 }}" (trusted, Jinja on
// purpose) still renders as 2; numbers stay numbers, and a string of quotes,
// backslashes, a newline, NUL and unicode reaches the play intact.
func TestRun_jinjaInTaskVariablesIsTextButTheEnvironmentsIsTemplated(t *testing.T) {
	dir := t.TempDir()
	pipe := func(name string) string {
		return "{{ lookup('pipe','touch " + filepath.Join(dir, "pwned-"+name) + "') }}"
	}
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", `- hosts: all
  gather_facts: false
  tasks:
    - debug:
        msg: "answer=[{{ answer }}] nested=[{{ nested.list[0].deep }}] token=[{{ token | length }}] sum=[{{ sum }}] count=[{{ count + 1 }}] odd=[{{ odd }}]"
`, false)
	odd := "quote\" back\\ nl\n nul\x00 ü 🚀"
	// The secret answer's lookup, and its directory, share no 12 characters
	// with the others: the runner masks any such piece of a secret wherever
	// it appears (fragments.go), which would mask the answers this test reads.
	secretDir, err := os.MkdirTemp("", "mk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(secretDir) })
	secretPipe := `{{ query("pipe", "/usr/bin/touch " ~ "` + filepath.Join(secretDir, "pwned-secret") + `") }}`
	extra, _ := json.Marshal(map[string]any{
		"answer": pipe("top"),
		"nested": map[string]any{"list": []any{map[string]any{"deep": pipe("nested")}}},
		"count":  41,
		"odd":    odd,
		"sum":    "{{ 1 + 1 }}",
	})
	in := newInputs(t, runspec.Spec{
		App: "ansible", Playbook: "site.yml",
		Repository:   runspec.Repository{URL: repo.FileURL(), Branch: gittest.Branch},
		Inventory:    &runspec.Inventory{Type: "static", Content: "localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"},
		ExtraVars:    extra,
		TaskVarNames: []string{"answer", "count", "nested", "odd"},
		TaskSecret:   "task-secret",
	}, map[string]map[string]string{"task-secret": {"var.token": secretPipe}})
	res, out := runTask(t, in)
	if !res.Succeeded() {
		t.Fatalf("run failed: %+v\n%s", res, strings.Join(out, "\n"))
	}
	assertNoMarker(t, dir)
	assertNoMarker(t, secretDir)
	for _, want := range []string{
		"answer=[" + pipe("top") + "]",
		"nested=[" + pipe("nested") + "]",
		"token=[" + fmt.Sprint(len(secretPipe)) + "]",
		"sum=[2]",
		"count=[42]",
		`odd=[quote\" back\\ nl\n nul\u0000 ü 🚀]`,
	} {
		if !contains(out, want) {
			t.Errorf("the play did not print %q:\n%s", want, strings.Join(out, "\n"))
		}
	}
}

// TestRun_inventoryThroughASymlinkOutOfTheCheckoutIsRefused: a file
// inventory that is a link to /etc/hosts, or inside a linked directory,
// is refused before ansible runs; so is an absolute inventory path.
func TestRun_inventoryThroughASymlinkOutOfTheCheckoutIsRefused(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", "- hosts: all\n  tasks: []\n", false)
	if err := os.Symlink("/etc/hosts", filepath.Join(repo.Path, "hosts.ini")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(repo.Path, "etc")); err != nil {
		t.Fatal(err)
	}
	repo.Git("-C", repo.Path, "add", "hosts.ini", "etc")
	repo.Commit("links out")
	repository := runspec.Repository{URL: repo.Path, Branch: gittest.Branch}
	for name, tc := range map[string]struct{ path, want string }{
		"inventory link":         {"hosts.ini", "symbolic link"},
		"inside a linked dir":    {"etc/hosts", "symbolic link"},
		"absolute inventory":     {"/etc/hosts", "must be a path inside the repository"},
		"playbook in linked dir": {"", "symbolic link"},
	} {
		t.Run(name, func(t *testing.T) {
			spec := runspec.Spec{App: "ansible", Playbook: "site.yml", Repository: repository,
				Inventory: &runspec.Inventory{Type: "file", Content: tc.path}}
			if tc.path == "" {
				spec.Playbook, spec.Inventory = "etc/hosts", nil
			}
			res, out := runTask(t, newInputs(t, spec, nil))
			if res.Err == nil || !strings.Contains(res.Err.Error(), tc.want) || res.ExitCode != -1 {
				t.Fatalf("result %+v, want an error with %q and no program run", res, tc.want)
			}
			if contains(out, "PLAY") {
				t.Fatal("ansible ran")
			}
		})
	}
}

// TestRun_aLimitNamingAFileNeverPrintsTheFile: `--limit @FILE` makes
// ansible-playbook read FILE as host patterns and print each line that
// matches no host. The API and the TaskReconciler refuse such a limit; a
// runspec that carries one anyway (here naming a mounted Secret that the
// run does not use as a key, so nothing would redact it) fails before
// ansible starts, saying why, and the key appears nowhere in the output.
func TestRun_aLimitNamingAFileNeverPrintsTheFile(t *testing.T) {
	const keyLine = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQLIMIT-CANARY"
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
		res, out := runTask(t, in)
		joined := strings.Join(out, "\n")
		if strings.Contains(joined, keyLine) {
			t.Errorf("limit %q: the mounted key's line is in the task's output:\n%s", limit, joined)
		}
		if res.Err == nil || res.Err.Error() != "limit must be host patterns: it may not contain @ (ansible would read a file)" {
			t.Errorf("limit %q: the run was not refused (%+v):\n%s", limit, res, joined)
		}
		if strings.Contains(joined, "PLAY [") {
			t.Errorf("limit %q: ansible started:\n%s", limit, joined)
		}
	}
}
