package apiserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

type apiView struct {
	ID        int64  `json:"id"`
	ProjectID int64  `json:"project_id"`
	Title     string `json:"title"`
	Position  int32  `json:"position"`
}

type apiSchedule struct {
	ID           int64  `json:"id"`
	ProjectID    int64  `json:"project_id"`
	TemplateID   int64  `json:"template_id"`
	CronFormat   string `json:"cron_format"`
	Name         string `json:"name"`
	Active       bool   `json:"active"`
	RepositoryID *int64 `json:"repository_id"`
	TplName      string `json:"tpl_name"`
}

func titles(views []apiView) string {
	var out []string
	for _, v := range views {
		out = append(out, fmt.Sprintf("%s@%d", v.Title, v.Position))
	}
	return strings.Join(out, ",")
}

// viewObject reads the View with id straight from the apiserver.
func (e *apiEnv) viewObject(t *testing.T, ns string, id int64) *bastionv1.View {
	t.Helper()
	list := &bastionv1.ViewList{}
	if err := e.K8s.List(t.Context(), list, client.InNamespace(ns), client.MatchingLabels{bastionv1.LabelID: ids.Format(id)}); err != nil || len(list.Items) != 1 {
		t.Fatalf("view %d: %v (%d found)", id, err, len(list.Items))
	}
	return &list.Items[0]
}

func TestViews_lifecyclePositionsAndTheirTemplates(t *testing.T) {
	e := startEnv(t)
	p := e.newSchedintProject(t, "Views")
	var ops, dev apiView
	p.b.must("POST", p.base+"/views", map[string]any{"title": "  Ops ", "position": 0}, http.StatusCreated, &ops)
	p.b.must("POST", p.base+"/views", map[string]any{"title": "Dev", "position": 1}, http.StatusCreated, &dev)
	if ops.ID == 0 || ops.ProjectID != p.id || ops.Title != "Ops" || dev.ID == ops.ID {
		t.Fatalf("created %+v and %+v", ops, dev)
	}
	var list []apiView
	p.b.must("GET", p.base+"/views", nil, http.StatusOK, &list)
	if got := titles(list); got != "Ops@0,Dev@1" {
		t.Fatalf("views = %s", got)
	}

	// Positions: both move at once.
	p.b.must("POST", p.base+"/views/positions", map[string]int{itoa(ops.ID): 1, itoa(dev.ID): 0}, http.StatusNoContent, nil)
	p.b.must("GET", p.base+"/views", nil, http.StatusOK, &list)
	if got := titles(list); got != "Dev@0,Ops@1" {
		t.Fatalf("after positions, views = %s", got)
	}
	// An unknown id refuses the whole request: Dev keeps its place.
	code, data := p.b.call("POST", p.base+"/views/positions", map[string]int{itoa(dev.ID): 7, "999999": 0})
	if code != http.StatusBadRequest || errorOf(t, data) != "view 999999 does not exist in this project" {
		t.Fatalf("positions with an unknown id = %d %s", code, data)
	}
	if got := e.viewObject(t, p.ns, dev.ID).Spec.Position; got != 0 {
		t.Fatalf("a refused positions request moved Dev to %d", got)
	}

	// Rename, with and without a matching body id.
	p.b.must("PUT", fmt.Sprintf("%s/views/%d", p.base, ops.ID), map[string]any{"id": ops.ID, "title": "Operations", "position": 1}, http.StatusNoContent, nil)
	var got apiView
	p.b.must("GET", fmt.Sprintf("%s/views/%d", p.base, ops.ID), nil, http.StatusOK, &got)
	if got.Title != "Operations" || got.Position != 1 {
		t.Fatalf("after PUT, view = %+v", got)
	}
	if code, data := p.b.call("PUT", fmt.Sprintf("%s/views/%d", p.base, ops.ID), map[string]any{"id": dev.ID, "title": "X"}); code != http.StatusBadRequest {
		t.Fatalf("PUT with another id = %d %s", code, data)
	}

	// The templates of a view are those whose view it is.
	opsObj := e.viewObject(t, p.ns, ops.ID)
	tpl, tplID := e.seedTemplate(t, p.obj, "Site", opsObj.Name)
	e.seedTemplate(t, p.obj, "Elsewhere", "")
	var templates []struct {
		ID     int64  `json:"id"`
		Name   string `json:"name"`
		ViewID int64  `json:"view_id"`
	}
	p.b.must("GET", fmt.Sprintf("%s/views/%d/templates", p.base, ops.ID), nil, http.StatusOK, &templates)
	if len(templates) != 1 || templates[0].ID != tplID || templates[0].Name != "Site" || templates[0].ViewID != ops.ID {
		t.Fatalf("templates of Operations = %+v", templates)
	}
	p.b.must("GET", fmt.Sprintf("%s/views/%d/templates", p.base, dev.ID), nil, http.StatusOK, &templates)
	if len(templates) != 0 {
		t.Fatalf("templates of Dev = %+v", templates)
	}

	// Deleting a view moves its templates to no view.
	p.b.must("DELETE", fmt.Sprintf("%s/views/%d", p.base, ops.ID), nil, http.StatusNoContent, nil)
	if code, _ := p.b.call("GET", fmt.Sprintf("%s/views/%d", p.base, ops.ID), nil); code != http.StatusNotFound {
		t.Fatalf("GET a deleted view = %d", code)
	}
	if err := e.K8s.Get(t.Context(), clientKeyOf(tpl), tpl); err != nil || tpl.Spec.ViewRef != nil {
		t.Fatalf("the deleted view's template still names it: %v %+v", err, tpl.Spec.ViewRef)
	}
	// A template naming a view that does not exist (a managed template
	// keeps its reference when its view goes, docs/gitops.md) is in no view.
	_, danglingID := e.seedTemplate(t, p.obj, "Dangling", "no-such-view")
	var dangling struct {
		ViewID *int64 `json:"view_id"`
	}
	p.b.must("GET", fmt.Sprintf("%s/templates/%d", p.base, danglingID), nil, http.StatusOK, &dangling)
	if dangling.ViewID != nil {
		t.Fatalf("a template naming a missing view has view_id %d, want null", *dangling.ViewID)
	}

	events, err := e.Store.Events(t.Context(), []int64{p.id}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var descriptions []string
	for _, ev := range events {
		descriptions = append(descriptions, ev.Description)
	}
	all := strings.Join(descriptions, "\n")
	for _, want := range []string{"View Ops created", "View Operations updated", "View Operations deleted", "View Dev moved"} {
		if !strings.Contains(all, want) {
			t.Errorf("no event %q in:\n%s", want, all)
		}
	}
}

func TestSchedules_validateThenLifecycleWithActiveToggle(t *testing.T) {
	e := startEnv(t)
	p := e.newSchedintProject(t, "Schedules")

	code, data := p.b.call("POST", p.base+"/schedules/validate", map[string]string{"cron_format": "0 0 * * *"})
	if code != http.StatusOK || len(data) != 0 {
		t.Fatalf("validate a good cron = %d %q, want 200 and an empty body", code, data)
	}
	code, data = p.b.call("POST", p.base+"/schedules/validate", map[string]string{"cron_format": "* * *"})
	if code != http.StatusBadRequest || errorOf(t, data) != "Cron: expected exactly 5 fields, found 3: [* * *]" {
		t.Fatalf("validate \"* * *\" = %d %s", code, data)
	}

	_, tplID := e.seedTemplate(t, p.obj, "Nightly build", "")
	repo := &bastionv1.Repository{Spec: bastionv1.RepositorySpec{DisplayName: "App", GitURL: "https://git.example/app.git", GitBranch: "main",
		SSHKeyRef: bastionv1.ObjectRef{Name: "none"}}}
	repoID := e.seed(t, p.obj, repo, ids.CounterRepository)

	var sch apiSchedule
	p.b.must("POST", p.base+"/schedules", map[string]any{"template_id": tplID, "cron_format": " 0 3 * * * ", "name": "Nightly"}, http.StatusCreated, &sch)
	if sch.ID == 0 || sch.ProjectID != p.id || sch.TemplateID != tplID || sch.CronFormat != "0 3 * * *" || sch.Name != "Nightly" || !sch.Active || sch.RepositoryID != nil {
		t.Fatalf("created %+v", sch)
	}
	path := fmt.Sprintf("%s/schedules/%d", p.base, sch.ID)
	var list []apiSchedule
	p.b.must("GET", p.base+"/schedules", nil, http.StatusOK, &list)
	if len(list) != 1 || list[0].ID != sch.ID || list[0].TplName != "Nightly build" {
		t.Fatalf("schedules = %+v", list)
	}

	// PUT without active keeps it; with a repository the schedule runs
	// only on a new commit of that repository.
	p.b.must("PUT", path, map[string]any{"id": sch.ID, "template_id": tplID, "cron_format": "*/5 * * * *", "name": "Often", "repository_id": repoID}, http.StatusNoContent, nil)
	var got apiSchedule
	p.b.must("GET", path, nil, http.StatusOK, &got)
	if got.CronFormat != "*/5 * * * *" || got.Name != "Often" || !got.Active || got.RepositoryID == nil || *got.RepositoryID != repoID {
		t.Fatalf("after PUT, schedule = %+v", got)
	}
	obj := &bastionv1.Schedule{}
	key := client.ObjectKey{Namespace: p.ns}
	slist := &bastionv1.ScheduleList{}
	if err := e.K8s.List(t.Context(), slist, client.InNamespace(p.ns)); err != nil || len(slist.Items) != 1 {
		t.Fatalf("schedules in the namespace: %v %d", err, len(slist.Items))
	}
	key.Name = slist.Items[0].Name
	if s := slist.Items[0].Spec; !s.RunOnlyOnNewCommit || s.RepositoryRef == nil || s.RepositoryRef.Name != repo.Name {
		t.Fatalf("schedule spec = %+v", s)
	}

	// The active toggle.
	p.b.must("PUT", path+"/active", map[string]bool{"active": false}, http.StatusNoContent, nil)
	p.b.must("GET", path, nil, http.StatusOK, &got)
	if err := e.K8s.Get(t.Context(), key, obj); err != nil || got.Active || obj.Spec.Active {
		t.Fatalf("after deactivating: answer %v, object %v (%v)", got.Active, obj.Spec.Active, err)
	}
	p.b.must("PUT", path+"/active", map[string]bool{"active": true}, http.StatusNoContent, nil)
	p.b.must("GET", path, nil, http.StatusOK, &got)
	if !got.Active {
		t.Fatal("reactivating did not take")
	}

	p.b.must("DELETE", path, nil, http.StatusNoContent, nil)
	if code, _ := p.b.call("GET", path, nil); code != http.StatusNotFound {
		t.Fatalf("GET a deleted schedule = %d", code)
	}
	p.b.must("GET", p.base+"/schedules", nil, http.StatusOK, &list)
	if len(list) != 0 {
		t.Fatalf("schedules after delete = %+v", list)
	}
}
