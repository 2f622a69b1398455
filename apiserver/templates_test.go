package apiserver_test

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

func TestTemplates_spec5RulesAnswerTheirMessageAndWriteNothing(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	plain := p.createTemplate(t, "Plain", nil)
	other := p.createTemplate(t, "Other", nil)
	before := p.templateObject(t, plain.ID)

	survey := func(vars ...map[string]any) func(map[string]any) {
		return func(b map[string]any) { b["survey_vars"] = vars }
	}
	for _, tc := range []struct {
		name   string
		change func(map[string]any)
		want   string
	}{
		{"no name", func(b map[string]any) { delete(b, "name") }, "Name is required"},
		{"a name of spaces", func(b map[string]any) { b["name"] = "   " }, "Name is required"},
		{"no playbook", func(b map[string]any) { b["playbook"] = "" }, "Playbook filename is required"},
		{"no repository", func(b map[string]any) { delete(b, "repository_id") }, "Repository is required"},
		{"no environment", func(b map[string]any) { b["environment_id"] = 0 }, "Environment is required"},
		{"build without start version", func(b map[string]any) { b["type"] = "build"; b["start_version"] = " " }, "Start version is required"},
		{"build with a start version without digits", func(b map[string]any) { b["type"] = "build"; b["start_version"] = "latest" },
			`Start version must contain digits to count up from, for example 0.0.0 ("latest" has none)`},
		{"deploy without build template", func(b map[string]any) { b["type"] = "deploy"; b["build_template_id"] = nil }, "Build template is required"},
		{"arguments not JSON", func(b map[string]any) { b["arguments"] = "-v --check" }, `Arguments must be a JSON array of strings, such as ["-v", "--check"]`},
		{"arguments an object", func(b map[string]any) { b["arguments"] = `{"v":true}` }, `Arguments must be a JSON array of strings, such as ["-v", "--check"]`},
		{"arguments of numbers", func(b map[string]any) { b["arguments"] = `[1,2]` }, `Arguments must be a JSON array of strings, such as ["-v", "--check"]`},
		{"survey variable without name", survey(map[string]any{"name": "", "title": "Tag"}), "Name is required"},
		{"survey variable named with spaces", survey(map[string]any{"name": "   ", "title": "Tag"}), "Name is required"},
		{"survey variable without title", survey(map[string]any{"name": "tag", "title": ""}), "Title is required"},
		{"survey variable of an unknown type", survey(map[string]any{"name": "tag", "title": "Tag", "type": "float"}), `survey variable tag: type must be "", int, enum or secret, not "float"`},
		{"survey variable twice", survey(map[string]any{"name": "tag", "title": "Tag"}, map[string]any{"name": " tag ", "title": "Again"}), "survey variable tag is defined twice"},
		{"unknown type", func(b map[string]any) { b["type"] = "nightly" }, `type must be "", build or deploy, not "nightly"`},
		{"unknown app", func(b map[string]any) { b["app"] = "ruby" }, `app must be "", ansible, terraform, tofu or bash, not "ruby"`},
		{"missing repository", func(b map[string]any) { b["repository_id"] = 9999 }, "repository_id 9999 does not exist in this project"},
		{"missing inventory", func(b map[string]any) { b["inventory_id"] = 9998 }, "inventory_id 9998 does not exist in this project"},
		{"missing view", func(b map[string]any) { b["view_id"] = 9997 }, "view_id 9997 does not exist in this project"},
		{"missing vault key", func(b map[string]any) { b["vaults"] = []map[string]any{{"vault_key_id": 9996}} }, "vault_key_id 9996 does not exist in this project"},
		{"build template that does not build", func(b map[string]any) { b["type"] = "deploy"; b["build_template_id"] = other.ID },
			"the build template must be a template of type build; Other is not"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, data := p.b.call("POST", p.path("/templates"), p.templateBody("Bad", tc.change))
			if code != http.StatusBadRequest || errorOf(t, data) != tc.want {
				t.Errorf("POST = %d %s, want 400 %q", code, data, tc.want)
			}
			body := p.templateBody("Plain", tc.change)
			body["id"] = plain.ID
			code, data = p.b.call("PUT", p.path("/templates/%d", plain.ID), body)
			if code != http.StatusBadRequest || errorOf(t, data) != tc.want {
				t.Errorf("PUT = %d %s, want 400 %q", code, data, tc.want)
			}
		})
	}
	code, data := p.b.call("POST", p.path("/templates"), []byte(`{"name": 5}`))
	if code != http.StatusBadRequest || !strings.HasPrefix(errorOf(t, data), "invalid JSON") {
		t.Errorf("a body of the wrong type = %d %s", code, data)
	}
	code, data = p.b.call("PUT", p.path("/templates/%d", plain.ID), p.templateBody("Plain", func(b map[string]any) { b["id"] = plain.ID + 1 }))
	if code != http.StatusBadRequest || !strings.Contains(errorOf(t, data), "is not the URL's id") {
		t.Errorf("PUT with another id = %d %s", code, data)
	}

	code, data = p.b.call("PUT", p.path("/templates/%d", plain.ID), p.templateBody("Plain", func(b map[string]any) {
		b["type"] = "deploy"
		b["build_template_id"] = plain.ID
	}))
	if code != http.StatusBadRequest || errorOf(t, data) != "a template cannot be its own build template" {
		t.Errorf("PUT as its own build template = %d %s", code, data)
	}

	// Nothing was written: the two templates, unchanged.
	list := &bastionv1.TemplateList{}
	if err := e.K8s.List(t.Context(), list, client.InNamespace(p.ns)); err != nil || len(list.Items) != 2 {
		t.Fatalf("templates after refused writes: %d (%v), want Plain and Other", len(list.Items), err)
	}
	if after := p.templateObject(t, plain.ID); after.ResourceVersion != before.ResourceVersion {
		t.Errorf("a refused PUT changed the template: %+v", after.Spec)
	}
}

func TestTemplates_everyFieldRoundTripsThroughCreateGetListAndUpdate(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	build := p.createTemplate(t, "Compile", func(b map[string]any) { b["type"] = "build"; b["start_version"] = "1.0.0" })

	full := p.templateBody("Release", func(b map[string]any) {
		b["arguments"] = `["-v","--diff"]`
		b["allow_override_args_in_task"] = true
		b["description"] = "Ships the site"
		b["type"] = "deploy"
		b["build_template_id"] = build.ID
		b["start_version"] = "2.0"
		b["view_id"] = p.view.id
		b["autorun"] = true
		b["git_branch"] = "release"
		b["suppress_success_alerts"] = true
		b["app"] = "terraform"
		b["survey_vars"] = []map[string]any{
			{"name": "tag", "title": "Release tag", "required": true, "type": "", "description": "git tag", "values": []any{}},
			{"name": "replicas", "title": "Replicas", "required": false, "type": "int", "description": "", "values": []any{}},
			{"name": "tier", "title": "Tier", "required": false, "type": "enum", "description": "",
				"values": []map[string]any{{"name": "Gold", "value": "gold"}, {"name": "Bronze", "value": "bronze"}}},
		}
	})
	var created map[string]any
	p.b.must("POST", p.path("/templates"), withVault(full, p.key.id, "prod"), http.StatusCreated, &created)
	id := int64(created["id"].(float64))
	checkTemplateFields(t, "created", created, full, p, id)

	got := p.rawJSON(t, fmt.Sprintf("/templates/%d", id))
	checkTemplateFields(t, "read", got, full, p, id)
	if got["last_task"] != nil || got["tasks"] != float64(0) {
		t.Errorf("a template never run has last_task %v and tasks %v, want null and 0", got["last_task"], got["tasks"])
	}
	var listed []map[string]any
	p.b.must("GET", p.path("/templates"), nil, http.StatusOK, &listed)
	if len(listed) != 2 || listed[0]["name"] != "Compile" || listed[1]["name"] != "Release" {
		t.Fatalf("list = %v, want Compile then Release", listed)
	}
	checkTemplateFields(t, "listed", listed[1], full, p, id)

	// Every field changes.
	changed := p.templateBody("Release 2", func(b map[string]any) {
		b["id"] = id
		b["playbook"] = "deploy.yml"
		b["inventory_id"] = nil
		b["arguments"] = `[]`
		b["allow_override_args_in_task"] = false
		b["description"] = ""
		b["type"] = "build"
		b["start_version"] = "v3-rc1"
		b["build_template_id"] = nil
		b["view_id"] = nil
		b["autorun"] = false
		b["git_branch"] = ""
		b["suppress_success_alerts"] = false
		b["app"] = "bash"
		b["survey_vars"] = []map[string]any{}
	})
	p.b.must("PUT", p.path("/templates/%d", id), changed, http.StatusNoContent, nil)
	got = p.rawJSON(t, fmt.Sprintf("/templates/%d", id))
	checkTemplateFields(t, "updated", got, changed, p, id)
	if len(got["vaults"].([]any)) != 0 {
		t.Errorf("vaults after an update without them = %v", got["vaults"])
	}

	// A client that saves what it read changes nothing.
	before := p.templateObject(t, id).Spec
	p.b.must("PUT", p.path("/templates/%d", id), got, http.StatusNoContent, nil)
	if after := p.templateObject(t, id).Spec; !reflect.DeepEqual(before, after) {
		t.Errorf("saving the read template changed it:\n%+v\n%+v", before, after)
	}

	for _, want := range []string{"Template Release created", "Template Release 2 updated"} {
		if !hasEvent(t, p, want) {
			t.Errorf("no event %q", want)
		}
	}
}

func withVault(body map[string]any, keyID int64, name string) map[string]any {
	body["vaults"] = []map[string]any{{"vault_key_id": keyID, "name": name}}
	return body
}

// checkTemplateFields compares an answer with the body that made it,
// field by field, and the fields the server adds.
func checkTemplateFields(t *testing.T, what string, got, body map[string]any, p *tplProject, id int64) {
	t.Helper()
	for key, want := range body {
		if key == "vaults" {
			continue
		}
		if g, w := normalized(t, got[key]), normalized(t, want); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: %s = %#v, want %#v", what, key, g, w)
		}
	}
	if got["id"] != float64(id) || got["project_id"] != float64(p.pid) {
		t.Errorf("%s: id %v project_id %v, want %d and %d", what, got["id"], got["project_id"], id, p.pid)
	}
	if vaults, ok := body["vaults"].([]map[string]any); ok {
		want := []any{map[string]any{"id": 1.0, "project_id": float64(p.pid), "template_id": float64(id),
			"vault_key_id": normalized(t, vaults[0]["vault_key_id"]), "name": vaults[0]["name"]}}
		if !reflect.DeepEqual(got["vaults"], want) {
			t.Errorf("%s: vaults = %v, want %v", what, got["vaults"], want)
		}
	}
	for _, key := range []string{"last_task", "tasks", "survey_vars", "vaults", "view_id", "inventory_id", "build_template_id", "git_branch", "start_version", "arguments"} {
		if _, ok := got[key]; !ok {
			t.Errorf("%s: the answer has no %s", what, key)
		}
	}
}

// hasEvent reports whether the project's activity log holds description.
func hasEvent(t *testing.T, p *tplProject, description string) bool {
	t.Helper()
	var events []struct {
		Description string `json:"description"`
	}
	p.b.must("GET", p.path("/events/last"), nil, http.StatusOK, &events)
	for _, ev := range events {
		if ev.Description == description {
			return true
		}
	}
	return false
}

func TestTemplates_refsShowWhoBuildsOnItAndBlockTheDelete(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	build := p.createTemplate(t, "Compile", func(b map[string]any) { b["type"] = "build"; b["start_version"] = "0.0.0" })
	deploy := p.createTemplate(t, "Ship", func(b map[string]any) { b["type"] = "deploy"; b["build_template_id"] = build.ID })
	buildName := p.templateObject(t, build.ID).Name
	hook := p.make(t, &bastionv1.Integration{Spec: bastionv1.IntegrationSpec{DisplayName: "On push",
		TemplateRef: &bastionv1.ObjectRef{Name: buildName}}}, "on-push", ids.CounterIntegration)
	nightly := p.make(t, &bastionv1.Schedule{Spec: bastionv1.ScheduleSpec{DisplayName: "Nightly",
		TemplateRef: bastionv1.ObjectRef{Name: buildName}, CronFormat: "0 3 * * *", Active: true}}, "nightly", ids.CounterSchedule)

	var refs struct {
		Templates, Inventories, Repositories, Schedules, Integrations []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		}
	}
	p.b.must("GET", p.path("/templates/%d/refs", build.ID), nil, http.StatusOK, &refs)
	if len(refs.Templates) != 1 || refs.Templates[0].ID != deploy.ID || refs.Templates[0].Name != "Ship" ||
		len(refs.Integrations) != 1 || refs.Integrations[0].ID != hook.id ||
		len(refs.Schedules) != 1 || refs.Schedules[0].ID != nightly.id || refs.Schedules[0].Name != "Nightly" ||
		len(refs.Inventories)+len(refs.Repositories) != 0 {
		t.Fatalf("refs = %+v", refs)
	}

	code, data := p.b.call("DELETE", p.path("/templates/%d", build.ID), nil)
	if code != http.StatusBadRequest || !strings.Contains(string(data), `"inUse":true`) {
		t.Fatalf("deleting a build template in use = %d %s, want 400 inUse", code, data)
	}
	p.templateObject(t, build.ID) // still there

	p.b.must("DELETE", p.path("/templates/%d", deploy.ID), nil, http.StatusNoContent, nil)
	if code, data := p.b.call("DELETE", p.path("/templates/%d", build.ID), nil); code != http.StatusBadRequest {
		t.Fatalf("deleting a template an integration starts = %d %s, want 400", code, data)
	}
	if err := e.K8s.Delete(t.Context(), &bastionv1.Integration{ObjectMeta: metav1.ObjectMeta{Name: hook.name, Namespace: p.ns}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		code, data := p.b.call("DELETE", p.path("/templates/%d", build.ID), nil)
		return code == http.StatusNoContent, fmt.Sprintf("delete after its references went = %d %s", code, data)
	})
	if code, _ := p.b.call("GET", p.path("/templates/%d", build.ID), nil); code != http.StatusNotFound {
		t.Errorf("GET a deleted template = %d, want 404", code)
	}
}

func TestTemplates_deleteRemovesItsTasksSchedulesOutputAndSummaries(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	doomed := p.createTemplate(t, "Doomed", nil)
	kept := p.createTemplate(t, "Kept", nil)
	doomedName := p.templateObject(t, doomed.ID).Name

	first := p.startTask(t, map[string]any{"template_id": doomed.ID})
	second := p.startTask(t, map[string]any{"template_id": doomed.ID})
	other := p.startTask(t, map[string]any{"template_id": kept.ID})
	pruned := p.putSummary(t, store.TaskSummary{TemplateID: doomed.ID, Status: "success"})
	for _, id := range []int64{first.ID, pruned, other.ID} {
		if err := e.Store.AppendLines(t.Context(), store.TaskKey{ProjectID: p.pid, TaskID: id}, []store.Line{{Seq: 1, Time: time.Now(), Output: "hello"}}); err != nil {
			t.Fatal(err)
		}
	}
	schedule := p.make(t, &bastionv1.Schedule{Spec: bastionv1.ScheduleSpec{TemplateRef: bastionv1.ObjectRef{Name: doomedName},
		CronFormat: "0 3 * * *", Active: true}}, "doomed-nightly", ids.CounterSchedule)

	p.b.must("DELETE", p.path("/templates/%d", doomed.ID), nil, http.StatusNoContent, nil)

	for _, id := range []int64{first.ID, second.ID, pruned} {
		if code, _ := p.b.call("GET", p.path("/tasks/%d", id), nil); code != http.StatusNotFound {
			t.Errorf("task %d of the deleted template = %d, want 404", id, code)
		}
		if _, err := e.Store.TaskSummary(t.Context(), store.TaskKey{ProjectID: p.pid, TaskID: id}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("task %d's summary: %v, want gone", id, err)
		}
		if lines, _ := e.Store.Lines(t.Context(), store.TaskKey{ProjectID: p.pid, TaskID: id}, 0, 10); len(lines) != 0 {
			t.Errorf("task %d still has output %v", id, lines)
		}
	}
	// The deleted ones finish going once their reconciler released them.
	eventually(t, 20*time.Second, func() (bool, string) {
		n := p.taskCount(t)
		return n == 1, fmt.Sprintf("%d Task objects left, want only the other template's", n)
	})
	if lines, _ := e.Store.Lines(t.Context(), store.TaskKey{ProjectID: p.pid, TaskID: other.ID}, 0, 10); len(lines) != 1 {
		t.Errorf("the other template's task lost its output: %v", lines)
	}
	err := e.K8s.Get(t.Context(), client.ObjectKey{Namespace: p.ns, Name: schedule.name}, &bastionv1.Schedule{})
	if err == nil {
		t.Error("the template's schedule survived it")
	}
	if listed := p.tasks(t, "/tasks"); len(listed) != 1 || listed[0].ID != other.ID {
		t.Errorf("tasks after the delete = %+v, want only %d", listed, other.ID)
	}
	if !hasEvent(t, p, "Template Doomed deleted") {
		t.Error("no event for the delete")
	}
}

func TestTemplates_schedulesListsOnlyThatTemplatesSchedules(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	a := p.createTemplate(t, "A", nil)
	b := p.createTemplate(t, "B", nil)
	aName, bName := p.templateObject(t, a.ID).Name, p.templateObject(t, b.ID).Name
	nightly := p.make(t, &bastionv1.Schedule{Spec: bastionv1.ScheduleSpec{DisplayName: "Nightly", TemplateRef: bastionv1.ObjectRef{Name: aName},
		CronFormat: "0 3 * * *", Active: true, RunOnlyOnNewCommit: true, RepositoryRef: &bastionv1.ObjectRef{Name: p.repo.name}}}, "a-nightly", ids.CounterSchedule)
	hourly := p.make(t, &bastionv1.Schedule{Spec: bastionv1.ScheduleSpec{TemplateRef: bastionv1.ObjectRef{Name: aName},
		CronFormat: "0 * * * *", Active: false}}, "a-hourly", ids.CounterSchedule)
	p.make(t, &bastionv1.Schedule{Spec: bastionv1.ScheduleSpec{TemplateRef: bastionv1.ObjectRef{Name: bName},
		CronFormat: "5 4 * * *", Active: true}}, "b-daily", ids.CounterSchedule)

	var got []map[string]any
	p.b.must("GET", p.path("/templates/%d/schedules", a.ID), nil, http.StatusOK, &got)
	want := normalized(t, []map[string]any{
		{"id": nightly.id, "project_id": p.pid, "template_id": a.ID, "cron_format": "0 3 * * *", "name": "Nightly", "active": true, "repository_id": p.repo.id},
		{"id": hourly.id, "project_id": p.pid, "template_id": a.ID, "cron_format": "0 * * * *", "name": "", "active": false, "repository_id": nil},
	})
	if !reflect.DeepEqual(normalized(t, got), want) {
		t.Errorf("schedules = %v\nwant %v", got, want)
	}
}

func TestTemplates_listCountsLiveAndPrunedTasksOnceAndShowsTheNewest(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	tpl := p.createTemplate(t, "Counted", nil)
	idle := p.createTemplate(t, "Idle", nil)

	// One task finishes and retention prunes it; a newer one runs.
	old := p.startTask(t, map[string]any{"template_id": tpl.ID}).ID
	p.waitStatus(t, old, bastionv1.TaskStarting)
	p.setStatus(t, old, bastionv1.TaskSuccess)
	p.prune(t, old)
	live := p.startTask(t, map[string]any{"template_id": tpl.ID, "message": "newest"})

	var list []apiTemplate
	p.b.must("GET", p.path("/templates"), nil, http.StatusOK, &list)
	if len(list) != 2 {
		t.Fatalf("templates = %+v", list)
	}
	counted, never := list[0], list[1]
	if counted.Tasks != 2 || counted.LastTask == nil || counted.LastTask.ID != live.ID || counted.LastTask.Message != "newest" ||
		counted.LastTask.TplAlias != "Counted" || counted.LastTask.UserName == nil || *counted.LastTask.UserName != p.owner.Spec.Name {
		t.Errorf("Counted: tasks %d, last task %+v; want 2 and task %d", counted.Tasks, counted.LastTask, live.ID)
	}
	if never.ID != idle.ID || never.Tasks != 0 || never.LastTask != nil {
		t.Errorf("Idle = %+v, want no tasks", never)
	}
	last := p.tasks(t, fmt.Sprintf("/templates/%d/tasks/last?limit=5", tpl.ID))
	if len(last) != 2 || last[0].ID != live.ID || last[1].ID != old || last[1].Status != "success" {
		t.Errorf("tasks/last = %+v, want %d then the pruned %d", last, live.ID, old)
	}
}

func TestTemplates_listsFollowChangesMadeOutsideTheAPI(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	tpl := p.createTemplate(t, "Before", nil)
	task := p.startTask(t, map[string]any{"template_id": tpl.ID})
	var list []apiTemplate
	p.b.must("GET", p.path("/templates"), nil, http.StatusOK, &list) // now cached
	if len(list) != 1 || list[0].Name != "Before" || list[0].LastTask == nil || list[0].LastTask.ID != task.ID {
		t.Fatalf("templates = %+v", list)
	}

	// kubectl renames the template, and the user renames themself. Both
	// are merge patches, as kubectl sends: the controllers write these
	// objects' status and finalizers meanwhile, so an update carrying the
	// resourceVersion read here could meet a conflict.
	obj := p.templateObject(t, tpl.ID)
	before := obj.DeepCopy()
	obj.Spec.DisplayName = "After"
	if err := e.K8s.Patch(t.Context(), obj, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	user := &bastionv1.User{}
	if err := e.K8s.Get(t.Context(), client.ObjectKeyFromObject(p.owner), user); err != nil {
		t.Fatal(err)
	}
	renamed := user.DeepCopy()
	renamed.Spec.Name = "Renamed Owner"
	if err := e.K8s.Patch(t.Context(), renamed, client.MergeFrom(user)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		p.b.must("GET", p.path("/templates"), nil, http.StatusOK, &list)
		last := list[0].LastTask
		return list[0].Name == "After" && last != nil && last.TplAlias == "After" && last.UserName != nil && *last.UserName == "Renamed Owner",
			fmt.Sprintf("templates = %+v, last task %+v", list, last)
	})
	// Status changes reach the task lists.
	p.waitStatus(t, task.ID, bastionv1.TaskStarting)
	p.setStatus(t, task.ID, bastionv1.TaskWaitingConfirmation)
	eventually(t, 10*time.Second, func() (bool, string) {
		items := p.tasks(t, "/tasks/last")
		return len(items) == 1 && items[0].Status == "waiting_confirmation", fmt.Sprintf("tasks = %+v", items)
	})
}

func TestTemplates_lastTaskIDIsNullUntilTheTemplateRunsThenNamesItsLastTask(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	tpl := p.createTemplate(t, "Numbered", nil)

	got := p.rawJSON(t, fmt.Sprintf("/templates/%d", tpl.ID))
	if v, ok := got["last_task_id"]; !ok || v != nil {
		t.Fatalf("never run: last_task_id = %v (present %v), want null", v, ok)
	}
	first := p.startTask(t, map[string]any{"template_id": tpl.ID}).ID
	second := p.startTask(t, map[string]any{"template_id": tpl.ID}).ID
	if first == second {
		t.Fatalf("two tasks share id %d", first)
	}
	got = p.rawJSON(t, fmt.Sprintf("/templates/%d", tpl.ID))
	if got["last_task_id"] != float64(second) {
		t.Errorf("read: last_task_id = %v, want %d", got["last_task_id"], second)
	}
	var listed []map[string]any
	p.b.must("GET", p.path("/templates"), nil, http.StatusOK, &listed)
	if len(listed) != 1 || listed[0]["last_task_id"] != float64(second) {
		t.Errorf("list: %v, want last_task_id %d", listed, second)
	}
}

// A template made through the API carries its cascade finalizer from its
// very first version, as its reconciler would add it: the reconciler's
// PATCH adding it is then a write saved per create (issue #22, P3). The
// first event of a watch opened before the create is the object as the
// POST made it. Deleting it still runs the cascade and lets it go.
func TestTemplates_aCreatedTemplateCarriesItsCascadeFinalizerFromItsFirstVersion(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	w := p.watch(t, &bastionv1.TemplateList{})

	created := p.createTemplate(t, "Finalized", nil)
	first := firstEventOf(t, w, created.ID)
	if first.Type != watch.Added {
		t.Fatalf("the template's first event is %s, want ADDED", first.Type)
	}
	if fins := first.Object.(*bastionv1.Template).Finalizers; !slices.Contains(fins, bastionv1.CascadeFinalizer) {
		t.Fatalf("the template as created has finalizers %v, want %s", fins, bastionv1.CascadeFinalizer)
	}

	name := p.templateObject(t, created.ID).Name
	p.b.must("DELETE", p.path("/templates/%d", created.ID), nil, http.StatusNoContent, nil)
	eventually(t, 20*time.Second, func() (bool, string) {
		err := e.K8s.Get(t.Context(), client.ObjectKey{Namespace: p.ns, Name: name}, &bastionv1.Template{})
		return apierrors.IsNotFound(err), fmt.Sprintf("the deleted template is still there (%v)", err)
	})
}

// A task started through the API carries its run's finalizer from its
// first version, with its id, as the Task reconciler would add both: its
// first reconcile then goes straight to the run, and the PATCH that added
// the finalizer is a write saved per task (issue #22, P1). Deleting it
// before it ran still releases it and lets it go.
func TestTasks_aStartedTaskCarriesItsRunFinalizerFromItsFirstVersion(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	tpl := p.createTemplate(t, "Run", nil)
	w := p.watch(t, &bastionv1.TaskList{})

	started := p.startTask(t, map[string]any{"template_id": tpl.ID})
	p.waitStatus(t, started.ID, bastionv1.TaskStarting)
	var events []watch.Event
	for timeout := time.After(10 * time.Second); ; {
		var ev watch.Event
		select {
		case ev = <-w.ResultChan():
		case <-timeout:
			t.Fatalf("no watch event showed task %d starting; saw %d events", started.ID, len(events))
		}
		task, ok := ev.Object.(*bastionv1.Task)
		if !ok || task.Labels[bastionv1.LabelID] != ids.Format(started.ID) {
			continue
		}
		events = append(events, ev)
		if task.Status.Status == bastionv1.TaskStarting {
			break
		}
	}
	first := events[0].Object.(*bastionv1.Task)
	if events[0].Type != watch.Added || !slices.Equal(first.Finalizers, []string{bastionv1.TaskRunFinalizer}) {
		t.Fatalf("the task as created (%s) has finalizers %v, want [%s]", events[0].Type, first.Finalizers, bastionv1.TaskRunFinalizer)
	}
	for _, ev := range events[1:] {
		if fins := ev.Object.(*bastionv1.Task).Finalizers; !slices.Equal(fins, first.Finalizers) {
			t.Fatalf("the reconciler changed the finalizers to %v before the run started", fins)
		}
	}

	name := first.Name
	if err := e.K8s.Delete(t.Context(), &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() (bool, string) {
		err := e.K8s.Get(t.Context(), client.ObjectKey{Namespace: p.ns, Name: name}, &bastionv1.Task{})
		return apierrors.IsNotFound(err), fmt.Sprintf("the deleted task is still there (%v)", err)
	})
}

// watch opens a watch of the project's objects of a kind, stopped when the
// test ends.
func (p *tplProject) watch(t *testing.T, list client.ObjectList) watch.Interface {
	t.Helper()
	wc, err := client.NewWithWatch(p.e.Config, client.Options{Scheme: p.e.K8s.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(t.Context(), list, client.InNamespace(p.ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

// firstEventOf is w's first event about the template with id.
func firstEventOf(t *testing.T, w watch.Interface, id int64) watch.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-w.ResultChan():
			if tpl, ok := ev.Object.(*bastionv1.Template); ok && tpl.Labels[bastionv1.LabelID] == ids.Format(id) {
				return ev
			}
		case <-timeout:
			t.Fatalf("no watch event for template %d", id)
		}
	}
}
