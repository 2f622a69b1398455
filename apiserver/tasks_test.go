package apiserver_test

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

func TestTasks_startRulesAnswerTheirMessageAndWriteNothing(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	surveyed := p.createTemplate(t, "Surveyed", func(b map[string]any) {
		b["survey_vars"] = []map[string]any{
			{"name": "tag", "title": "Release tag", "required": true},
			{"name": "replicas", "title": "Replicas", "type": "int"},
			{"name": "tier", "title": "Tier", "type": "enum", "values": []map[string]any{{"name": "Gold", "value": "gold"}}},
		}
	})
	build := p.createTemplate(t, "Compile", func(b map[string]any) { b["type"] = "build"; b["start_version"] = "1.0.0" })
	deploy := p.createTemplate(t, "Ship", func(b map[string]any) { b["type"] = "deploy"; b["build_template_id"] = build.ID })
	open := p.createTemplate(t, "Open", allowEveryOverride)
	failed := p.startTask(t, map[string]any{"template_id": build.ID})
	p.waitStatus(t, failed.ID, bastionv1.TaskStarting)
	p.setStatus(t, failed.ID, bastionv1.TaskError)
	notABuild := p.startTask(t, map[string]any{"template_id": surveyed.ID, "environment": `{"tag":"v1"}`})
	tasksBefore := p.taskCount(t)

	env := func(vars string) map[string]any {
		return map[string]any{"template_id": surveyed.ID, "environment": vars}
	}
	for _, tc := range []struct {
		name string
		body map[string]any
		want string
	}{
		{"no template", map[string]any{"message": "hi"}, "Template is required"},
		{"a template of another project", map[string]any{"template_id": 99999}, "template_id 99999 does not exist in this project"},
		{"environment not JSON", env(`tag=v1`), "Environment and extra variables must be valid JSON"},
		{"environment an array", env(`["tag"]`), "Environment and extra variables must be valid JSON"},
		{"required survey variable missing", env(`{"replicas":"3"}`), "Release tag is required"},
		{"required survey variable empty", env(`{"tag":"  "}`), "Release tag is required"},
		{"required survey variable null", env(`{"tag":null}`), "Release tag is required"},
		{"no environment at all", map[string]any{"template_id": surveyed.ID}, "Release tag is required"},
		{"int survey variable with letters", env(`{"tag":"v1","replicas":"12a"}`), "Replicas must be a whole number (digits only)"},
		{"int survey variable negative", env(`{"tag":"v1","replicas":-1}`), "Replicas must be a whole number (digits only)"},
		{"int survey variable a fraction", env(`{"tag":"v1","replicas":1.5}`), "Replicas must be a whole number (digits only)"},
		{"enum survey variable off the list", env(`{"tag":"v1","tier":"silver"}`), "Tier must be one of its listed values"},
		{"arguments the template does not allow", map[string]any{"template_id": build.ID, "arguments": `["--check"]`},
			"This template does not allow a task to override its arguments (allow_override_args_in_task is off)"},
		{"arguments not an array", map[string]any{"template_id": build.ID, "arguments": `--check`}, `Arguments must be a JSON array of strings, such as ["-v", "--check"]`},
		{"deploy without a build", map[string]any{"template_id": deploy.ID}, "Build version is required"},
		{"deploy of a failed build", map[string]any{"template_id": deploy.ID, "build_task_id": failed.ID},
			fmt.Sprintf("build task %d did not succeed (it is error); only successful builds can be deployed", failed.ID)},
		{"deploy of another template's task", map[string]any{"template_id": deploy.ID, "build_task_id": notABuild.ID},
			fmt.Sprintf("task %d is not a build of this template's build template", notABuild.ID)},
		{"deploy of a build that never was", map[string]any{"template_id": deploy.ID, "build_task_id": 88888}, "build task 88888 does not exist in this project"},
		{"an option as the commit", map[string]any{"template_id": build.ID, "commit_hash": "--upload-pack=touch /tmp/x"}, "commit_hash must be a commit id: 4 to 64 hexadecimal characters"},
		{"an option as the branch", map[string]any{"template_id": build.ID, "git_branch": "--upload-pack=x"}, "git_branch must not start with -"},
		{"an option as the limit", map[string]any{"template_id": build.ID, "limit": "-e x=1"}, "limit must not start with -"},
		{"a missing inventory", map[string]any{"template_id": open.ID, "inventory_id": 77777}, "inventory_id 77777 does not exist in this project"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, data := p.b.call("POST", p.path("/tasks"), tc.body)
			if code != http.StatusBadRequest || errorOf(t, data) != tc.want {
				t.Errorf("POST /tasks = %d %s, want 400 %q", code, data, tc.want)
			}
		})
	}
	if n := p.taskCount(t); n != tasksBefore {
		t.Errorf("refused starts made Tasks: %d → %d", tasksBefore, n)
	}

	// What the rules allow.
	p.startTask(t, env(`{"tag":"v1","replicas":"12","tier":"gold"}`))
	p.startTask(t, env(`{"tag":"v1","replicas":3}`))
}

func TestTasks_startListGetStopConfirmAndDelete(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	tpl := p.createTemplate(t, "Site", func(b map[string]any) {
		allowEveryOverride(b)
		b["app"] = "ansible"
	})
	started := p.startTask(t, map[string]any{
		"template_id": tpl.ID, "message": "first run", "environment": `{"tier": "gold"}`, "debug": true, "dry_run": true,
		"diff": true, "arguments": `["--forks","5"]`, "commit_hash": "0123abcd", "git_branch": "feature", "limit": "web1",
		"playbook": "other.yml", "inventory_id": p.inv.id,
	})
	ownerID := userIDOf(t, p.owner)
	if started.ID == 0 || started.TemplateID != tpl.ID || started.ProjectID != p.pid || started.Status != "waiting" ||
		started.Message != "first run" || started.Environment != `{"tier":"gold"}` || !started.Debug || !started.DryRun || !started.Diff ||
		started.Arguments != `["--forks","5"]` || started.CommitHash != "0123abcd" || started.GitBranch != "feature" ||
		started.Limit != "web1" || started.Playbook != "other.yml" || started.InventoryID == nil || *started.InventoryID != p.inv.id ||
		started.UserID == nil || *started.UserID != ownerID || started.Start != nil || started.End != nil || started.Secret != "" {
		t.Fatalf("started task = %+v", started)
	}
	if obj := p.taskObject(t, started.ID); obj.Spec.User != p.owner.Name {
		t.Errorf("spec.user = %q, want the starter %q", obj.Spec.User, p.owner.Name)
	}
	if !hasEvent(t, p, fmt.Sprintf("Task %d of Site created", started.ID)) {
		t.Error("no event for the start")
	}

	// Lists show it with its template's fields; the reconciler moves it to
	// starting (the harness has no kubelet, so it stays there).
	p.waitStatus(t, started.ID, bastionv1.TaskStarting)
	for _, path := range []string{"/tasks", "/tasks/last", "/tasks/last?limit=1", fmt.Sprintf("/templates/%d/tasks/last", tpl.ID)} {
		eventually(t, 10*time.Second, func() (bool, string) {
			items := p.tasks(t, path)
			ok := len(items) == 1 && items[0].ID == started.ID && items[0].Status == "starting" && items[0].TplAlias == "Site" &&
				items[0].TplPlaybook == "site.yml" && items[0].TplType == "" && items[0].TplApp == "ansible" &&
				items[0].UserName != nil && *items[0].UserName == p.owner.Spec.Name && items[0].BuildTask == nil
			return ok, fmt.Sprintf("%s = %+v", path, items)
		})
	}
	var one apiTask
	p.b.must("GET", p.path("/tasks/%d", started.ID), nil, http.StatusOK, &one)
	if one.ID != started.ID || one.Message != "first run" || one.Status != "starting" {
		t.Errorf("GET task = %+v", one)
	}
	// One task answers in the list shape: the log names its author and template.
	if one.UserName == nil || *one.UserName != p.owner.Spec.Name || one.TplAlias != "Site" || one.TplApp != "ansible" {
		t.Errorf("GET task lacks the list fields: user_name %v, tpl_alias %q, tpl_app %q", one.UserName, one.TplAlias, one.TplApp)
	}

	// Confirm is for a task that waits for it.
	code, data := p.b.call("POST", p.path("/tasks/%d/confirm", started.ID), nil)
	if code != http.StatusConflict || errorOf(t, data) != fmt.Sprintf("task %d is not waiting for confirmation (it is starting)", started.ID) {
		t.Errorf("confirm of a starting task = %d %s", code, data)
	}
	p.setStatus(t, started.ID, bastionv1.TaskWaitingConfirmation)
	p.b.must("POST", p.path("/tasks/%d/confirm", started.ID), nil, http.StatusNoContent, nil)
	if obj := p.taskObject(t, started.ID); !obj.Spec.Confirmed {
		t.Error("confirm did not set spec.confirmed")
	}
	p.waitStatus(t, started.ID, bastionv1.TaskConfirmed)

	// A graceful stop goes through the reconciler to stopped.
	p.b.must("POST", p.path("/tasks/%d/stop", started.ID), map[string]any{"force": false}, http.StatusNoContent, nil)
	if obj := p.taskObject(t, started.ID); obj.Spec.Stop != bastionv1.StopGraceful {
		t.Errorf("spec.stop = %q, want graceful", obj.Spec.Stop)
	}
	p.waitStatus(t, started.ID, bastionv1.TaskStopped)
	code, data = p.b.call("POST", p.path("/tasks/%d/stop", started.ID), nil)
	if code != http.StatusConflict || errorOf(t, data) != fmt.Sprintf("task %d has already finished (stopped)", started.ID) {
		t.Errorf("stopping a stopped task = %d %s", code, data)
	}

	// A force stop.
	forced := p.startTask(t, map[string]any{"template_id": tpl.ID})
	p.waitStatus(t, forced.ID, bastionv1.TaskStarting)
	p.b.must("POST", p.path("/tasks/%d/stop", forced.ID), map[string]any{"force": true}, http.StatusNoContent, nil)
	if obj := p.waitStatus(t, forced.ID, bastionv1.TaskStopped); obj.Spec.Stop != bastionv1.StopForce || obj.Status.Message != "force stopped" {
		t.Errorf("force stop: spec.stop %q, message %q", obj.Spec.Stop, obj.Status.Message)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		items := p.tasks(t, "/tasks")
		return len(items) == 2 && items[0].ID == forced.ID && items[0].Status == "stopped" && items[0].End != nil,
			fmt.Sprintf("tasks after the stops = %+v", items)
	})

	// Delete takes the object, its output and its summary.
	key := store.TaskKey{ProjectID: p.pid, TaskID: started.ID}
	if err := e.Store.AppendLines(t.Context(), key, []store.Line{{Seq: 1, Time: time.Now(), Output: "x"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		_, err := e.Store.TaskSummary(t.Context(), key)
		return err == nil, "the reconciler never saved the stopped task's summary"
	})
	p.b.must("DELETE", p.path("/tasks/%d", started.ID), nil, http.StatusNoContent, nil)
	if code, _ := p.b.call("GET", p.path("/tasks/%d", started.ID), nil); code != http.StatusNotFound {
		t.Errorf("GET a deleted task = %d, want 404", code)
	}
	if _, err := e.Store.TaskSummary(t.Context(), key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("summary after delete: %v", err)
	}
	if lines, _ := e.Store.Lines(t.Context(), key, 0, 5); len(lines) != 0 {
		t.Errorf("output after delete: %v", lines)
	}
	if items := p.tasks(t, "/tasks"); len(items) != 1 || items[0].ID != forced.ID {
		t.Errorf("tasks after the delete = %+v", items)
	}
	if !hasEvent(t, p, fmt.Sprintf("Task %d of Site deleted", started.ID)) {
		t.Error("no event for the delete")
	}
}

func TestTasks_deployTakesTheVersionOfItsSuccessfulBuild(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	build := p.createTemplate(t, "Compile", func(b map[string]any) { b["type"] = "build"; b["start_version"] = "1.4.9" })
	deploy := p.createTemplate(t, "Ship", func(b map[string]any) { b["type"] = "deploy"; b["build_template_id"] = build.ID })

	first := p.startTask(t, map[string]any{"template_id": build.ID})
	p.waitStatus(t, first.ID, bastionv1.TaskStarting)
	p.setStatus(t, first.ID, bastionv1.TaskSuccess)
	second := p.startTask(t, map[string]any{"template_id": build.ID})
	p.waitStatus(t, second.ID, bastionv1.TaskStarting)

	// The deploy form offers the successful builds only.
	var offered []apiTask
	eventually(t, 10*time.Second, func() (bool, string) {
		offered = p.tasks(t, fmt.Sprintf("/templates/%d/tasks?status=success", build.ID))
		return len(offered) == 1 && offered[0].ID == first.ID, fmt.Sprintf("successful builds = %+v", offered)
	})
	if offered[0].Version == nil || *offered[0].Version != "1.4.9" {
		t.Fatalf("the first build's version = %v, want the start version 1.4.9", offered[0].Version)
	}

	deployed := p.startTask(t, map[string]any{"template_id": deploy.ID, "build_task_id": first.ID})
	if deployed.BuildTaskID == nil || *deployed.BuildTaskID != first.ID {
		t.Fatalf("deploy task = %+v, want build_task_id %d", deployed, first.ID)
	}
	if obj := p.waitStatus(t, deployed.ID, bastionv1.TaskStarting); obj.Status.Version != "1.4.9" {
		t.Errorf("the deploy's version = %q, want its build's 1.4.9", obj.Status.Version)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		items := p.tasks(t, fmt.Sprintf("/templates/%d/tasks/last", deploy.ID))
		ok := len(items) == 1 && items[0].Version != nil && *items[0].Version == "1.4.9" && items[0].TplType == "deploy" &&
			items[0].BuildTask != nil && items[0].BuildTask.ID == first.ID && items[0].BuildTask.Status == "success"
		return ok, fmt.Sprintf("deploy list = %+v", items)
	})
	code, data := p.b.call("POST", p.path("/tasks"), map[string]any{"template_id": deploy.ID, "build_task_id": nil})
	if code != http.StatusBadRequest || errorOf(t, data) != "Build version is required" {
		t.Errorf("a deploy without a build = %d %s", code, data)
	}
	code, data = p.b.call("POST", p.path("/tasks"), map[string]any{"template_id": deploy.ID, "build_task_id": second.ID})
	if code != http.StatusBadRequest || !strings.Contains(errorOf(t, data), "did not succeed (it is starting)") {
		t.Errorf("a deploy of an unfinished build = %d %s", code, data)
	}
}

func TestTasks_listsMergeLiveAndPrunedTasksWithoutDuplicatesAndHonourTheLimit(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	// Everything is made before the API first reads the project, so the
	// first read merges: three pruned tasks (summaries only) and three
	// live ones that have a summary as well (finished, not yet pruned).
	tpl := p.makeTemplate(t, "many", "Many")
	var want []int64
	for range 3 {
		want = append(want, p.putSummary(t, store.TaskSummary{TemplateID: tpl.ID, Status: "success"}))
	}
	for i := range 3 {
		task := p.make(t, &bastionv1.Task{Spec: bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: tpl.name}}}, fmt.Sprintf("many-%d", i), ids.CounterTask)
		want = append(want, task.id)
		p.putSummary(t, store.TaskSummary{TaskID: task.id, TemplateID: tpl.ID, Status: "success"})
	}
	items := p.tasks(t, "/tasks")
	if len(items) != 6 {
		t.Fatalf("tasks = %d items, want 6", len(items))
	}
	for i, item := range items {
		if item.ID != want[len(want)-1-i] {
			t.Fatalf("item %d is task %d, want %d (newest first)", i, item.ID, want[len(want)-1-i])
		}
	}
	if items := p.tasks(t, "/tasks/last?limit=4"); len(items) != 4 || items[3].ID != want[2] {
		t.Errorf("limit=4 = %+v", items)
	}
	for _, bad := range []string{"?limit=0", "?limit=201", "?limit=ten", "?status=done"} {
		code, data := p.b.call("GET", p.path("/tasks/last%s", bad), nil)
		if code != http.StatusBadRequest {
			t.Errorf("tasks/last%s = %d %s, want 400", bad, code, data)
		}
	}
	// The shape of a list item: every field of the contract.
	var raw []map[string]any
	p.b.must("GET", p.path("/tasks/last?limit=1"), nil, http.StatusOK, &raw)
	for _, field := range []string{"id", "template_id", "project_id", "status", "debug", "dry_run", "diff", "playbook", "environment",
		"limit", "secret", "arguments", "git_branch", "user_id", "integration_id", "schedule_id", "created", "start", "end", "message",
		"commit_hash", "commit_message", "build_task_id", "version", "inventory_id", "tpl_playbook", "tpl_alias", "tpl_type", "tpl_app",
		"user_name", "build_task"} {
		if _, ok := raw[0][field]; !ok {
			t.Errorf("a list item has no %s: %v", field, raw[0])
		}
	}
	// Compressed for a client that asks, the same answer (of pruned
	// tasks, which the reconciler no longer moves).
	var plain []map[string]any
	p.b.must("GET", p.path("/tasks/last?status=success"), nil, http.StatusOK, &plain)
	req, _ := http.NewRequestWithContext(t.Context(), "GET", e.URL+p.path("/tasks/last?status=success"), nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := p.b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	zr, err := gzip.NewReader(resp.Body)
	if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip answer: %v, Content-Encoding %q", err, resp.Header.Get("Content-Encoding"))
	}
	var unzipped []map[string]any
	if err := json.NewDecoder(zr).Decode(&unzipped); err != nil || len(plain) != 3 || !reflect.DeepEqual(unzipped, plain) {
		t.Errorf("gzip answer = %v (%v), want %v", unzipped, err, plain)
	}
	data, _ := json.Marshal(raw[0])
	if len(raw[0]) != 31 {
		t.Errorf("a list item has %d fields, want 31: %s", len(raw[0]), data)
	}
}
