package apiserver_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/hub"
)

// TestWS_needsASessionAndSendsOnlyTheMembersProjects wires /api/ws to real
// sessions: without one the upgrade is refused with 401; with one, the
// client gets the output of its projects and nothing of the others.
func TestWS_needsASessionAndSendsOnlyTheMembersProjects(t *testing.T) {
	e := startEnv(t)
	member, pw := e.newUser(t, "wsmember", false)
	b := e.signIn(t, member.Spec.Username, pw)
	mine := e.newProject(t, "WS mine", []bastionv1.ProjectMember{{User: member.Name, Role: bastionv1.RoleGuest}}, b)
	other, _ := e.newUser(t, "wsother", false)
	otherBrowser := e.signIn(t, other.Spec.Username, mustPassword(t, e, other))
	theirs := e.newProject(t, "WS theirs", []bastionv1.ProjectMember{{User: other.Name, Role: bastionv1.RoleOwner}}, otherBrowser)

	wsURL := "ws" + strings.TrimPrefix(e.URL, "http") + "/api/ws"
	if _, resp, err := websocket.DefaultDialer.Dial(wsURL, nil); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("websocket without a session: %v %v, want 401", err, resp)
	}

	u, _ := url.Parse(e.URL)
	header := http.Header{}
	for _, c := range b.c.Jar.Cookies(u) {
		header.Add("Cookie", c.Name+"="+c.Value)
	}
	conn, _, err := websocket.DefaultDialer.Dial(wsURL, header)
	if err != nil {
		t.Fatalf("websocket with a session: %v", err)
	}
	defer conn.Close()

	at := time.Now().UTC()
	// The hub is the one the server publishes task output on.
	h := e.opts.Hub
	secret := hub.Log(theirs, 1, at, "line of another project")
	visible := hub.Log(mine, 1, at, fmt.Sprintf("line of project %d", mine))
	h.Publish(secret)
	h.Publish(visible)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, frame, err := conn.ReadMessage()
	if err != nil || string(frame) != string(visible.Frame) {
		t.Fatalf("first frame = %s %v, want only the member's project's line %s", frame, err, visible.Frame)
	}
}
