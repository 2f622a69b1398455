package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

type apiUser struct {
	ID               int64  `json:"id"`
	Username         string `json:"username"`
	Name             string `json:"name"`
	Email            string `json:"email"`
	Admin            bool   `json:"admin"`
	External         bool   `json:"external"`
	Alert            bool   `json:"alert"`
	CanCreateProject bool   `json:"can_create_project"`
}

type apiProject struct {
	ID               int64   `json:"id"`
	Name             string  `json:"name"`
	Alert            bool    `json:"alert"`
	AlertChat        *string `json:"alert_chat"`
	MaxParallelTasks int     `json:"max_parallel_tasks"`
	Type             string  `json:"type"`
}

// counts is how many Users and Projects the cluster holds: a refused
// request must leave both unchanged.
func (e *apiEnv) counts(t *testing.T) (users, projects int) {
	t.Helper()
	ul, pl := &bastionv1.UserList{}, &bastionv1.ProjectList{}
	if err := e.K8s.List(t.Context(), ul); err != nil {
		t.Fatal(err)
	}
	if err := e.K8s.List(t.Context(), pl); err != nil {
		t.Fatal(err)
	}
	return len(ul.Items), len(pl.Items)
}

func TestValidation_spec5MessagesAndNothingWritten(t *testing.T) {
	e := startEnv(t)
	adminUser, pw := e.newUser(t, "validator", true)
	b := e.signIn(t, adminUser.Spec.Username, pw)
	var project apiProject
	b.must("POST", "/api/projects", map[string]any{"name": "Validated", "max_parallel_tasks": 3}, http.StatusCreated, &project)
	pid := itoa(project.ID)
	self := itoa(userIDOf(t, adminUser))

	for _, tc := range []struct {
		method, path, body, msg string
	}{
		// Project.
		{"POST", "/api/projects", `{"name":""}`, "Project name is required"},
		{"POST", "/api/projects", `{"name":"   "}`, "Project name is required"},
		{"POST", "/api/projects", `{"name":"P","max_parallel_tasks":1.5}`, "Must be integer"},
		{"POST", "/api/projects", `{"name":"P","max_parallel_tasks":"abc"}`, "Must be integer"},
		{"POST", "/api/projects", `{"name":"P","max_parallel_tasks":-1}`, "Must be 0 or greater"},
		{"PUT", "/api/project/" + pid, `{"name":""}`, "Project name is required"},
		{"PUT", "/api/project/" + pid, `{"name":"P","max_parallel_tasks":2.25}`, "Must be integer"},
		{"PUT", "/api/project/" + pid, `{"name":"P","max_parallel_tasks":-5}`, "Must be 0 or greater"},
		{"PUT", "/api/project/" + pid, `{"id":999999,"name":"P"}`, "the body's id 999999 is not the URL's id " + pid},
		// User.
		{"POST", "/api/users", `{"username":"u","email":"u@x","password":"p"}`, "Name is required"},
		{"POST", "/api/users", `{"name":"U","email":"u@x","password":"p"}`, "Username is required"},
		{"POST", "/api/users", `{"name":"U","username":"u","password":"p"}`, "Email is required"},
		{"POST", "/api/users", `{"name":"U","username":"u","email":"u@x"}`, "Password is required"},
		{"PUT", "/api/users/" + self, `{"name":"","username":"x","email":"x@x","admin":true}`, "Name is required"},
		{"PUT", "/api/users/" + self, `{"name":"X","username":"","email":"x@x","admin":true}`, "Username is required"},
		{"PUT", "/api/users/" + self, `{"name":"X","username":"x","email":"","admin":true}`, "Email is required"},
		// Change password.
		{"POST", "/api/users/" + self + "/password", `{"password":""}`, "Password is required"},
		// Bad JSON and bad ids say so.
		{"POST", "/api/projects", `{"name":`, "invalid JSON"},
		{"POST", "/api/projects", `{"name":5}`, "invalid JSON: name must be a string"},
		{"GET", "/api/project/abc", ``, `invalid id "abc"`},
	} {
		beforeUsers, beforeProjects := e.counts(t)
		var body any
		if tc.body != "" {
			body = []byte(tc.body)
		}
		code, data := b.call(tc.method, tc.path, body)
		if code != http.StatusBadRequest || !strings.HasPrefix(errorOf(t, data), tc.msg) {
			t.Errorf("%s %s %s = %d %s, want 400 %q", tc.method, tc.path, tc.body, code, data, tc.msg)
		}
		if u, p := e.counts(t); u != beforeUsers || p != beforeProjects {
			t.Errorf("%s %s %s wrote something: users %d→%d, projects %d→%d", tc.method, tc.path, tc.body, beforeUsers, u, beforeProjects, p)
		}
	}
	// The project is unchanged by the refused updates.
	var got apiProject
	b.must("GET", "/api/project/"+pid, nil, http.StatusOK, &got)
	if got.Name != "Validated" || got.MaxParallelTasks != 3 {
		t.Fatalf("project after refused updates = %+v", got)
	}
	var me apiUser
	b.must("GET", "/api/user", nil, http.StatusOK, &me)
	if me.Name != adminUser.Spec.Name || me.Username != adminUser.Spec.Username {
		t.Fatalf("user after refused updates = %+v", me)
	}
}

func TestUsers_lifecycleAndVisibility(t *testing.T) {
	e := startEnv(t)
	adminUser, pw := e.newUser(t, "useradmin", true)
	a := e.signIn(t, adminUser.Spec.Username, pw)

	var created apiUser
	login := fmt.Sprintf("alice-%d", time.Now().UnixNano())
	a.must("POST", "/api/users", map[string]any{
		"name": "Alice", "username": login, "email": login + "@example.test", "password": "alice-pw-1", "alert": true,
	}, http.StatusCreated, &created)
	if created.ID == 0 || created.Username != login || !created.Alert || created.Admin {
		t.Fatalf("created user = %+v", created)
	}
	// The same username or email again is a conflict.
	code, data := a.call("POST", "/api/users", map[string]any{"name": "A2", "username": login, "email": "other@example.test", "password": "x"})
	if code != http.StatusConflict || !strings.Contains(errorOf(t, data), "already exists") {
		t.Fatalf("duplicate username = %d %s", code, data)
	}
	code, _ = a.call("POST", "/api/users", map[string]any{"name": "A3", "username": login + "-x", "email": strings.ToUpper(login) + "@example.test", "password": "x"})
	if code != http.StatusConflict {
		t.Fatalf("duplicate email (other case) = %d", code)
	}

	// She signs in, reads herself, edits her own row, but not her rights.
	alice := e.signIn(t, login, "alice-pw-1")
	id := itoa(created.ID)
	alice.must("PUT", "/api/users/"+id, map[string]any{"name": "Alice L.", "username": login, "email": login + "@example.test"}, http.StatusNoContent, nil)
	var me apiUser
	alice.must("GET", "/api/user", nil, http.StatusOK, &me)
	if me.Name != "Alice L." {
		t.Fatalf("own edit not applied: %+v", me)
	}
	code, data = alice.call("PUT", "/api/users/"+id, map[string]any{"name": "Alice", "username": login, "email": login + "@example.test", "admin": true})
	if code != http.StatusForbidden {
		t.Fatalf("a user making herself admin = %d %s", code, data)
	}
	// A non-admin listing users sees only id, username and name.
	var brief []map[string]any
	alice.must("GET", "/api/users", nil, http.StatusOK, &brief)
	for _, u := range brief {
		if len(u) != 3 || u["id"] == nil || u["username"] == nil || u["name"] == nil {
			t.Fatalf("a non-admin sees %v, want only {id, username, name}", u)
		}
	}
	var full []apiUser
	a.must("GET", "/api/users", nil, http.StatusOK, &full)
	found := false
	for _, u := range full {
		found = found || u.Email == login+"@example.test"
	}
	if !found {
		t.Fatalf("admin list lacks the new user's email")
	}

	// An admin grants project creation; she creates a project and owns it.
	a.must("PUT", "/api/users/"+id, map[string]any{"name": "Alice", "username": login, "email": login + "@example.test", "can_create_project": true}, http.StatusNoContent, nil)
	var p apiProject
	alice.must("POST", "/api/projects", map[string]any{"name": "Alice's"}, http.StatusCreated, &p)
	var role struct {
		Role        string `json:"role"`
		Permissions int    `json:"permissions"`
	}
	alice.must("GET", fmt.Sprintf("/api/project/%d/role", p.ID), nil, http.StatusOK, &role)
	if role.Role != "owner" || role.Permissions != 15 {
		t.Fatalf("creator's role = %+v, want owner 15", role)
	}
	// Deleting the user ends her sessions and takes her out of the team.
	a.must("DELETE", "/api/users/"+id, nil, http.StatusNoContent, nil)
	if code, _ := alice.call("GET", "/api/user", nil); code != http.StatusUnauthorized {
		t.Fatalf("a deleted user's session = %d", code)
	}
	var team []map[string]any
	a.must("GET", fmt.Sprintf("/api/project/%d/users", p.ID), nil, http.StatusOK, &team)
	if len(team) != 0 {
		t.Fatalf("team after the owner was deleted = %v", team)
	}
	if code, _ := a.call("GET", "/api/users/"+id, nil); code != http.StatusNotFound {
		t.Fatalf("a deleted user = %d, want 404", code)
	}
}

func TestUsers_externalUsersKeepTheirIdentity(t *testing.T) {
	e := startEnv(t)
	adminUser, pw := e.newUser(t, "extadmin", true)
	a := e.signIn(t, adminUser.Spec.Username, pw)
	ext := &bastionv1.User{Spec: bastionv1.UserSpec{Username: fmt.Sprintf("ext-%d", time.Now().UnixNano()), Name: "Ext", Email: "ext@corp.test", External: true}}
	ext.GenerateName = "ext-"
	ext.Labels = map[string]string{bastionv1.LabelID: itoa(900000 + time.Now().UnixNano()%100000)}
	if err := e.K8s.Create(t.Context(), ext); err != nil {
		t.Fatal(err)
	}
	id := ext.Labels[bastionv1.LabelID]
	deadline := time.Now().Add(10 * time.Second)
	for code, _ := a.call("GET", "/api/users/"+id, nil); code != http.StatusOK; code, _ = a.call("GET", "/api/users/"+id, nil) {
		if time.Now().After(deadline) {
			t.Fatal("external user never visible")
		}
		time.Sleep(20 * time.Millisecond) // the cache of a real server
	}
	code, data := a.call("PUT", "/api/users/"+id, map[string]any{"name": "Renamed", "username": ext.Spec.Username, "email": "ext@corp.test"})
	if code != http.StatusBadRequest || !strings.Contains(errorOf(t, data), "external") {
		t.Fatalf("renaming an external user = %d %s", code, data)
	}
	code, data = a.call("POST", "/api/users/"+id+"/password", map[string]any{"password": "x"})
	if code != http.StatusBadRequest || !strings.Contains(errorOf(t, data), "external") {
		t.Fatalf("setting an external user's password = %d %s", code, data)
	}
	// Rights still change.
	a.must("PUT", "/api/users/"+id, map[string]any{"name": "Ext", "username": ext.Spec.Username, "email": "ext@corp.test", "alert": true}, http.StatusNoContent, nil)
}

func TestProjects_createUpdateDeleteRemovesTheNamespace(t *testing.T) {
	e := startEnv(t)
	adminUser, pw := e.newUser(t, "projadmin", true)
	a := e.signIn(t, adminUser.Spec.Username, pw)
	var p apiProject
	a.must("POST", "/api/projects", map[string]any{"name": "Ops / Prod!", "alert": true, "alert_chat": "-100123", "max_parallel_tasks": "4"}, http.StatusCreated, &p)
	if p.ID == 0 || p.Name != "Ops / Prod!" || !p.Alert || p.AlertChat == nil || *p.AlertChat != "-100123" || p.MaxParallelTasks != 4 {
		t.Fatalf("created project = %+v", p)
	}
	// It is in the list at once (the API waits for its own writes).
	var list []apiProject
	a.must("GET", "/api/projects", nil, http.StatusOK, &list)
	if !containsProject(list, p.ID) {
		t.Fatalf("new project %d not in the list %v", p.ID, list)
	}
	path := fmt.Sprintf("/api/project/%d", p.ID)
	a.must("PUT", path, map[string]any{"id": p.ID, "name": "Ops", "max_parallel_tasks": 0}, http.StatusNoContent, nil)
	var got apiProject
	a.must("GET", path, nil, http.StatusOK, &got)
	if got.Name != "Ops" || got.MaxParallelTasks != 0 || got.Alert || got.AlertChat != nil {
		t.Fatalf("updated project = %+v", got)
	}
	// The namespace holds the project's resources; deleting the project
	// deletes it and everything in it.
	project := e.projectObject(t, p.ID)
	ns := bastionv1.ProjectNamespace(project.Name)
	cm := &corev1.ConfigMap{}
	cm.Name, cm.Namespace = "leftover", ns
	if err := e.K8s.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	a.must("DELETE", path, nil, http.StatusNoContent, nil)
	if code, _ := a.call("GET", path, nil); code != http.StatusNotFound {
		t.Fatalf("a deleted project = %d", code)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := &corev1.Namespace{}
		err := e.K8s.Get(t.Context(), client.ObjectKey{Name: ns}, n)
		// envtest has no namespace controller: a namespace being deleted
		// stays Terminating, which is as gone as it gets there.
		if apierrors.IsNotFound(err) || err == nil && !n.DeletionTimestamp.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace %s still there after the project was deleted: %v", ns, err)
		}
		time.Sleep(50 * time.Millisecond) // the Project controller's finalizer
	}
	a.must("GET", "/api/projects", nil, http.StatusOK, &list)
	if containsProject(list, p.ID) {
		t.Fatalf("deleted project still listed")
	}
}

func containsProject(list []apiProject, id int64) bool {
	for _, p := range list {
		if p.ID == id {
			return true
		}
	}
	return false
}

func (e *apiEnv) projectObject(t *testing.T, id int64) *bastionv1.Project {
	t.Helper()
	list := &bastionv1.ProjectList{}
	if err := e.K8s.List(context.Background(), list, client.MatchingLabels{bastionv1.LabelID: itoa(id)}); err != nil || len(list.Items) != 1 {
		t.Fatalf("project %d: %v (%d found)", id, err, len(list.Items))
	}
	return &list.Items[0]
}

func TestTeam_membersRolesAndTheLastOwner(t *testing.T) {
	e := startEnv(t)
	o, opw := e.newUser(t, "teamowner", false)
	m, mpw := e.newUser(t, "teammate", false)
	x, _ := e.newUser(t, "teamnew", false)
	ob := e.signIn(t, o.Spec.Username, opw)
	pid := e.newProject(t, "Team", []bastionv1.ProjectMember{{User: o.Name, Role: bastionv1.RoleOwner}, {User: m.Name, Role: bastionv1.RoleManager}}, ob)
	base := fmt.Sprintf("/api/project/%d/users", pid)

	ob.must("POST", base, map[string]any{"user_id": userIDOf(t, x), "role": "guest"}, http.StatusNoContent, nil)
	code, data := ob.call("POST", base, map[string]any{"user_id": userIDOf(t, x), "role": "guest"})
	if code != http.StatusConflict || !strings.Contains(errorOf(t, data), "already a member") {
		t.Fatalf("adding a member twice = %d %s", code, data)
	}
	for _, tc := range []struct {
		body string
		msg  string
	}{
		{`{"role":"guest"}`, "User is required"},
		{fmt.Sprintf(`{"user_id":%d}`, userIDOf(t, x)), "User is required"},
		{fmt.Sprintf(`{"user_id":%d,"role":"king"}`, userIDOf(t, x)), "role must be"},
		{`{"user_id":99999999,"role":"guest"}`, "does not exist"},
	} {
		code, data := ob.call("POST", base, []byte(tc.body))
		if code != http.StatusBadRequest || !strings.Contains(errorOf(t, data), tc.msg) {
			t.Errorf("POST team %s = %d %s, want 400 %q", tc.body, code, data, tc.msg)
		}
	}

	var team []struct {
		ID       int64  `json:"id"`
		Username string `json:"username"`
		Name     string `json:"name"`
		Role     string `json:"role"`
	}
	ob.must("GET", base+"?sort=role&order=desc", nil, http.StatusOK, &team)
	if len(team) != 3 || team[0].Role != "owner" || team[2].Role != "guest" {
		t.Fatalf("team sorted by role desc = %+v", team)
	}
	ob.must("GET", base+"?sort=username&order=asc", nil, http.StatusOK, &team)
	for i := 1; i < len(team); i++ {
		if team[i-1].Username > team[i].Username {
			t.Fatalf("team not sorted by username: %+v", team)
		}
	}
	if code, _ := ob.call("GET", base+"?sort=password", nil); code != http.StatusBadRequest {
		t.Fatalf("sort by an unknown column = %d", code)
	}

	// The last owner can be neither demoted nor removed; the owner cannot leave.
	oid := itoa(userIDOf(t, o))
	code, data = ob.call("PUT", base+"/"+oid, map[string]any{"role": "manager"})
	if code != http.StatusBadRequest || !strings.Contains(errorOf(t, data), "last owner") {
		t.Fatalf("demoting the last owner = %d %s", code, data)
	}
	if code, _ := ob.call("DELETE", base+"/"+oid, nil); code != http.StatusBadRequest {
		t.Fatalf("removing the last owner = %d", code)
	}
	if code, data := ob.call("DELETE", fmt.Sprintf("/api/project/%d/me", pid), nil); code != http.StatusForbidden || !strings.Contains(errorOf(t, data), "owner cannot leave") {
		t.Fatalf("the owner leaving = %d %s", code, data)
	}
	// With a second owner, the first may step down.
	ob.must("PUT", base+"/"+itoa(userIDOf(t, m)), map[string]any{"role": "owner"}, http.StatusNoContent, nil)
	ob.must("PUT", base+"/"+oid, map[string]any{"role": "manager"}, http.StatusNoContent, nil)
	var role struct{ Role string }
	ob.must("GET", fmt.Sprintf("/api/project/%d/role", pid), nil, http.StatusOK, &role)
	if role.Role != "manager" {
		t.Fatalf("role after stepping down = %+v", role)
	}
	// The new guest leaves; the page reload shows her gone.
	xb := e.signIn(t, x.Spec.Username, mustPassword(t, e, x))
	xb.must("DELETE", fmt.Sprintf("/api/project/%d/me", pid), nil, http.StatusNoContent, nil)
	if code, _ := xb.call("GET", fmt.Sprintf("/api/project/%d", pid), nil); code != http.StatusNotFound {
		t.Fatalf("a user who left still sees the project: %d", code)
	}
	_ = mpw
	// Unknown member.
	if code, _ := e.signIn(t, m.Spec.Username, mpw).call("PUT", base+"/99999999", map[string]any{"role": "guest"}); code != http.StatusNotFound {
		t.Fatalf("changing a non-member = %d", code)
	}
}

// mustPassword gives a test user a known password through the store.
func mustPassword(t *testing.T, e *apiEnv, u *bastionv1.User) string {
	t.Helper()
	if err := e.Users.SetPassword(t.Context(), u, "known-pw-1"); err != nil {
		t.Fatal(err)
	}
	return "known-pw-1"
}

func TestEvents_writtenForChangesAndVisibleOnlyToMembers(t *testing.T) {
	e := startEnv(t)
	o, opw := e.newUser(t, "evowner", false)
	outsider, xpw := e.newUser(t, "evoutsider", false)
	ob := e.signIn(t, o.Spec.Username, opw)
	pid := e.newProject(t, "Evented", []bastionv1.ProjectMember{{User: o.Name, Role: bastionv1.RoleOwner}}, ob)
	path := fmt.Sprintf("/api/project/%d", pid)
	ob.must("PUT", path, map[string]any{"name": "Evented 2"}, http.StatusNoContent, nil)
	ob.must("POST", path+"/users", map[string]any{"user_id": userIDOf(t, outsider), "role": "guest"}, http.StatusNoContent, nil)
	ob.must("DELETE", path+"/users/"+itoa(userIDOf(t, outsider)), nil, http.StatusNoContent, nil)

	type event struct {
		UserID      *int64 `json:"user_id"`
		ProjectID   *int64 `json:"project_id"`
		ObjectType  string `json:"object_type"`
		ObjectID    *int64 `json:"object_id"`
		ObjectName  string `json:"object_name"`
		Description string `json:"description"`
		ProjectName string `json:"project_name"`
		Username    string `json:"username"`
		Created     string `json:"created"`
	}
	var events []event
	ob.must("GET", path+"/events/last", nil, http.StatusOK, &events)
	if len(events) != 3 {
		t.Fatalf("events = %+v, want 3", events)
	}
	// Newest first, each naming who, where and what.
	want := []string{"was removed from the project", "joined the project as guest", "Project Evented 2 updated"}
	for i, ev := range events {
		if !strings.Contains(ev.Description, want[i]) || ev.Username != o.Spec.Username || ev.UserID == nil ||
			ev.ProjectID == nil || *ev.ProjectID != pid || ev.ObjectType == "" || ev.ObjectID == nil || ev.ObjectName == "" || ev.Created == "" {
			t.Errorf("event %d = %+v, want %q by %s", i, ev, want[i], o.Spec.Username)
		}
	}
	// The outsider's global feed has none of them.
	var theirs []event
	e.signIn(t, outsider.Spec.Username, xpw).must("GET", "/api/events/last", nil, http.StatusOK, &theirs)
	for _, ev := range theirs {
		if ev.ProjectID != nil && *ev.ProjectID == pid {
			t.Fatalf("an outsider sees the project's event %+v", ev)
		}
	}
	var mine []event
	ob.must("GET", "/api/events/last", nil, http.StatusOK, &mine)
	if len(mine) < 3 {
		t.Fatalf("the owner's global feed = %d events", len(mine))
	}
	raw, _ := json.Marshal(mine)
	if !strings.Contains(string(raw), "Evented 2") {
		t.Fatalf("global feed lacks the project's events: %s", raw)
	}
}

// GET /projects answers by name (case-insensitive), then id, whatever
// order the cache holds them in: clients select "the first project".
func TestProjects_listIsSortedByName(t *testing.T) {
	e := startEnv(t)
	u, pw := e.newUser(t, "sorter", false)
	b := e.signIn(t, u.Spec.Username, pw)
	member := []bastionv1.ProjectMember{{User: u.Name, Role: bastionv1.RoleOwner}}
	for _, name := range []string{"charlie", "Alpha", "bravo", "alpha"} {
		e.newProject(t, name, member, b)
	}
	var got []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	b.must("GET", "/api/projects", nil, http.StatusOK, &got)
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "Alpha,alpha,bravo,charlie" || got[0].ID > got[1].ID {
		t.Fatalf("projects = %+v, want Alpha, alpha (by id), bravo, charlie", got)
	}
}
