package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// newInputs lays out inputs as a launcher would: task.json, a token, and
// the given Secrets (name → key → value).
func newInputs(t *testing.T, spec runspec.Spec, secrets map[string]map[string]string) *Inputs {
	t.Helper()
	dir := t.TempDir()
	input, secretsDir := filepath.Join(dir, "input"), filepath.Join(dir, "secrets")
	for name, keys := range secrets {
		if err := os.MkdirAll(filepath.Join(secretsDir, name), 0o700); err != nil {
			t.Fatal(err)
		}
		for k, v := range keys {
			if err := os.WriteFile(filepath.Join(secretsDir, name, k), []byte(v), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(input, 0o700); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(spec)
	_ = os.WriteFile(filepath.Join(input, runspec.TaskFile), data, 0o600)
	_ = os.WriteFile(filepath.Join(input, runspec.TokenFile), []byte("tok"), 0o600)
	in, err := LoadInputs(input, secretsDir)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func runTask(t *testing.T, in *Inputs) (Result, []string) {
	t.Helper()
	out := &collector{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := Run(ctx, in, filepath.Join(t.TempDir(), "work"), out)
	return res, out.all()
}

func contains(lines []string, want string) bool {
	for _, l := range lines {
		if strings.Contains(l, want) {
			return true
		}
	}
	return false
}

const echoArgs = "#!/bin/bash\nprintf 'arg:%s\\n' \"$@\"\necho \"branch:$(cat branch.txt 2>/dev/null)\"\n"

func TestRun_bashGetsHostileArgumentsLiterallyAndReportsTheCommit(t *testing.T) {
	repo := gittest.NewRepo(t)
	head := repo.WriteFile("run.sh", echoArgs, true)
	in := newInputs(t, runspec.Spec{
		App: "bash", Playbook: "run.sh",
		Repository: runspec.Repository{URL: repo.Path, Branch: gittest.Branch},
		ExtraVars:  json.RawMessage(`{"name":"world","count":3}`),
		Arguments:  []string{"; rm -rf /tmp/x", "$(id)", "`id`"},
	}, nil)
	res, out := runTask(t, in)
	if !res.Succeeded() {
		t.Fatalf("run failed: %+v\n%s", res, strings.Join(out, "\n"))
	}
	for _, want := range []string{"arg:count=3", "arg:name=world", "arg:; rm -rf /tmp/x", "arg:$(id)", "arg:`id`"} {
		if !contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, strings.Join(out, "\n"))
		}
	}
	if contains(out, "uid=") {
		t.Fatal("an argument was run by a shell")
	}
	if res.CommitHash != head || res.CommitMessage != "add run.sh" {
		t.Fatalf("commit %q %q, want %q", res.CommitHash, res.CommitMessage, head)
	}
}

func TestRun_ansiblePlaybookReceivesTheExtraVariables(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", `- hosts: all
  gather_facts: false
  tasks:
    - debug:
        msg: "greeting={{ greeting }} env={{ lookup('env', 'DEPLOY_ENV') }}"
`, false)
	in := newInputs(t, runspec.Spec{
		App: "ansible", Playbook: "site.yml",
		Repository: runspec.Repository{URL: repo.FileURL(), Branch: gittest.Branch},
		Inventory:  &runspec.Inventory{Type: "static", Content: "localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"},
		ExtraVars:  json.RawMessage(`{"greeting":"hello-from-bastion"}`),
		Env:        map[string]string{"DEPLOY_ENV": "staging"},
	}, nil)
	res, out := runTask(t, in)
	if !res.Succeeded() {
		t.Fatalf("run failed: %+v\n%s", res, strings.Join(out, "\n"))
	}
	if !contains(out, "greeting=hello-from-bastion env=staging") {
		t.Fatalf("the play did not see the variables:\n%s", strings.Join(out, "\n"))
	}
}

func TestRun_refusesPathsOutsideTheCheckoutBeforeRunningAnything(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", "- hosts: all\n  tasks: []\n", false)
	if err := os.Symlink("/etc/passwd", filepath.Join(repo.Path, "sneaky.yml")); err != nil {
		t.Fatal(err)
	}
	repo.Git("-C", repo.Path, "add", "sneaky.yml")
	repo.Commit("a link out")
	repository := runspec.Repository{URL: repo.Path, Branch: gittest.Branch}
	cases := map[string]struct {
		spec runspec.Spec
		want string
	}{
		"playbook with ..":      {runspec.Spec{App: "ansible", Playbook: "../../etc/passwd", Repository: repository}, "leaves the repository"},
		"absolute playbook":     {runspec.Spec{App: "ansible", Playbook: "/etc/passwd", Repository: repository}, "must be a path inside the repository"},
		"playbook through link": {runspec.Spec{App: "ansible", Playbook: "sneaky.yml", Repository: repository}, "symbolic link"},
		"inventory outside":     {runspec.Spec{App: "ansible", Playbook: "site.yml", Repository: repository, Inventory: &runspec.Inventory{Type: "file", Content: "../../etc/hosts"}}, "leaves the repository"},
		"missing playbook":      {runspec.Spec{App: "ansible", Playbook: "nope.yml", Repository: repository}, "does not exist"},
		"bash script outside":   {runspec.Spec{App: "bash", Playbook: "../x.sh", Repository: repository}, "leaves the repository"},
		"unknown app":           {runspec.Spec{App: "puppet", Playbook: "site.yml", Repository: repository}, `unknown app "puppet"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res, out := runTask(t, newInputs(t, tc.spec, nil))
			if res.Err == nil || !strings.Contains(res.Err.Error(), tc.want) || res.ExitCode != -1 {
				t.Fatalf("result %+v, want an error with %q and no program run", res, tc.want)
			}
			if contains(out, "PLAY") {
				t.Fatal("ansible ran")
			}
		})
	}
}

func TestRun_missingProgramIsAClearError(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", "- hosts: all\n  tasks: []\n", false)
	in := newInputs(t, runspec.Spec{App: "ansible", Playbook: "site.yml", Repository: runspec.Repository{URL: repo.Path}}, nil)
	// The usual programs, but no ansible.
	onlyGit := t.TempDir()
	for _, dir := range []string{"/usr/bin", "/bin"} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "ansible") {
				continue
			}
			_ = os.Symlink(filepath.Join(dir, e.Name()), filepath.Join(onlyGit, e.Name()))
		}
	}
	t.Setenv("PATH", onlyGit)
	res, _ := runTask(t, in)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "ansible-playbook is not installed") {
		t.Fatalf("result %+v", res)
	}
}

func TestRun_branchPrecedenceAndAFixedCommit(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("run.sh", echoArgs, true)
	first := repo.WriteFile("branch.txt", "main-1", false)
	repo.WriteFile("branch.txt", "main-2", false)
	repo.Git("-C", repo.Path, "checkout", "--quiet", "-b", "feature")
	repo.WriteFile("branch.txt", "feature", false)
	repo.Git("-C", repo.Path, "checkout", "--quiet", gittest.Branch)

	spec := runspec.Spec{App: "bash", Playbook: "run.sh", Repository: runspec.Repository{URL: repo.FileURL(), Branch: "feature"}}
	if res, out := runTask(t, newInputs(t, spec, nil)); !res.Succeeded() || !contains(out, "branch:feature") {
		t.Fatalf("branch: %+v %v", res, out)
	}
	spec.Repository = runspec.Repository{URL: repo.FileURL(), Branch: gittest.Branch, CommitHash: first}
	res, out := runTask(t, newInputs(t, spec, nil))
	if !res.Succeeded() || !contains(out, "branch:main-1") || res.CommitHash != first {
		t.Fatalf("commit: %+v %v", res, out)
	}
	spec.Repository = runspec.Repository{URL: repo.FileURL(), Branch: "no-such-branch"}
	// The task's message says why, in git's words, for who reads it with
	// kubectl and has no log at hand.
	if res, _ := runTask(t, newInputs(t, spec, nil)); res.Err == nil || !strings.Contains(res.Err.Error(), "git clone") ||
		!strings.Contains(res.Err.Error(), "Remote branch no-such-branch not found") {
		t.Fatalf("missing branch: %+v", res)
	}
}

// git:// through a real git daemon on a loopback port.
func TestRun_clonesOverTheGitProtocol(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("run.sh", echoArgs, true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	daemon := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port),
		"--base-path="+filepath.Dir(repo.Path), filepath.Dir(repo.Path))
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = daemon.Process.Kill(); _ = daemon.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("git daemon did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	spec := runspec.Spec{App: "bash", Playbook: "run.sh", Arguments: []string{"over-git"},
		Repository: runspec.Repository{URL: fmt.Sprintf("git://127.0.0.1:%d/repo", port), Branch: gittest.Branch}}
	if res, out := runTask(t, newInputs(t, spec, nil)); !res.Succeeded() || !contains(out, "arg:over-git") {
		t.Fatalf("%+v\n%s", res, strings.Join(out, "\n"))
	}
}

func TestRun_secretValuesAreMaskedInTheOutput(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("leak.sh", "#!/bin/bash\necho \"token is $API_TOKEN\"\necho \"db is $db_password\"\n", true)
	in := newInputs(t, runspec.Spec{App: "bash", Playbook: "leak.sh", EnvironmentSecret: "prod",
		Repository: runspec.Repository{URL: repo.Path}},
		map[string]map[string]string{"prod": {"env.API_TOKEN": "s3cr3t-token-value", "var.db_password": "hunter2hunter2"}})
	res, out := runTask(t, in)
	if !res.Succeeded() {
		t.Fatalf("%+v", res)
	}
	joined := strings.Join(out, "\n")
	if strings.Contains(joined, "s3cr3t-token-value") || strings.Contains(joined, "hunter2hunter2") {
		t.Fatalf("a secret reached the output:\n%s", joined)
	}
	if !contains(out, "token is ********") || !contains(out, "db is ********") {
		t.Fatalf("the secrets were not passed (masked) to the script:\n%s", joined)
	}
}

// The checkout is a clone without git's template: no sample hooks, no
// description, no exclude file, which no run uses and every clone would
// write (checkout.go); .git/info is there, empty, for a playbook that
// adds to .git/info/exclude.
func TestRun_theCheckoutCarriesNoneOfGitsTemplateFiles(t *testing.T) {
	// What a plain clone on this host has: the template must be there for
	// its absence in the checkout to say anything.
	plain := filepath.Join(t.TempDir(), "plain")
	if out, err := exec.Command("git", "clone", "-q", gittest.NewRepo(t).Path, plain).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(plain, ".git", "hooks")); err != nil {
		t.Skipf("git on this host has no template to leave out: %v", err)
	}
	repo := gittest.NewRepo(t)
	repo.WriteFile("look.sh", "#!/bin/bash\nfind .git -path .git/objects -prune -o -print | sort\necho x >> .git/info/exclude && echo exclude-written\n", true)
	in := newInputs(t, runspec.Spec{App: "bash", Playbook: "look.sh",
		Repository: runspec.Repository{URL: repo.Path, Branch: gittest.Branch}}, nil)
	res, out := runTask(t, in)
	if !res.Succeeded() {
		t.Fatalf("run failed: %+v\n%s", res, strings.Join(out, "\n"))
	}
	if !contains(out, ".git/HEAD") || !contains(out, ".git/info") || !contains(out, "exclude-written") {
		t.Fatalf("the script did not list the clone's .git:\n%s", strings.Join(out, "\n"))
	}
	for _, from := range []string{".git/hooks", ".git/description", ".git/info/"} {
		if contains(out, from) {
			t.Errorf("the clone has %s, from git's template:\n%s", from, strings.Join(out, "\n"))
		}
	}
}

// The exit race of issue #4, through a whole run: 5,000 lines printed as
// fast as possible by a script that then exits at once.
func TestRun_aFastScriptLosesNoOutput(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("flood.sh", "#!/bin/bash\nfor i in $(seq 1 5000); do echo \"n=$i\"; done\n", true)
	in := newInputs(t, runspec.Spec{App: "bash", Playbook: "flood.sh", Repository: runspec.Repository{URL: repo.Path}}, nil)
	res, out := runTask(t, in)
	if !res.Succeeded() {
		t.Fatalf("%+v", res)
	}
	var got []string
	for _, l := range out {
		if strings.HasPrefix(l, "n=") {
			got = append(got, l)
		}
	}
	if len(got) != 5000 || got[0] != "n=1" || got[4999] != "n=5000" {
		t.Fatalf("%d lines of the script's 5000", len(got))
	}
}

// countNumbers counts lines that are just the numbers 1..n in order (a
// list printed one element a line, as ansible and terraform print them).
func countNumbers(lines []string, n int) (int, bool) {
	next := 1
	for _, l := range lines {
		v := strings.TrimSuffix(strings.TrimSpace(l), ",")
		if v == strconv.Itoa(next) {
			next++
		}
	}
	return next - 1, next-1 == n
}

// The exit race through ansible: a play that prints 3,000 lines at once
// and ends.
func TestRun_ansibleLosesNoOutputWhenItEnds(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", `- hosts: all
  gather_facts: false
  tasks:
    - debug:
        msg: "{{ range(1, 3001) | list }}"
`, false)
	in := newInputs(t, runspec.Spec{App: "ansible", Playbook: "site.yml", Repository: runspec.Repository{URL: repo.Path},
		Inventory: &runspec.Inventory{Type: "static", Content: "localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"}}, nil)
	res, out := runTask(t, in)
	if got, ok := countNumbers(out, 3000); !res.Succeeded() || !ok {
		t.Fatalf("%+v: %d of 3000 numbers", res, got)
	}
}

// A vault password from a key reaches ansible through a file: the play
// reads a variable from a vault-encrypted vars file.
func TestRun_ansibleOpensVaultsWithTheKeysPassword(t *testing.T) {
	dir := t.TempDir()
	passFile := filepath.Join(dir, "pass")
	if err := os.WriteFile(passFile, []byte("vault-pass-123"), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "secret.yml")
	if err := os.WriteFile(plain, []byte("db_password: opened-by-vault\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ansible-vault", "encrypt", "--vault-password-file", passFile, plain)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ansible-vault: %v\n%s", err, out)
	}
	encrypted, _ := os.ReadFile(plain)

	repo := gittest.NewRepo(t)
	repo.WriteFile("secret.yml", string(encrypted), false)
	repo.WriteFile("site.yml", `- hosts: all
  gather_facts: false
  vars_files: [secret.yml]
  tasks:
    - debug:
        msg: "length={{ db_password | length }} first={{ db_password[0:6] }}"
`, false)
	in := newInputs(t, runspec.Spec{App: "ansible", Playbook: "site.yml", Repository: runspec.Repository{URL: repo.Path},
		Inventory: &runspec.Inventory{Type: "static", Content: "localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"},
		Vaults:    []runspec.Vault{{Key: runspec.KeyRef{Secret: "vault-key", Type: "login_password"}}}},
		map[string]map[string]string{"vault-key": {"password": "vault-pass-123"}})
	res, out := runTask(t, in)
	if !res.Succeeded() || !contains(out, "length=15 first=opened") {
		t.Fatalf("%+v\n%s", res, strings.Join(out, "\n"))
	}

	// Without the key's password the play cannot open the vault.
	in = newInputs(t, runspec.Spec{App: "ansible", Playbook: "site.yml", Repository: runspec.Repository{URL: repo.Path},
		Inventory: &runspec.Inventory{Type: "static", Content: "localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"}}, nil)
	if res, _ := runTask(t, in); res.Succeeded() {
		t.Fatal("the vault opened without its password")
	}
}

// Dry run, diff, debug and limit reach ansible-playbook: each is seen by
// its effect on a real play.
func TestRun_ansibleGetsCheckDiffDebugAndLimit(t *testing.T) {
	target := filepath.Join(t.TempDir(), "written-by-the-play")
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", fmt.Sprintf(`- hosts: all
  gather_facts: false
  tasks:
    - copy:
        dest: %q
        content: "from {{ inventory_hostname }}\n"
`, target), false)
	inventory := "one ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n" +
		"two ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"
	spec := runspec.Spec{App: "ansible", Playbook: "site.yml", Repository: runspec.Repository{URL: repo.Path},
		Inventory: &runspec.Inventory{Type: "static", Content: inventory},
		DryRun:    true, Diff: true, Debug: true, Limit: "two"}
	res, out := runTask(t, newInputs(t, spec, nil))
	joined := strings.Join(out, "\n")
	if !res.Succeeded() {
		t.Fatalf("%+v\n%s", res, joined)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("--check: the play wrote %s", target)
	}
	if !strings.Contains(joined, "+from two") {
		t.Fatalf("--diff: no diff of the file in the output:\n%s", joined)
	}
	if !strings.Contains(joined, "ansible-playbook [core") {
		t.Fatalf("-vvvv: no verbose header in the output:\n%s", joined)
	}
	if strings.Contains(joined, "ok: [one]") || strings.Contains(joined, "changed: [one]") || !strings.Contains(joined, "[two]") {
		t.Fatalf("--limit two: host one ran or two did not:\n%s", joined)
	}
}

// The inventory's user and become credentials reach the play through a
// 0600 vars file, never through argv where `ps` would show them.
func TestRun_ansibleCredentialsGoThroughAFileNotArgv(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", `- hosts: all
  gather_facts: false
  tasks:
    - debug:
        msg: "user={{ ansible_user }} become={{ ansible_become_user }} pwlen={{ ansible_become_password | length }}"
`, false)
	spec := runspec.Spec{App: "ansible", Playbook: "site.yml", Repository: runspec.Repository{URL: repo.Path},
		Inventory: &runspec.Inventory{Type: "static",
			Content:   "localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n",
			Key:       &runspec.KeyRef{Secret: "ops", Type: "login_password"},
			BecomeKey: &runspec.KeyRef{Secret: "root-login", Type: "login_password"}}}
	secrets := map[string]map[string]string{
		"ops":        {"username": "ops", "password": "ssh-pass-123"},
		"root-login": {"username": "deployer", "password": "b3come-secret"},
	}
	res, out := runTask(t, newInputs(t, spec, secrets))
	if !res.Succeeded() || !contains(out, "user=ops become=deployer pwlen=13") {
		t.Fatalf("%+v\n%s", res, strings.Join(out, "\n"))
	}

	// The command the runner builds carries no password.
	work := t.TempDir()
	run := &taskRun{in: newInputs(t, spec, secrets), work: work, out: &redactingSink{next: &collector{}}}
	if err := run.prepare(); err != nil {
		t.Fatal(err)
	}
	checkout := filepath.Join(work, "repository")
	if _, _, err := run.checkout(context.Background(), checkout); err != nil {
		t.Fatal(err)
	}
	cmd, err := run.ansible(checkout)
	if err != nil {
		t.Fatal(err)
	}
	for _, arg := range cmd.args {
		if strings.Contains(arg, "ssh-pass-123") || strings.Contains(arg, "b3come-secret") {
			t.Fatalf("a password is in argv: %q", cmd.args)
		}
	}
	var credentials string
	for i, arg := range cmd.args {
		if arg == "--extra-vars" && strings.HasPrefix(cmd.args[i+1], "@") {
			credentials = strings.TrimPrefix(cmd.args[i+1], "@")
		}
	}
	st, err := os.Stat(credentials)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file %q: %v %v", credentials, st, err)
	}
}

// TestRun_theEnvironmentsSecretVariableWinsOverATasksSecretAnswer: the
// contract says the Environment wins over the task's variables, for plain
// ones (mergeVars) and secret ones alike: a task's secret answer does not
// replace a secret variable its managers set (a deploy target, an API
// endpoint, a password the playbook trusts).
func TestRun_theEnvironmentsSecretVariableWinsOverATasksSecretAnswer(t *testing.T) {
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
