package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
)

// A script's whole path through the API only, on the real binary: a key, a
// repository (a local git repository), an inventory, an environment and a
// template are created with /api calls; a task is started with one; the
// websocket follows it to success; its output is read whole, paged and raw.
func TestAPI_createEverythingStartATaskFollowItAndReadItsOutput(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t)
	repo.WriteFile("site.yml", `- hosts: all
  gather_facts: false
  tasks:
    - name: greet
      debug:
        msg: "greeting is {{ greeting }}"
`, false)

	dev := startDev(t, t.TempDir())
	dev.waitReady()
	api := signedIn(t, dev.url, "admin", dev.bannerValue("password"))

	var project struct {
		ID int64 `json:"id"`
	}
	api.must("POST", "/api/projects", map[string]any{"name": "Through the API"}, http.StatusCreated, &project)
	p := "/api/project/" + itoa(project.ID)

	api.must("POST", p+"/keys", map[string]any{"name": "nothing", "type": "none"}, http.StatusNoContent, nil)
	keyID := api.idNamed(p+"/keys", "nothing")
	api.must("POST", p+"/repositories", map[string]any{
		"name": "playbooks", "git_url": repo.Path, "git_branch": "", "ssh_key_id": keyID,
	}, http.StatusNoContent, nil)
	repoID := api.idNamed(p+"/repositories", "playbooks")
	var inventory struct {
		ID int64 `json:"id"`
	}
	api.must("POST", p+"/inventory", map[string]any{
		"name": "here", "type": "static", "inventory": "localhost ansible_connection=local\n", "ssh_key_id": keyID,
	}, http.StatusCreated, &inventory)
	api.must("POST", p+"/environment", map[string]any{
		"name": "greetings", "json": `{"greeting": "hello from the API"}`, "env": "{}",
	}, http.StatusNoContent, nil)
	envID := api.idNamed(p+"/environment", "greetings")
	var template struct {
		ID int64 `json:"id"`
	}
	api.must("POST", p+"/templates", map[string]any{
		"name": "Greet", "playbook": "site.yml", "repository_id": repoID, "inventory_id": inventory.ID,
		"environment_id": envID, "app": "ansible",
	}, http.StatusCreated, &template)

	ws := api.websocket()
	var task struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	api.must("POST", p+"/tasks", map[string]any{"template_id": template.ID, "message": "from a script"}, http.StatusCreated, &task)
	status, seen := follow(t, ws, project.ID, task.ID, 3*time.Minute)
	if status != "success" {
		code, out := api.call("GET", p+"/tasks/"+itoa(task.ID)+"/raw", nil)
		t.Fatalf("task %d ended %s; output (%d):\n%s", task.ID, status, code, out)
	}

	// The whole log: one record per line, in order, and the play's line.
	type record struct {
		TaskID int64  `json:"task_id"`
		Output string `json:"output"`
	}
	var whole []record
	api.must("GET", p+"/tasks/"+itoa(task.ID)+"/output", nil, http.StatusOK, &whole)
	var text []string
	for _, r := range whole {
		if r.TaskID != task.ID {
			t.Fatalf("a record of task %d in task %d's output", r.TaskID, task.ID)
		}
		text = append(text, r.Output)
	}
	if !containsLine(text, "greeting is hello from the API") {
		t.Fatalf("the extra variable did not reach the play:\n%s", strings.Join(text, "\n"))
	}

	// The websocket delivered every stored line, in order (log frames may
	// trail the final update by a moment: read on until they are all in).
	for deadline := time.Now().Add(10 * time.Second); len(seen) < len(text) && time.Now().Before(deadline); {
		_ = ws.SetReadDeadline(deadline)
		var f wsFrame
		if err := ws.ReadJSON(&f); err != nil {
			break
		}
		if f.Type == "log" && f.TaskID == task.ID && f.ProjectID == project.ID {
			seen = append(seen, f.Output)
		}
	}
	if strings.Join(seen, "\n") != strings.Join(text, "\n") {
		t.Fatalf("websocket lines (%d) differ from the stored output (%d):\nws:\n%s\nstored:\n%s",
			len(seen), len(text), strings.Join(seen, "\n"), strings.Join(text, "\n"))
	}

	// Paged: offset and limit select a window of the same records.
	var page []record
	api.must("GET", p+"/tasks/"+itoa(task.ID)+"/output?offset=1&limit=2", nil, http.StatusOK, &page)
	if len(text) < 3 || len(page) != 2 || page[0].Output != text[1] || page[1].Output != text[2] {
		t.Fatalf("page offset=1 limit=2 = %+v; whole log:\n%s", page, strings.Join(text, "\n"))
	}

	// Raw: the same lines as text, each ended by a newline.
	code, raw := api.call("GET", p+"/tasks/"+itoa(task.ID)+"/raw", nil)
	if code != http.StatusOK || string(raw) != strings.Join(text, "\n")+"\n" {
		t.Fatalf("raw = %d %q, want the stored lines", code, raw)
	}

	// The task as the history shows it.
	var got struct {
		Status     string `json:"status"`
		Message    string `json:"message"`
		CommitHash string `json:"commit_hash"`
		TemplateID int64  `json:"template_id"`
	}
	api.must("GET", p+"/tasks/"+itoa(task.ID), nil, http.StatusOK, &got)
	head := repo.Git("-C", repo.Path, "rev-parse", "HEAD")
	if got.Status != "success" || got.TemplateID != template.ID || got.CommitHash != head {
		t.Fatalf("task = %+v, want success of template %d at %s", got, template.ID, head)
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
