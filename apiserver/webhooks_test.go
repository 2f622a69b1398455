package apiserver_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The secret of every webhook test's key: it must never come back.
const webhookCanary = "WEBHOOK-CANARY-s3cret-7d1e"

func hmacHex(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// deliver sends a webhook the way a server does: no cookie, no Origin.
func deliver(t *testing.T, url string, body []byte, header map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// hookFixture is a project with a template, a login_password key holding
// webhookCanary, and integrations made through the API.
type hookFixture struct {
	*schedintProject
	e     *apiEnv
	tplID int64
	keyID int64
	tpl   *bastionv1.Template
}

func newHookFixture(t *testing.T, e *apiEnv) *hookFixture {
	p := e.newSchedintProject(t, "Webhooks")
	tpl, tplID := e.seedTemplate(t, p.obj, "Site", "")
	// The push values are the template's survey variables, which a webhook
	// may always set (internal/taskvars).
	// A merge patch, as the template's reconciler may be writing it.
	before := tpl.DeepCopy()
	tpl.Spec.SurveyVars = []bastionv1.SurveyVar{{Name: "COMMIT", Title: "Commit"}, {Name: "DELIVERY", Title: "Delivery"}, {Name: "SIZE", Title: "Size"}}
	if err := e.K8s.Patch(t.Context(), tpl, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	_, keyID := e.seedKey(t, p.obj, bastionv1.KeyTypeLoginPassword, webhookCanary)
	return &hookFixture{schedintProject: p, e: e, tplID: tplID, keyID: keyID, tpl: tpl}
}

// integration makes one through the API with the given matchers and
// values, and returns its object name and the URL of a fresh alias.
func (f *hookFixture) integration(t *testing.T, fields map[string]any, matchers, values []map[string]any) (name, url string) {
	t.Helper()
	fields["template_id"] = f.tplID
	var in apiIntegration
	f.b.must("POST", f.base+"/integrations", fields, http.StatusCreated, &in)
	path := fmt.Sprintf("%s/integrations/%d", f.base, in.ID)
	for _, m := range matchers {
		f.b.must("POST", path+"/matchers", m, http.StatusCreated, nil)
	}
	for _, v := range values {
		f.b.must("POST", path+"/values", v, http.StatusCreated, nil)
	}
	var alias apiAlias
	f.b.must("POST", path+"/aliases", nil, http.StatusCreated, &alias)
	list := &bastionv1.IntegrationList{}
	if err := f.e.K8s.List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	for _, obj := range list.Items {
		if obj.Namespace == f.ns && obj.Spec.DisplayName == in.Name {
			return obj.Name, alias.URL
		}
	}
	t.Fatalf("integration %d not in the cluster", in.ID)
	return "", ""
}

var (
	pushMatchers = []map[string]any{
		{"name": "a push", "match_type": "header", "key": "X-GitHub-Event", "method": "equals", "value": "push"},
		{"name": "on main", "match_type": "body", "body_data_type": "json", "key": "ref", "method": "equals", "value": "refs/heads/main"},
	}
	pushValues = []map[string]any{
		{"name": "commit", "value_source": "body", "body_data_type": "json", "key": "commits.0.id", "variable": "COMMIT"},
		{"name": "delivery", "value_source": "header", "key": "X-GitHub-Delivery", "variable": "DELIVERY"},
		{"name": "size", "value_source": "body", "body_data_type": "json", "key": "size", "variable": "SIZE"},
	}
	pushBody = []byte(`{"ref":"refs/heads/main","size":2,"commits":[{"id":"abc123"},{"id":"def456"}],"repository":{"name":"app"}}`)
)

func TestWebhooks_githubPushWithAValidSignatureStartsATaskWithTheValues(t *testing.T) {
	e := startEnv(t)
	f := newHookFixture(t, e)
	name, url := f.integration(t, map[string]any{"name": "GitHub push", "auth_method": "github", "auth_secret_id": f.keyID}, pushMatchers, pushValues)
	var answers []string
	send := func(body []byte, header map[string]string) (int, []byte) {
		code, data := deliver(t, url, body, header)
		answers = append(answers, fmt.Sprintf("%d %s", code, data))
		return code, data
	}
	signed := func(body []byte, event string) map[string]string {
		return map[string]string{"X-GitHub-Event": event, "X-GitHub-Delivery": "d-42", "X-Hub-Signature-256": "sha256=" + hmacHex(webhookCanary, body)}
	}

	// A bad signature: 401, nothing started.
	bad := signed(pushBody, "push")
	bad["X-Hub-Signature-256"] = "sha256=" + hmacHex("not the secret", pushBody)
	if code, data := send(pushBody, bad); code != http.StatusUnauthorized || !strings.HasPrefix(errorOf(t, data), "authentication failed") {
		t.Fatalf("bad signature = %d %s", code, data)
	}
	// A body changed after signing: 401 as well.
	if code, data := send(bytes.Replace(pushBody, []byte("abc123"), []byte("evil00"), 1), signed(pushBody, "push")); code != http.StatusUnauthorized {
		t.Fatalf("tampered body = %d %s", code, data)
	}
	// Signed, but a ping, not a push: 200 with the reason.
	code, data := send(pushBody, signed(pushBody, "ping"))
	var msg struct {
		Message string `json:"message"`
	}
	if code != http.StatusOK || json.Unmarshal(data, &msg) != nil || msg.Message != `no task started: integration "GitHub push": matcher "a push" does not hold` {
		t.Fatalf("unmatched push = %d %s", code, data)
	}
	if tasks := e.tasksOf(t, f.ns, name); len(tasks) != 0 {
		t.Fatalf("%d tasks started by refused or unmatched webhooks", len(tasks))
	}

	// The real push.
	if code, data := send(pushBody, signed(pushBody, "push")); code != http.StatusNoContent || len(data) != 0 {
		t.Fatalf("valid push = %d %s", code, data)
	}
	tasks := e.tasksOf(t, f.ns, name)
	if len(tasks) != 1 {
		t.Fatalf("%d tasks after one push", len(tasks))
	}
	task := tasks[0]
	if task.Spec.TemplateRef.Name != f.tpl.Name || task.Spec.IntegrationRef.Name != name || task.Spec.User != "" {
		t.Fatalf("task spec = %+v", task.Spec)
	}
	var env map[string]any
	if task.Spec.ExtraVars == nil || json.Unmarshal(task.Spec.ExtraVars.Raw, &env) != nil {
		t.Fatalf("task extraVars = %v", task.Spec.ExtraVars)
	}
	if fmt.Sprint(env) != "map[COMMIT:abc123 DELIVERY:d-42 SIZE:2]" {
		t.Fatalf("task environment = %v", env)
	}
	if _, ok := task.Labels[bastionv1.LabelID]; !ok {
		t.Fatal("the task has no id")
	}

	events, err := e.Store.Events(t.Context(), []int64{f.id}, 100)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range events {
		found = found || ev.IntegrationID != 0 && strings.HasSuffix(ev.Description, "of Site started by integration GitHub push")
	}
	if !found {
		t.Errorf("no event says the integration started the task: %+v", events)
	}

	// The secret never came back: not in answers, not in the log, not in
	// the integration's own reads.
	for _, path := range []string{"/integrations", "/integrations/aliases", "/events/last"} {
		_, data := f.b.call("GET", f.base+path, nil)
		answers = append(answers, string(data))
	}
	haystack := strings.Join(answers, "\n") + e.Log.String()
	for _, ev := range events {
		haystack += ev.Description + ev.ObjectName
	}
	if strings.Contains(haystack, webhookCanary) {
		t.Error("the webhook secret appears in an answer, the log or an event")
	}
}

func TestWebhooks_tokenAndHMACMethods(t *testing.T) {
	e := startEnv(t)
	f := newHookFixture(t, e)
	tokenName, tokenURL := f.integration(t, map[string]any{"name": "Token hook", "auth_method": "token", "auth_secret_id": f.keyID, "auth_header": "X-Token"}, nil, nil)
	hmacName, hmacURL := f.integration(t, map[string]any{"name": "HMAC hook", "auth_method": "hmac", "auth_secret_id": f.keyID, "auth_header": "X-Signature"}, nil, nil)
	body := []byte(`{"anything":true}`)

	for _, tt := range []struct {
		name, url, integration string
		header                 map[string]string
		want                   int
	}{
		{"token, wrong", tokenURL, tokenName, map[string]string{"X-Token": "guess"}, http.StatusUnauthorized},
		{"token, in another header", tokenURL, tokenName, map[string]string{"Authorization": webhookCanary}, http.StatusUnauthorized},
		{"token, right", tokenURL, tokenName, map[string]string{"X-Token": webhookCanary}, http.StatusNoContent},
		{"hmac, with GitHub's prefix", hmacURL, hmacName, map[string]string{"X-Signature": "sha256=" + hmacHex(webhookCanary, body)}, http.StatusUnauthorized},
		{"hmac, other secret", hmacURL, hmacName, map[string]string{"X-Signature": hmacHex("other", body)}, http.StatusUnauthorized},
		{"hmac, right", hmacURL, hmacName, map[string]string{"X-Signature": hmacHex(webhookCanary, body)}, http.StatusNoContent},
	} {
		before := len(e.tasksOf(t, f.ns, tt.integration))
		code, data := deliver(t, tt.url, body, tt.header)
		if code != tt.want {
			t.Errorf("%s = %d %s, want %d", tt.name, code, data, tt.want)
		}
		started := len(e.tasksOf(t, f.ns, tt.integration)) - before
		wantStarted := 0
		if tt.want == http.StatusNoContent {
			wantStarted = 1
		}
		if started != wantStarted {
			t.Errorf("%s started %d tasks, want %d", tt.name, started, wantStarted)
		}
	}
	if strings.Contains(e.Log.String(), webhookCanary) {
		t.Error("the webhook secret appears in the log")
	}
}

func TestWebhooks_unknownAliasIs404AndLargeBodiesAre413(t *testing.T) {
	e := startEnv(t)
	f := newHookFixture(t, e)
	_, url := f.integration(t, map[string]any{"name": "Open hook"}, nil, nil)
	base := url[:strings.LastIndex(url, "/")+1]
	for _, alias := range []string{"short", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"} {
		if code, data := deliver(t, base+alias, []byte(`{}`), nil); code != http.StatusNotFound || errorOf(t, data) != "integration alias not found" {
			t.Errorf("alias %s = %d %s, want 404", alias, code, data)
		}
	}
	big := bytes.Repeat([]byte("x"), 1<<20+1)
	if code, data := deliver(t, url, big, nil); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over 1 MiB = %d %s, want 413", code, data)
	}
	// GET reaches the same integration; an open one needs no secret.
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("GET the alias = %d, want 204", resp.StatusCode)
	}
}

func TestWebhooks_projectAliasReachesEverySearchableIntegration(t *testing.T) {
	e := startEnv(t)
	f := newHookFixture(t, e)
	event := []map[string]any{{"name": "a push", "match_type": "header", "key": "X-Event", "method": "equals", "value": "push"}}
	first, _ := f.integration(t, map[string]any{"name": "First", "searchable": true}, event, nil)
	second, _ := f.integration(t, map[string]any{"name": "Second", "searchable": true, "auth_method": "token", "auth_secret_id": f.keyID, "auth_header": "X-Token"}, event, nil)
	hidden, _ := f.integration(t, map[string]any{"name": "Not searchable"}, event, nil)
	var alias apiAlias
	f.b.must("POST", f.base+"/integrations/aliases", nil, http.StatusCreated, &alias)
	count := func() [3]int {
		return [3]int{len(e.tasksOf(t, f.ns, first)), len(e.tasksOf(t, f.ns, second)), len(e.tasksOf(t, f.ns, hidden))}
	}

	// Without the token only the open integration runs.
	if code, data := deliver(t, alias.URL, []byte(`{}`), map[string]string{"X-Event": "push"}); code != http.StatusNoContent {
		t.Fatalf("project alias, no token = %d %s", code, data)
	}
	if got := count(); got != [3]int{1, 0, 0} {
		t.Fatalf("tasks (first, second, hidden) = %v", got)
	}
	// With it, both searchable integrations start a task.
	if code, data := deliver(t, alias.URL, []byte(`{}`), map[string]string{"X-Event": "push", "X-Token": webhookCanary}); code != http.StatusNoContent {
		t.Fatalf("project alias with the token = %d %s", code, data)
	}
	if got := count(); got != [3]int{2, 1, 0} {
		t.Fatalf("tasks (first, second, hidden) = %v", got)
	}
	// Nothing matches: the reasons of the integrations it authenticated
	// with, and nothing of the one it did not.
	code, data := deliver(t, alias.URL, []byte(`{}`), map[string]string{"X-Event": "ping"})
	if code != http.StatusOK || !strings.Contains(string(data), `integration \"First\": matcher \"a push\" does not hold`) || strings.Contains(string(data), "Second") {
		t.Fatalf("project alias, a ping = %d %s", code, data)
	}
	if got := count(); got != [3]int{2, 1, 0} {
		t.Fatalf("a ping started tasks: %v", got)
	}
}
