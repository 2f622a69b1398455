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

// TestReview_aTaskRunnersLimitReadsTheManagersKubeconfig: on the real
// `bastion dev`, a task_runner of the demo project starts Hello Ansible
// (no opt-in at all) with limit "@<data dir>/kubeconfig". ansible-playbook
// reads the file as host patterns and prints every line as "Could not
// match supplied host pattern, ignoring: <line>", so the cluster's admin
// credentials (client-key-data) land in the task's output, which the
// task_runner reads. The start must be refused (400), and no line of the
// kubeconfig may appear anywhere.
func TestReview_aTaskRunnersLimitReadsTheManagersKubeconfig(t *testing.T) {
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		t.Fatal("ansible-playbook is not in PATH (Debian's ansible-core package)")
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	dataDir := t.TempDir()
	dev := startDev(t, dataDir)
	dev.waitReady()
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
	hello := runner.idNamed(p+"/templates", demorepo.AnsibleTemplate)

	ws := runner.websocket()
	code, data := runner.call("POST", p+"/tasks", map[string]any{"template_id": hello, "limit": "@" + filepath.Join(dataDir, "kubeconfig")})
	if code == http.StatusBadRequest {
		return // refused: nothing ran
	}
	t.Errorf("POST /tasks with limit @<data dir>/kubeconfig = %d %s, want 400", code, data)
	var task struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(data, &task); err != nil || task.ID == 0 {
		t.Fatalf("no task to follow: %s", data)
	}
	_, lines := follow(t, ws, project.ID, task.ID, 3*time.Minute)
	_, raw := runner.call("GET", p+"/tasks/"+itoa(task.ID)+"/raw", nil)
	value := strings.TrimSpace(keyLine[strings.Index(keyLine, ":")+1:])
	// ansible wraps its warnings at 80 columns: compare without whitespace.
	out := strings.Join(strings.Fields(string(raw)+strings.Join(lines, "\n")), "")
	if strings.Contains(out, value[:40]) {
		t.Errorf("the task_runner read the manager's kubeconfig credentials in the task's output (%q…)", value[:40])
	}
}
