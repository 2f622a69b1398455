package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
)

// On the real binary and runner: the answer to a secret survey variable
// reaches the play, is masked in the output, and is found neither in the
// task's API answer nor in any object kubectl can read once the run ended.
func TestDev_aSecretSurveyAnswerReachesThePlayMaskedAndIsGoneAfter(t *testing.T) {
	t.Parallel()
	const canary = "canary-7c1e0-db-password"
	repo := gittest.NewRepo(t)
	repo.WriteFile("rotate.yml", `- hosts: all
  gather_facts: false
  tasks:
    - name: use the password
      debug:
        msg: "connecting to {{ host }} with {{ db_password }}"
`, false)
	repo.Commit("rotate")

	dev := startDev(t, t.TempDir())
	dev.waitReady()
	api := signedIn(t, dev.url, "admin", dev.bannerValue("password"))
	project := api.newLocalProject("Secrets", repo.Path, "localhost ansible_connection=local\n")
	p := project.Path
	var template struct {
		ID int64 `json:"id"`
	}
	api.must("POST", p+"/templates", map[string]any{"name": "Rotate", "app": "ansible", "playbook": "rotate.yml",
		"repository_id": project.Repository, "inventory_id": project.Inventory, "environment_id": project.Environment,
		"survey_vars": []map[string]any{
			{"name": "host", "title": "Host", "required": true},
			{"name": "db_password", "title": "Database password", "type": "secret", "required": true},
		}}, http.StatusCreated, &template)

	ws := api.websocket()
	var task struct {
		ID int64 `json:"id"`
	}
	api.must("POST", p+"/tasks", map[string]any{"template_id": template.ID, "environment": `{"host":"db1"}`, "secret": `{"db_password":"` + canary + `"}`},
		http.StatusCreated, &task)
	status, lines := follow(t, ws, project.ID, task.ID, 3*time.Minute)
	code, raw := api.call("GET", p+"/tasks/"+itoa(task.ID)+"/raw", nil)
	if status != "success" || code != http.StatusOK {
		t.Fatalf("task %d ended %s; output (%d):\n%s", task.ID, status, code, raw)
	}
	if !strings.Contains(string(raw), "connecting to db1 with ********") {
		t.Errorf("the play did not get the masked secret answer:\n%s", raw)
	}
	for what, text := range map[string]string{"the stored output": string(raw), "the websocket": strings.Join(lines, "\n")} {
		if strings.Contains(text, canary) {
			t.Errorf("%s shows the secret answer:\n%s", what, text)
		}
	}
	_, answer := api.call("GET", p+"/tasks/"+itoa(task.ID), nil)
	if strings.Contains(string(answer), canary) {
		t.Errorf("the task's API answer holds the secret: %s", answer)
	}

	// Once the run is over, no object in the cluster holds it: the task's
	// Secret went with the run, and the Task never had it.
	kubeconfig := dev.bannerValue("kubeconfig")
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := kubectl(t, kubeconfig, "", "get", "tasks,secrets", "-A", "-o", "yaml")
		if err != nil {
			t.Fatalf("kubectl: %v\n%s", err, out)
		}
		if !strings.Contains(out, canary) && !strings.Contains(out, "Y2FuYXJ5LTdjMWUwLWRiLXBhc3N3b3Jk") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a Task or Secret still holds the secret answer after the run")
		}
		time.Sleep(500 * time.Millisecond)
	}
}
