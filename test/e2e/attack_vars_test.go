package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/demorepo"
)

// Issue #19's confirmed attack, on the real binary: a task_runner of the
// demo project starts Hello Ansible with ansible_python_interpreter set to
// a shell command. It gets a 400 that names the variable, and no task is
// made, so nothing runs. The same through the secret answers. When the
// template's manager opts in to other variables, an ordinary one passes
// and runs, but ansible_* is still refused.
func TestAttack_aTaskRunnerCannotSetAnsibleMagicVariables(t *testing.T) {
	t.Parallel()
	d := newDemoWithTaskRunner(t)
	admin, p, runner, hello, dataDir := d.admin, d.path, d.runner, d.hello, d.dataDir

	const marker = "PWNED"
	payload := "/bin/sh -c 'echo " + marker + "-$(id -u)-$(ls " + dataDir + "); exit 1' #"
	environment, _ := json.Marshal(map[string]string{"ansible_python_interpreter": payload})
	secret, _ := json.Marshal(map[string]string{"ansible_ssh_common_args": "-o ProxyCommand=" + payload})
	const interpreterRefused = `the variable "ansible_python_interpreter" cannot be set by a task: it changes how the run connects or what it executes`
	var answers []string
	refused := func(body map[string]any, want string) {
		t.Helper()
		code, data := runner.call("POST", p+"/tasks", body)
		answers = append(answers, string(data))
		var msg struct {
			Error string `json:"error"`
		}
		if code != http.StatusBadRequest || json.Unmarshal(data, &msg) != nil || msg.Error != want {
			t.Errorf("POST /tasks = %d %s, want 400 %q", code, data, want)
		}
	}

	// The request, exactly; then the same name as a secret answer
	// and another forbidden one there.
	refused(map[string]any{"template_id": hello, "environment": string(environment)}, interpreterRefused)
	refused(map[string]any{"template_id": hello, "secret": string(secret)},
		`the variable "ansible_ssh_common_args" cannot be set by a task: it changes how the run connects or what it executes`)
	// Without the opt-in, not even an ordinary variable.
	refused(map[string]any{"template_id": hello, "environment": `{"colour":"red"}`},
		`the variable "colour" cannot be set by a task: it is not a survey variable of this template, and the template does not let a task set other variables (allow_override_extra_vars_in_task is off)`)
	// Nor another branch of the repository.
	refused(map[string]any{"template_id": hello, "git_branch": "attacker"},
		"This template does not allow a task to override its branch (git_branch) (allow_override_branch_in_task is off)")
	var tasks []json.RawMessage
	runner.must("GET", p+"/tasks", nil, http.StatusOK, &tasks)
	if len(tasks) != 0 {
		t.Fatalf("refused starts made %d tasks", len(tasks))
	}

	// The manager opts in to other variables (AWX's "prompt on launch").
	var template map[string]any
	admin.must("GET", p+"/templates/"+itoa(hello), nil, http.StatusOK, &template)
	template["allow_override_extra_vars_in_task"] = true
	admin.must("PUT", p+"/templates/"+itoa(hello), template, http.StatusNoContent, nil)

	// An ordinary extra variable now passes and the run succeeds; ansible_*
	// is still refused.
	refused(map[string]any{"template_id": hello, "environment": string(environment)}, interpreterRefused)
	ws := runner.websocket()
	var task struct {
		ID int64 `json:"id"`
	}
	runner.must("POST", p+"/tasks", map[string]any{"template_id": hello, "environment": `{"colour":"red"}`}, http.StatusCreated, &task)
	status, lines := follow(t, ws, d.projectID, task.ID, 3*time.Minute)
	_, raw := runner.call("GET", p+"/tasks/"+itoa(task.ID)+"/raw", nil)
	if status != "success" {
		t.Fatalf("the allowed task ended %s:\n%s", status, raw)
	}
	runner.must("GET", p+"/tasks", nil, http.StatusOK, &tasks)
	if len(tasks) != 1 {
		t.Errorf("%d tasks, want only the allowed one", len(tasks))
	}

	// The payload never ran and was never echoed: not in an answer, the
	// run's output or the manager's log (whose banner names the data dir,
	// so only the marker is looked for there).
	output := strings.Join(answers, "\n") + string(raw) + strings.Join(lines, "\n")
	if strings.Contains(output, marker) || strings.Contains(output, "bastion.db") {
		t.Errorf("the attack's payload or its result appears in an answer or the output:\n%s", output)
	}
	if strings.Contains(d.dev.output(), marker) {
		t.Error("the attack's payload appears in the manager's log")
	}
}

// TestAttack_aTaskRunnersLimitCannotReadTheManagersKubeconfig: on the real
// `bastion dev`, a task_runner of the demo project starts Hello Ansible
// (no opt-in at all) with limit "@<data dir>/kubeconfig". ansible-playbook
// reads the file as host patterns and prints every line as "Could not
// match supplied host pattern, ignoring: <line>", so the cluster's admin
// credentials (client-key-data) land in the task's output, which the
// task_runner reads. The start is refused (400, saying a limit is host
// patterns), and no line of the kubeconfig appears anywhere.
func TestAttack_aTaskRunnersLimitCannotReadTheManagersKubeconfig(t *testing.T) {
	t.Parallel()
	d := newDemoWithTaskRunner(t)
	p, runner, hello, dataDir := d.path, d.runner, d.hello, d.dataDir
	kubeconfig, err := os.ReadFile(filepath.Join(dataDir, "kubeconfig"))
	if err != nil {
		t.Fatalf("bastion dev wrote no kubeconfig in its data dir: %v", err)
	}
	var keyLine string
	for _, l := range strings.Split(string(kubeconfig), "\n") {
		if strings.Contains(l, "client-key-data:") || strings.Contains(l, "token:") {
			keyLine = strings.TrimSpace(l)
		}
	}
	if keyLine == "" {
		t.Fatalf("the kubeconfig has no client key or token:\n%s", kubeconfig)
	}

	ws := runner.websocket()
	code, data := runner.call("POST", p+"/tasks", map[string]any{"template_id": hello, "limit": "@" + filepath.Join(dataDir, "kubeconfig")})
	if code == http.StatusBadRequest && strings.Contains(string(data), "limit must be host patterns: it may not contain @ (ansible would read a file)") {
		if strings.Contains(string(data), "client-key-data") || strings.Contains(string(data), keyLine) {
			t.Errorf("the refusal carries the kubeconfig: %s", data)
		}
		return // refused: nothing ran
	}
	t.Errorf("POST /tasks with limit @<data dir>/kubeconfig = %d %s, want 400 saying a limit is host patterns", code, data)
	var task struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(data, &task); err != nil || task.ID == 0 {
		t.Fatalf("no task to follow: %s", data)
	}
	_, lines := follow(t, ws, d.projectID, task.ID, 3*time.Minute)
	_, raw := runner.call("GET", p+"/tasks/"+itoa(task.ID)+"/raw", nil)
	value := strings.TrimSpace(keyLine[strings.Index(keyLine, ":")+1:])
	// ansible wraps its warnings at 80 columns: compare without whitespace.
	out := strings.Join(strings.Fields(string(raw)+strings.Join(lines, "\n")), "")
	if strings.Contains(out, value[:40]) {
		t.Errorf("the task_runner read the manager's kubeconfig credentials in the task's output (%q…)", value[:40])
	}
}

// demoWithTaskRunner is a running `bastion dev` (its data directory), a
// demo project on it, a task_runner of it, and its Hello Ansible template.
type demoWithTaskRunner struct {
	dev           *devProcess
	dataDir       string
	admin, runner *apiClient
	projectID     int64
	path          string // /api/project/<id>
	hello         int64
}

func newDemoWithTaskRunner(t *testing.T) demoWithTaskRunner {
	t.Helper()
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		t.Fatal("ansible-playbook is not in PATH (Debian's ansible-core package)")
	}
	// As in the demo test: the machine's git configuration stays out of
	// the runs.
	dataDir := t.TempDir()
	dev := startDevEnv(t, dataDir, cleanGitEnv)
	dev.waitReady()
	admin := signedIn(t, dev.url, "admin", dev.bannerValue("password"))
	var project struct {
		ID int64 `json:"id"`
	}
	admin.must("POST", "/api/projects", map[string]any{"name": "Demo", "demo": true}, http.StatusCreated, &project)
	p := "/api/project/" + itoa(project.ID)
	var runnerUser struct {
		ID int64 `json:"id"`
	}
	admin.must("POST", "/api/users", map[string]any{"name": "Runner", "username": "runner", "email": "runner@example.test",
		"password": "runner-pw-1234"}, http.StatusCreated, &runnerUser)
	admin.must("POST", p+"/users", map[string]any{"user_id": runnerUser.ID, "role": "task_runner"}, http.StatusNoContent, nil)
	runner := signedIn(t, dev.url, "runner", "runner-pw-1234")
	return demoWithTaskRunner{dev: dev, dataDir: dataDir, admin: admin, runner: runner, projectID: project.ID, path: p,
		hello: runner.idNamed(p+"/templates", demorepo.AnsibleTemplate)}
}
