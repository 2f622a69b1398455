package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// Secret values of these tests: an Environment's secret variable and a
// task's secret survey answer.
const (
	environmentSecretValue = "env-secret-argv-7f3a1c"
	answerSecretValue      = "answer-secret-argv-9b2e4d"
)

var argvSecrets = map[string]map[string]string{
	"prod":        {"var.db_password": environmentSecretValue},
	"task-secret": {"var.api_key": answerSecretValue},
}

// processesWithInArgv lists every process of the machine whose argv
// (/proc/<pid>/cmdline, which any user may read) holds one of values.
func processesWithInArgv(t *testing.T, values ...string) []string {
	t.Helper()
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, path := range cmdlines {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		for _, v := range values {
			if bytes.Contains(data, []byte(v)) {
				found = append(found, fmt.Sprintf("%s: %q", path, strings.ReplaceAll(string(data), "\x00", " ")))
			}
		}
	}
	return found
}

// newGate is a FIFO: a program that reads it waits until the test writes.
func newGate(t *testing.T) string {
	t.Helper()
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	return gate
}

// gatedRun runs the task (with argvSecrets) whose program prints ready and
// then waits on gate. While it waits, gatedRun lists every process of the
// machine whose argv holds a secret value; then it opens the gate and
// returns how the run ended, its output and those processes.
func gatedRun(t *testing.T, spec runspec.Spec, gate, ready string) (res Result, lines, leaks []string) {
	t.Helper()
	out := &collector{}
	done := make(chan Result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		done <- Run(ctx, newInputs(t, spec, argvSecrets), filepath.Join(t.TempDir(), "work"), out)
	}()
	waitFor(t, func() bool { return contains(out.all(), ready) })
	leaks = processesWithInArgv(t, environmentSecretValue, answerSecretValue)
	if err := os.WriteFile(gate, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return <-done, out.all(), leaks
}

// A bash task with an Environment's secret variable and a secret survey
// answer: while the script runs, no process of the machine has either
// value in its argv (the script checks its own /proc/$$/cmdline too), and
// the script still reads both, as environment variables of their names.
// The plain variable stays a k=v argument, as Semaphore's scripts expect.
func TestRun_bashGetsSecretVariablesInItsEnvironmentNeverInArgv(t *testing.T) {
	gate := newGate(t)
	repo := gittest.NewRepo(t)
	repo.WriteFile("show.sh", `#!/bin/bash
for v in "$db_password" "$api_key"; do
  if grep -qaF -- "$v" /proc/$$/cmdline; then echo "own-argv:leak"; else echo "own-argv:clean"; fi
done
echo "db_password:$db_password"
echo "api_key:$api_key"
printf 'arg:%s\n' "$@"
echo ready
read -r _ < `+gate+`
`, true)
	spec := runspec.Spec{App: "bash", Playbook: "show.sh", EnvironmentSecret: "prod", TaskSecret: "task-secret",
		ExtraVars: []byte(`{"greeting":"hello"}`), Repository: runspec.Repository{URL: repo.Path}}
	res, lines, leaks := gatedRun(t, spec, gate, "ready")
	if len(leaks) > 0 {
		t.Fatalf("secret values in argv while the script ran:\n%s", strings.Join(leaks, "\n"))
	}
	if !res.Succeeded() || contains(lines, "own-argv:leak") || !contains(lines, "own-argv:clean") {
		t.Fatalf("%+v\n%s", res, strings.Join(lines, "\n"))
	}
	// Masked in the output, so the script read exactly the secret values.
	for _, want := range []string{"db_password:********", "api_key:********", "arg:greeting=hello"} {
		if !contains(lines, want) {
			t.Errorf("no %q in the output:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	if contains(lines, "arg:db_password") || contains(lines, "arg:api_key") {
		t.Errorf("a secret variable is still an argument:\n%s", strings.Join(lines, "\n"))
	}
}

// The same through a real ansible run: while the play waits on a task,
// no process of the machine (ansible-playbook, its workers, the module's
// command) has a secret value in its argv, and the play read both.
func TestRun_ansibleKeepsSecretVariablesOutOfEveryArgv(t *testing.T) {
	gate := newGate(t)
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", `- hosts: all
  gather_facts: false
  tasks:
    - debug:
        msg: "secrets {{ db_password }} {{ api_key }}"
    - name: wait at the gate
      command: cat `+gate+`
`, false)
	spec := runspec.Spec{App: "ansible", Playbook: "site.yml", EnvironmentSecret: "prod", TaskSecret: "task-secret",
		Repository: runspec.Repository{URL: repo.Path},
		Inventory:  &runspec.Inventory{Type: "static", Content: "localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"}}
	res, lines, leaks := gatedRun(t, spec, gate, "TASK [wait at the gate]")
	if len(leaks) > 0 {
		t.Fatalf("secret values in argv while the play ran:\n%s", strings.Join(leaks, "\n"))
	}
	if !res.Succeeded() || !contains(lines, "secrets ******** ********") {
		t.Fatalf("%+v\n%s", res, strings.Join(lines, "\n"))
	}
}

// A secret variable whose name bash cannot read as a variable is refused
// before the script runs, with its name, not silently dropped.
func TestRun_bashRefusesASecretVariableItCouldNotRead(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("run.sh", "#!/bin/bash\necho ran\n", true)
	spec := runspec.Spec{App: "bash", Playbook: "run.sh", EnvironmentSecret: "prod", Repository: runspec.Repository{URL: repo.Path}}
	res, out := runTask(t, newInputs(t, spec, map[string]map[string]string{"prod": {"var.db-password": "dashed-secret-value"}}))
	if res.Err == nil || !strings.Contains(res.Err.Error(), `"db-password"`) || contains(out, "ran") {
		t.Fatalf("%+v\n%s", res, strings.Join(out, "\n"))
	}
}

// Terraform gets the secret variables from a 0600 -var-file of the private
// directory and the plain ones as -var: a wrapper in front of the real
// terraform records its own /proc/$$/cmdline (the argv terraform then runs
// with, by exec) at every step, and the plan still shows both values.
func TestTerraform_getsSecretVariablesFromAVarFileNeverArgv(t *testing.T) {
	needTerraform(t)
	real, _ := exec.LookPath("terraform")
	dir := t.TempDir()
	argvLog := filepath.Join(dir, "argv.log")
	wrapper := filepath.Join(dir, "terraform")
	script := fmt.Sprintf("#!/bin/bash\n{ tr '\\0' ' ' < /proc/$$/cmdline; echo; } >> %q\nexec %q \"$@\"\n", argvLog, real)
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	repo := gittest.NewRepo(t)
	repo.WriteFile("main.tf", `variable "greeting" { type = string }
variable "db_password" { type = string }
variable "api_key" { type = string }
resource "terraform_data" "x" { input = "${var.greeting}/${var.db_password}/${var.api_key}" }
output "all" { value = terraform_data.x.output }
`, false)
	spec := runspec.Spec{App: "terraform", Playbook: ".", DryRun: true, EnvironmentSecret: "prod", TaskSecret: "task-secret",
		ExtraVars: []byte(`{"greeting":"hello-plain"}`), Repository: runspec.Repository{URL: repo.Path}}
	run := &taskRun{in: newInputs(t, spec, argvSecrets), work: filepath.Join(t.TempDir(), "work"),
		out: &redactingSink{next: &collector{}}, binaries: map[string]string{"terraform": wrapper}}
	if err := run.prepare(); err != nil {
		t.Fatal(err)
	}
	checkout := filepath.Join(run.work, "repository")
	if _, _, err := run.checkout(context.Background(), checkout); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, err := run.terraform(ctx, checkout, run.out)
	lines := run.out.next.(*collector).all()
	if err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, strings.Join(lines, "\n"))
	}
	argv, err := os.ReadFile(argvLog)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(argv), environmentSecretValue) || strings.Contains(string(argv), answerSecretValue) {
		t.Fatalf("a secret value in terraform's argv:\n%s", argv)
	}
	if !strings.Contains(string(argv), "-var greeting=hello-plain") || !strings.Contains(string(argv), "-var-file="+run.private) {
		t.Fatalf("plan's argv lacks the plain -var or the private var file:\n%s", argv)
	}
	// Both secrets reached terraform: the planned value holds them, masked.
	if !contains(lines, `"hello-plain/********/********"`) {
		t.Fatalf("the plan does not show the variables:\n%s", strings.Join(lines, "\n"))
	}
	varFile := filepath.Join(run.private, "secret-vars.tfvars.json")
	if st, err := os.Stat(varFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the var file %s: %v %v", varFile, st, err)
	}
}
