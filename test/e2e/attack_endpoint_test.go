package e2e

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/runproto"
)

// Issue #19, items 4, 5 and 9, against the real `bastion dev` binary: a
// task_runner cannot rewrite an integration's matchers, a finished task's
// runner token opens nothing, and a replayed signed GitHub delivery runs
// nothing.
func TestAttack_endpointTrust(t *testing.T) {
	t.Parallel()
	marker, err := os.MkdirTemp("", "bastion-attack-marker")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(marker) })
	// The run may be another user (item 3): it must see the marker.
	if err := os.Chmod(marker, 0o755); err != nil {
		t.Fatal(err)
	}
	repo := gittest.NewRepo(t)
	repo.WriteFile("wait.sh", "#!/bin/bash\necho waiting\nwhile [ ! -e "+filepath.Join(marker, "go")+" ]; do sleep 0.2; done\necho done\n", true)
	repo.WriteFile("hello.sh", "#!/bin/bash\necho hello\n", true)
	repo.Commit("scripts")

	dev := startDev(t, t.TempDir())
	dev.waitReady()
	kubeconfig := dev.bannerValue("kubeconfig")
	admin := signedIn(t, dev.url, "admin", dev.bannerValue("password"))
	project := admin.newLocalProject("Attacked", repo.Path, "localhost\n")
	p := project.Path
	const hookSecret = "attack-hook-secret-3b9f"
	admin.must("POST", p+"/keys", map[string]any{"name": "github-hook", "type": "login_password",
		"login_password": map[string]string{"password": hookSecret}}, http.StatusNoContent, nil)
	template := func(name, script string) int64 {
		var tpl struct {
			ID int64 `json:"id"`
		}
		admin.must("POST", p+"/templates", map[string]any{"name": name, "app": "bash", "playbook": script,
			"repository_id": project.Repository, "inventory_id": project.Inventory,
			"environment_id": project.Environment}, http.StatusCreated, &tpl)
		return tpl.ID
	}
	waiting, hello := template("Wait", "wait.sh"), template("Hello", "hello.sh")
	ns := projectNamespace(t, kubeconfig, project.ID)

	t.Run("a task_runner writing a matcher gets 403 and nothing changes", func(t *testing.T) {
		var in struct {
			ID int64 `json:"id"`
		}
		admin.must("POST", p+"/integrations", map[string]any{"name": "Guarded", "template_id": hello}, http.StatusCreated, &in)
		one := fmt.Sprintf("%s/integrations/%d", p, in.ID)
		var matcher struct {
			ID int64 `json:"id"`
		}
		admin.must("POST", one+"/matchers", map[string]any{"name": "push", "match_type": "header", "key": "X-GitHub-Event",
			"method": "equals", "value": "push"}, http.StatusCreated, &matcher)
		admin.must("POST", one+"/aliases", nil, http.StatusCreated, nil)
		_, before := admin.call("GET", one+"/matchers", nil)

		var runner struct {
			ID int64 `json:"id"`
		}
		admin.must("POST", "/api/users", map[string]any{"name": "Runner", "username": "runner", "email": "runner@example.test",
			"password": "runner-pw-12345"}, http.StatusCreated, &runner)
		admin.must("POST", p+"/users", map[string]any{"user_id": runner.ID, "role": "task_runner"}, http.StatusNoContent, nil)
		attacker := signedIn(t, dev.url, "runner", "runner-pw-12345")
		for _, w := range []struct {
			method, path string
			body         any
		}{
			{"POST", one + "/matchers", map[string]any{"name": "any", "match_type": "header", "key": "X-Any", "method": "contains", "value": ""}},
			{"PUT", fmt.Sprintf("%s/matchers/%d", one, matcher.ID), map[string]any{"name": "push", "match_type": "header", "key": "X-GitHub-Event", "method": "unequals", "value": "never"}},
			{"DELETE", fmt.Sprintf("%s/matchers/%d", one, matcher.ID), nil},
			{"POST", one + "/values", map[string]any{"name": "x", "value_source": "header", "key": "X-A", "variable": "A"}},
		} {
			code, data := attacker.call(w.method, w.path, w.body)
			if code != http.StatusForbidden || !strings.Contains(string(data), "you need the updateProject permission in this project") {
				t.Errorf("%s %s as a task_runner = %d %s, want 403", w.method, w.path, code, data)
			}
		}
		if code, data := attacker.call("GET", one+"/aliases", nil); code != http.StatusForbidden || strings.Contains(string(data), "/api/integrations/") {
			t.Errorf("GET aliases as a task_runner = %d %s, want 403 and no URL", code, data)
		}
		if _, after := admin.call("GET", one+"/matchers", nil); !bytes.Equal(before, after) {
			t.Errorf("the matchers changed: %s, were %s", after, before)
		}
	})

	t.Run("a finished task's token is refused", func(t *testing.T) {
		var task struct {
			ID int64 `json:"id"`
		}
		admin.must("POST", p+"/tasks", map[string]any{"template_id": waiting}, http.StatusCreated, &task)
		name := taskNamed(t, kubeconfig, ns, task.ID)
		var token string
		eventually(t, 90*time.Second, "the task running with its token", func() error {
			status, _ := kubectl(t, kubeconfig, "", "get", "task", name, "-n", ns, "-o", "jsonpath={.status.status}")
			if status != "running" {
				return fmt.Errorf("task %s is %q", name, status)
			}
			out, err := kubectl(t, kubeconfig, "", "get", "secret", "-n", ns, name+"-input", "-o", "jsonpath={.data.token}")
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			raw, err := base64.StdEncoding.DecodeString(out)
			token = string(raw)
			return err
		})
		post := func() (int, string) {
			req, err := http.NewRequest("POST", dev.url+runproto.EventsPath(ns, name), strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(data)
		}
		if code, data := post(); code != http.StatusOK {
			t.Fatalf("the running task's token = %d %s, want 200", code, data)
		}
		if err := os.WriteFile(filepath.Join(marker, "go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		eventually(t, 90*time.Second, "the task finished", func() error {
			var got struct {
				Status string `json:"status"`
			}
			admin.must("GET", fmt.Sprintf("%s/tasks/%d", p, task.ID), nil, http.StatusOK, &got)
			if got.Status != "success" {
				return fmt.Errorf("task %d is %q", task.ID, got.Status)
			}
			return nil
		})
		if code, data := post(); code != http.StatusUnauthorized || !strings.Contains(data, "the task has finished") {
			t.Errorf("the finished task's token = %d %s, want 401 at once", code, data)
		}
	})

	t.Run("a replayed signed GitHub delivery is answered replay and starts no second task", func(t *testing.T) {
		var in struct {
			ID int64 `json:"id"`
		}
		admin.must("POST", p+"/integrations", map[string]any{"name": "GitHub", "template_id": hello, "auth_method": "github",
			"auth_secret_id": admin.idNamed(p+"/keys", "github-hook")}, http.StatusCreated, &in)
		var alias struct {
			URL string `json:"url"`
		}
		admin.must("POST", fmt.Sprintf("%s/integrations/%d/aliases", p, in.ID), nil, http.StatusCreated, &alias)
		body := []byte(`{"ref":"refs/heads/main","after":"0123456789abcdef"}`)
		mac := hmac.New(sha256.New, []byte(hookSecret))
		mac.Write(body)
		header := map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
			"X-Hub-Signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil))}
		before := countTasks(t, kubeconfig, ns)
		if code, data := sendHook(t, alias.URL, body, header); code != http.StatusNoContent {
			t.Fatalf("the signed delivery = %d %s, want 204", code, data)
		}
		code, data := sendHook(t, alias.URL, body, header)
		var answer struct {
			Message string `json:"message"`
		}
		if code != http.StatusOK || json.Unmarshal(data, &answer) != nil || !strings.Contains(answer.Message, "replay") {
			t.Errorf("the replayed delivery = %d %s, want 200 saying replay", code, data)
		}
		if n := countTasks(t, kubeconfig, ns); n != before+1 {
			t.Errorf("%d tasks after a delivery and its replay, want %d", n, before+1)
		}
	})
}

// projectNamespace is the namespace of the project with id.
func projectNamespace(t *testing.T, kubeconfig string, id int64) string {
	t.Helper()
	out, err := kubectl(t, kubeconfig, "", "get", "projects", "-l", bastionv1.LabelID+"="+itoa(id), "-o", "jsonpath={.items[0].metadata.name}")
	if err != nil || out == "" {
		t.Fatalf("project %d: %v %s", id, err, out)
	}
	return bastionv1.ProjectNamespace(out)
}

// taskNamed is the object name of the task with id in ns.
func taskNamed(t *testing.T, kubeconfig, ns string, id int64) string {
	t.Helper()
	out, err := kubectl(t, kubeconfig, "", "get", "tasks", "-n", ns, "-l", bastionv1.LabelID+"="+itoa(id), "-o", "jsonpath={.items[0].metadata.name}")
	if err != nil || out == "" {
		t.Fatalf("task %d: %v %s", id, err, out)
	}
	return out
}

// countTasks counts the Task objects of ns, read from the apiserver.
func countTasks(t *testing.T, kubeconfig, ns string) int {
	t.Helper()
	out, err := kubectl(t, kubeconfig, "", "get", "tasks", "-n", ns, "-o", "name")
	if err != nil {
		t.Fatalf("kubectl: %v %s", err, out)
	}
	return len(strings.Fields(out))
}

// sendHook posts a webhook as a server does: no cookie, no Origin.
func sendHook(t *testing.T, url string, body []byte, header map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}
