package apiserver_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/users"
)

// GET /user answers in can_create_project what the user may do, as
// Semaphore does (admin || setting): Semaphore's own web UI shows New
// Project by it. GET /user/ answers the same. /users keeps the setting.
func TestCurrentUser_canCreateProjectSaysWhatTheUserMayDo(t *testing.T) {
	e := startEnv(t)
	adminUser, adminPW := e.newUser(t, "cancreate-admin", true)
	plain, plainPW := e.newUser(t, "cancreate-plain", false)
	allowedPW := users.RandomPassword(12)
	allowed, err := e.Users.Create(t.Context(), bastionv1.UserSpec{Username: "cancreate-allowed", Name: "Allowed",
		Email: "cancreate-allowed@example.test", CanCreateProject: true}, allowedPW)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		user     *bastionv1.User
		password string
		want     bool
	}{
		{adminUser, adminPW, true},
		{plain, plainPW, false},
		{allowed, allowedPW, true},
	} {
		b := e.signIn(t, tc.user.Spec.Username, tc.password)
		for _, path := range []string{"/api/user", "/api/user/"} {
			var me apiUser
			b.must("GET", path, nil, http.StatusOK, &me)
			if me.Username != tc.user.Spec.Username || me.CanCreateProject != tc.want {
				t.Errorf("GET %s as %s = %+v, want can_create_project %v", path, tc.user.Spec.Username, me, tc.want)
			}
		}
		// What it says is what the API lets them do.
		code, body := b.call("POST", "/api/projects", map[string]any{"name": "made by " + tc.user.Spec.Username})
		if (code == http.StatusCreated) != tc.want {
			t.Errorf("POST /api/projects as %s = %d %s, want allowed %v", tc.user.Spec.Username, code, body, tc.want)
		}
	}

	// The user list shows the stored setting, which an admin edits.
	var listed apiUser
	e.signIn(t, adminUser.Spec.Username, adminPW).must("GET", fmt.Sprintf("/api/users/%d", userIDOf(t, adminUser)), nil, http.StatusOK, &listed)
	if listed.CanCreateProject {
		t.Errorf("GET /api/users/{id} of an admin = %+v, want the stored can_create_project false", listed)
	}
}

// GET /events is the user's feed: the events of the projects they are a
// member of, and never another project's, admins included (as
// Semaphore's). /events/last still gives an admin every project's.
func TestUserEvents_onlyTheProjectsTheUserIsAMemberOf(t *testing.T) {
	e := startEnv(t)
	alice, alicePW := e.newUser(t, "feed-alice", false)
	bob, bobPW := e.newUser(t, "feed-bob", false)
	root, rootPW := e.newUser(t, "feed-root", true)
	ab, bb, rb := e.signIn(t, alice.Spec.Username, alicePW), e.signIn(t, bob.Spec.Username, bobPW), e.signIn(t, root.Spec.Username, rootPW)

	alices := e.newProject(t, "Alice's", []bastionv1.ProjectMember{{User: alice.Name, Role: bastionv1.RoleOwner}}, ab)
	bobs := e.newProject(t, "Bob's", []bastionv1.ProjectMember{{User: bob.Name, Role: bastionv1.RoleOwner},
		{User: root.Name, Role: bastionv1.RoleGuest}}, bb)
	ab.must("PUT", fmt.Sprintf("/api/project/%d", alices), map[string]any{"name": "Alice's, renamed"}, http.StatusNoContent, nil)
	bb.must("PUT", fmt.Sprintf("/api/project/%d", bobs), map[string]any{"name": "Bob's, renamed"}, http.StatusNoContent, nil)

	for _, tc := range []struct {
		who      string
		b        *browser
		path     string
		want     []int64
		mustNot  []int64
		onlyWant bool
	}{
		{"alice", ab, "/api/events", []int64{alices}, []int64{bobs}, true},
		{"bob", bb, "/api/events", []int64{bobs}, []int64{alices}, true},
		// The admin is a member of Bob's project only.
		{"root", rb, "/api/events", []int64{bobs}, []int64{alices}, true},
		{"root", rb, "/api/events/last", []int64{alices, bobs}, nil, false},
	} {
		var events []struct {
			ProjectID   *int64 `json:"project_id"`
			Description string `json:"description"`
			Username    string `json:"username"`
			Created     string `json:"created"`
		}
		tc.b.must("GET", tc.path, nil, http.StatusOK, &events)
		seen := map[int64]bool{}
		for _, ev := range events {
			if ev.ProjectID == nil {
				if tc.onlyWant {
					t.Errorf("GET %s as %s: an event outside any project: %+v", tc.path, tc.who, ev)
				}
				continue
			}
			seen[*ev.ProjectID] = true
			if tc.onlyWant && !slices.Contains(tc.want, *ev.ProjectID) {
				t.Errorf("GET %s as %s shows an event of project %d: %+v", tc.path, tc.who, *ev.ProjectID, ev)
			}
		}
		for _, id := range tc.want {
			if !seen[id] {
				t.Errorf("GET %s as %s lacks the events of project %d: %+v", tc.path, tc.who, id, events)
			}
		}
		for _, id := range tc.mustNot {
			if seen[id] {
				t.Errorf("GET %s as %s shows the events of project %d, of which they are no member", tc.path, tc.who, id)
			}
		}
	}
}
