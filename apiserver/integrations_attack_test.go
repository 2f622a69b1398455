package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// Issue #19, item 4: matchers and extracted values decide which requests
// start a task and what variables it gets, so writing them needs
// updateProject as the integration does; an alias URL starts tasks, so
// only those with updateProject see one. Each attack goes through the
// real server as a guest, a task_runner and a manager.
func TestIntegrationAttack_lowerRolesCannotWriteMatchersOrValuesNorSeeAliases(t *testing.T) {
	e := startEnv(t)
	roles := []bastionv1.ProjectRole{bastionv1.RoleGuest, bastionv1.RoleTaskRunner, bastionv1.RoleManager}
	browsers := map[bastionv1.ProjectRole]*browser{}
	var members []bastionv1.ProjectMember
	for _, role := range append(roles, bastionv1.RoleOwner) {
		u, pw := e.newUser(t, "hook-"+strings.ReplaceAll(string(role), "_", "-"), false)
		browsers[role] = e.signIn(t, u.Spec.Username, pw)
		members = append(members, bastionv1.ProjectMember{User: u.Name, Role: role})
	}
	pid := e.newProject(t, "Hooks", members, browsers[bastionv1.RoleOwner])
	project := e.projectObject(t, pid)
	in, inID, matcherID, valueID := e.seedIntegration(t, project, bastionv1.IntegrationSpec{})
	alias, _ := e.seedAlias(t, project, in)
	projectAlias, _ := e.seedAlias(t, project, nil)
	before := &bastionv1.Integration{}
	if err := e.K8s.Get(t.Context(), client.ObjectKeyFromObject(in), before); err != nil {
		t.Fatal(err)
	}

	base := fmt.Sprintf("/api/project/%d/integrations", pid)
	one := fmt.Sprintf("%s/%d", base, inID)
	writes := []struct{ method, path, body string }{
		{"POST", one + "/matchers", `{"name":"any","match_type":"header","key":"X-Any","method":"contains","value":"a"}`},
		{"PUT", fmt.Sprintf("%s/matchers/%d", one, matcherID), `{"name":"event","match_type":"header","key":"X-Event","method":"unequals","value":"never"}`},
		{"DELETE", fmt.Sprintf("%s/matchers/%d", one, matcherID), ""},
		{"POST", one + "/values", `{"name":"inject","value_source":"body","body_data_type":"string","key":"x","variable":"ansible_ssh_common_args"}`},
		{"PUT", fmt.Sprintf("%s/values/%d", one, valueID), `{"name":"ref","value_source":"header","key":"X-Evil","variable":"REF"}`},
		{"DELETE", fmt.Sprintf("%s/values/%d", one, valueID), ""},
	}
	reads := []string{base, one, one + "/refs", one + "/matchers", one + "/values",
		fmt.Sprintf("/api/project/%d/backup", pid), fmt.Sprintf("/api/project/%d/events/last", pid)}
	for _, role := range roles {
		b := browsers[role]
		for _, w := range writes {
			var body any
			if w.body != "" {
				body = []byte(w.body)
			}
			code, data := b.call(w.method, w.path, body)
			if code != http.StatusForbidden || errorOf(t, data) != "you need the updateProject permission in this project" {
				t.Errorf("%s %s as %s = %d %s, want 403 naming updateProject", w.method, w.path, role, code, data)
			}
		}
		for _, path := range []string{base + "/aliases", one + "/aliases"} {
			code, data := b.call("GET", path, nil)
			if code != http.StatusForbidden || errorOf(t, data) != "you need the updateProject permission in this project" {
				t.Errorf("GET %s as %s = %d %s, want 403", path, role, code, data)
			}
		}
		// No other answer carries an alias.
		for _, path := range reads {
			code, data := b.call("GET", path, nil)
			if code != http.StatusOK {
				t.Errorf("GET %s as %s = %d %s", path, role, code, data)
			}
			for _, a := range []string{alias.Spec.Alias, projectAlias.Spec.Alias} {
				if strings.Contains(string(data), a) {
					t.Errorf("GET %s as %s shows an alias", path, role)
				}
			}
		}
	}

	// Nothing changed.
	after := &bastionv1.Integration{}
	if err := e.K8s.Get(t.Context(), client.ObjectKeyFromObject(in), after); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before.Spec, after.Spec) || after.Generation != before.Generation {
		t.Errorf("the integration changed: %+v, was %+v", after.Spec, before.Spec)
	}

	// The owner sees both aliases and may still write.
	for path, a := range map[string]string{base + "/aliases": projectAlias.Spec.Alias, one + "/aliases": alias.Spec.Alias} {
		var got []apiAlias
		browsers[bastionv1.RoleOwner].must("GET", path, nil, http.StatusOK, &got)
		if len(got) != 1 || !strings.HasSuffix(got[0].URL, "/api/integrations/"+a) {
			t.Errorf("GET %s as owner = %+v", path, got)
		}
	}
	browsers[bastionv1.RoleOwner].must("POST", one+"/matchers", json.RawMessage(writes[0].body), http.StatusCreated, nil)
}

// Issue #19, item 9: a signed GitHub delivery runs once. Its replay, as
// sent or under a new delivery id, is answered "replay" and starts
// nothing; an unsigned forgery that came first with the real delivery's
// id did not spend it; five copies sent at once start one task.
func TestWebhookAttack_aReplayedGitHubDeliveryIsAnsweredReplayAndStartsNothing(t *testing.T) {
	e := startEnv(t)
	f := newHookFixture(t, e)
	name, url := f.integration(t, map[string]any{"name": "Replayed", "auth_method": "github", "auth_secret_id": f.keyID}, pushMatchers[:1], nil)
	signed := func(body []byte, delivery string) map[string]string {
		return map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": "sha256=" + hmacHex(webhookCanary, body)}
	}
	tasks := func() int { return len(e.tasksOf(t, f.ns, name)) }
	replayed := func(code int, data []byte) bool {
		var msg webhookAnswer
		return code == http.StatusOK && json.Unmarshal(data, &msg) == nil &&
			strings.HasPrefix(msg.Message, `no task started: integration "Replayed": replay: `)
	}

	// The forgery comes first, with the id of the delivery to come.
	forged := signed(pushBody, "delivery-1")
	forged["X-Hub-Signature-256"] = "sha256=" + hmacHex("guessed", pushBody)
	if code, data := deliver(t, url, pushBody, forged); code != http.StatusUnauthorized {
		t.Fatalf("forged delivery = %d %s, want 401", code, data)
	}
	if code, data := deliver(t, url, pushBody, signed(pushBody, "delivery-1")); code != http.StatusNoContent {
		t.Fatalf("the real delivery after a forgery with its id = %d %s, want 204", code, data)
	}
	if n := tasks(); n != 1 {
		t.Fatalf("%d tasks after one delivery", n)
	}

	// The same delivery again, and its body under a fresh id.
	code, data := deliver(t, url, pushBody, signed(pushBody, "delivery-1"))
	if !replayed(code, data) || !strings.Contains(string(data), `delivery \"delivery-1\" was already received in the last 24 hours`) {
		t.Errorf("the replayed delivery = %d %s, want 200 saying replay", code, data)
	}
	if code, data := deliver(t, url, pushBody, signed(pushBody, "delivery-1-again")); !replayed(code, data) {
		t.Errorf("the replayed body under a new id = %d %s, want 200 saying replay", code, data)
	}
	if n := tasks(); n != 1 {
		t.Fatalf("%d tasks after replays, want 1", n)
	}

	// Five copies of a new delivery at once: one runs.
	body := []byte(strings.Replace(string(pushBody), "abc123", "fff999", 1))
	answers := deliverAtOnce(t, []string{url}, 5, body, signed(body, "delivery-2"), replayed)
	if answers[http.StatusNoContent] != 1 || answers[http.StatusOK] != 4 {
		t.Errorf("five simultaneous copies answered %v, want one 204 and four replays", answers)
	}
	if n := tasks(); n != 2 {
		t.Errorf("%d tasks after two distinct deliveries, want 2", n)
	}
	if strings.Contains(e.Log.String(), webhookCanary) {
		t.Error("the webhook secret appears in the log")
	}
}

// deliverAtOnce sends n copies of one delivery at once, copy i to
// urls[i%len(urls)], and counts the answers by status; a 200 that is not a
// replay counts as -1.
func deliverAtOnce(t *testing.T, urls []string, n int, body []byte, header map[string]string, replayed func(int, []byte) bool) map[int]int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[int]int{}
	for i := range n {
		wg.Go(func() {
			code, data := deliver(t, urls[i%len(urls)], body, header)
			if code == http.StatusOK && !replayed(code, data) {
				code = -1
			}
			mu.Lock()
			answers[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return answers
}

type webhookAnswer struct {
	Message string `json:"message"`
}
