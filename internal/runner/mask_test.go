package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// Ansible shows every value JSON-escaped: a secret holding a quote or a
// backslash never appeared as it is in the output, so masking the raw value
// alone left it readable in a debug of the variable (found by the secrets
// canary, docs/reliability.md §7). A real ansible-playbook prints a secret
// variable, a secret environment variable and a vault password's twin;
// every one is masked, escaped or not.
func TestRun_secretsWithQuotesAndBackslashesAreMaskedInAnsiblesJSONOutput(t *testing.T) {
	const (
		dbPassword = `Zx7"pa\ss-<&>-é-Qw8`
		apiToken   = `Jk5"to\ken-😀-Vb6`
	)
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", `- hosts: all
  gather_facts: false
  tasks:
    - debug:
        var: db_password
    - debug:
        msg: "token {{ lookup('env', 'API_TOKEN') }}"
    - debug:
        msg: "{{ {'nested': db_password} | to_json }}"
    - debug:
        msg: "{{ {'nested': db_password} | to_json(ensure_ascii=True) }}"
`, false)
	in := newInputs(t, runspec.Spec{App: "ansible", Playbook: "site.yml", EnvironmentSecret: "prod",
		Repository: runspec.Repository{URL: repo.Path},
		Inventory:  &runspec.Inventory{Type: "static", Content: "localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"}},
		map[string]map[string]string{"prod": {"env.API_TOKEN": apiToken, "var.db_password": dbPassword}})
	res, out := runTask(t, in)
	joined := strings.Join(out, "\n")
	if !res.Succeeded() {
		t.Fatalf("%+v\n%s", res, joined)
	}
	// Each secret begins and ends with a word nothing else prints.
	for _, piece := range []string{"Zx7", "Qw8", "Jk5", "Vb6"} {
		for _, line := range out {
			if strings.Contains(line, piece) {
				t.Errorf("a piece of a secret (%q) reached the output: %s", piece, line)
			}
		}
	}
	for _, want := range []string{`"db_password": "********"`, `"msg": "token ********"`} {
		if !contains(out, want) {
			t.Errorf("the output lacks %s:\n%s", want, joined)
		}
	}
	if strings.Count(joined, "********") < 4 {
		t.Errorf("fewer than 4 masked values:\n%s", joined)
	}
}

func TestRedactingSink_masksEveryEscapedFormAndLongerSecretsFirst(t *testing.T) {
	out := &collector{}
	sink := &redactingSink{next: out}
	sink.add(`a"b\c-é-secret`, "abcd", "abcd-longer-secret", "multi\nline-secret")
	for _, line := range []string{
		`raw a"b\c-é-secret end`,
		`json a\"b\\c-é-secret end`,
		`twice a\\\"b\\\\c-é-secret end`,
		`ascii a\"b\\c-\u00e9-secret end`,
		`ascii twice a\\\"b\\\\c-\\u00e9-secret end`,
		"prefix abcd-longer-secret end",
		"first multi then line-secret end",
	} {
		sink.Line(time.Time{}, line)
	}
	got := out.all()
	want := []string{
		"raw ******** end", "json ******** end", "twice ******** end", "ascii ******** end", "ascii twice ******** end",
		"prefix ******** end", "first ******** then ******** end",
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// The Environment's secret variables reach ansible through a 0600 file,
// never argv, which `ps` shows to every user of the machine (they were one
// JSON --extra-vars argument; found by the secrets canary's review).
func TestRun_ansibleReadsTheEnvironmentsSecretVariablesFromAFileNotArgv(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", "- hosts: all\n  tasks: []\n", false)
	spec := runspec.Spec{App: "ansible", Playbook: "site.yml", EnvironmentSecret: "prod", Repository: runspec.Repository{URL: repo.Path},
		ExtraVars: []byte(`{"greeting": "hello"}`),
		Inventory: &runspec.Inventory{Type: "static", Content: "localhost ansible_connection=local\n"}}
	secrets := map[string]map[string]string{"prod": {"var.db_password": "argv-secret-3c9d"}}
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
	var files []string
	for i, arg := range cmd.args {
		if strings.Contains(arg, "argv-secret-3c9d") || strings.Contains(arg, "hello") {
			t.Fatalf("a variable is in argv: %q", cmd.args)
		}
		if arg == "--extra-vars" {
			if !strings.HasPrefix(cmd.args[i+1], "@") {
				t.Fatalf("extra variables in argv: %q", cmd.args[i+1])
			}
			files = append(files, strings.TrimPrefix(cmd.args[i+1], "@"))
		}
	}
	if len(files) != 1 {
		t.Fatalf("%d --extra-vars files, want 1: %q", len(files), cmd.args)
	}
	st, err := os.Stat(files[0])
	data, _ := os.ReadFile(files[0])
	if err != nil || st.Mode().Perm() != 0o600 || string(data) != `{"db_password":"argv-secret-3c9d","greeting":"hello"}` {
		t.Fatalf("vars file %s: %v %v %s", files[0], st, err, data)
	}
}

// Ansible wraps its warnings at 80 columns and breaks a long word, so a
// long secret reached the output in pieces the whole-value masking did not
// recognise (review F4). A real play looks up a certificate named after
// the Environment's 160-character token with errors='warn', at several
// indentations so that the wrap cuts the token at different places: no
// piece of fragmentLen characters or more is left, even with the lines
// joined back together.
func TestRun_aLongSecretAnsibleWrapsOverSeveralLinesLeavesNoPieceInTheOutput(t *testing.T) {
	token := benchSecrets(10)[8][:160]
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", `- hosts: all
  gather_facts: false
  tasks:
    - debug:
        msg: "{{ lookup('file', item ~ '/' ~ api_token ~ '.pem', errors='warn') }}"
      loop: [certs, certs/a, certs/ab, certs/abc, certs/abcd, certs/abcde, certs/abcdef, certs/abcdefghijk]
`, false)
	in := newInputs(t, runspec.Spec{App: "ansible", Playbook: "site.yml", EnvironmentSecret: "prod",
		Repository: runspec.Repository{URL: repo.Path},
		Inventory:  &runspec.Inventory{Type: "static", Content: "localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"}},
		map[string]map[string]string{"prod": {"var.api_token": token}})
	res, out := runTask(t, in)
	text := strings.Join(out, "\n")
	if !res.Succeeded() {
		t.Fatalf("%+v\n%s", res, text)
	}
	if got := strings.Count(text, "could not locate file in lookup"); got != 8 {
		t.Fatalf("%d lookup warnings, want 8 (ansible did not print the token):\n%s", got, text)
	}
	if piece := leakedPiece(strings.Join(strings.Fields(text), ""), token, fragmentLen); piece != "" {
		t.Errorf("a piece %q of the token is in the output:\n%s", piece, text)
	}
}
