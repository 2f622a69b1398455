package apiserver_test

import (
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/bastion-dev/bastion/apiserver"
)

// Web security over the whole router (issue 11, item 9): routes are read
// from the chi tree itself, so a route added later is covered, or the
// tests fail and say which.

// routes lists "METHOD /pattern" of the real server, every route mounted.
func routes(t *testing.T, e *apiEnv) []string {
	t.Helper()
	mux, ok := apiserver.New(e.opts).(chi.Routes)
	if !ok {
		t.Fatal("apiserver.New is not a chi router any more; walk its routes another way")
	}
	var out []string
	err := chi.Walk(mux, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if strings.HasPrefix(route, "/api/") {
			out = append(out, method+" "+route)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	if len(out) < 50 {
		t.Fatalf("walked only %d routes: %v", len(out), out)
	}
	return out
}

var placeholder = regexp.MustCompile(`\{[^}]*\}`)

// normalize makes route patterns and matrix paths comparable: every
// placeholder is {}, the query and a trailing slash go.
func normalize(methodPath string) string {
	methodPath, _, _ = strings.Cut(methodPath, "?")
	methodPath = placeholder.ReplaceAllString(methodPath, "{}")
	methodPath = strings.ReplaceAll(methodPath, "/*", "")
	if len(methodPath) > 1 {
		methodPath = strings.TrimSuffix(methodPath, "/")
	}
	return methodPath
}

func TestCSRF_everyMutatingRouteRefusesACrossSiteRequest(t *testing.T) {
	e := startEnv(t)
	user, password := e.newUser(t, "csrf-walk", true)
	b := e.signIn(t, user.Spec.Username, password)
	b.header.Set("Origin", "https://evil.example")
	b.header.Set("Sec-Fetch-Site", "cross-site")
	before := e.snapshotProjects(t)
	n := 0
	for _, r := range routes(t, e) {
		method, pattern, _ := strings.Cut(r, " ")
		if method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions {
			continue
		}
		n++
		path := strings.ReplaceAll(placeholder.ReplaceAllString(pattern, "1"), "/*", "/x")
		code, data := b.call(method, path, []byte(`{"name":"forged"}`))
		if code != http.StatusForbidden || !strings.Contains(errorOf(t, data), "cross-origin") {
			t.Errorf("cross-site %s %s = %d %s, want 403 cross-origin", method, path, code, data)
		}
	}
	if n < 40 {
		t.Fatalf("only %d mutating routes walked", n)
	}
	if after := e.snapshotProjects(t); after != before {
		t.Fatalf("cross-site requests changed the projects: %s -> %s", before, after)
	}
}

// snapshotProjects is the number of projects, to see that nothing was made.
func (e *apiEnv) snapshotProjects(t *testing.T) string {
	_, projects := e.counts(t)
	return itoa(int64(projects))
}

// notInMatrix are the routes no matrix row covers, each with the reason
// (and, where one exists, the test that covers it instead).
var notInMatrix = map[string]string{
	"GET /api/ping":                             "anyone, no data (TestPing_answersPong)",
	"POST /api/auth/login":                      "signing in itself (TestSignIn_*)",
	"GET /api/auth/oidc/{}/login":               "single sign-on redirects (TestOIDC_*)",
	"GET /api/auth/oidc/{}/redirect":            "single sign-on callback (TestOIDC_*)",
	"GET /api/ws":                               "websocket, members' projects only (TestWS_needsASessionAndSendsOnlyTheMembersProjects)",
	"POST /api/integrations/{}":                 "webhooks authenticate with the integration's secret (TestWebhooks_*)",
	"GET /api/integrations/{}":                  "webhooks authenticate with the integration's secret (TestWebhooks_*)",
	"GET /api/apps":                             "the static list of apps, any signed-in user",
	"PUT /api/runner/tasks/{}/lines":            "runners authenticate with their task's token",
	"POST /api/runner/tasks/{}/lines":           "runners authenticate with their task's token",
	"POST /api/runner/tasks/{}/result":          "runners authenticate with their task's token",
	"POST /api/runner/tasks/{}/heartbeat":       "runners authenticate with their task's token",
	"GET /api/runner/tasks/{}/confirmation":     "runners authenticate with their task's token",
	"POST /api/runner/tasks/{}/state":           "runners authenticate with their task's token",
	"POST /api/runner/tasks/{}/terraform-state": "runners authenticate with their task's token",
}

func TestPermissionMatrix_coversEveryRoute(t *testing.T) {
	e := startEnv(t)
	covered := map[string]bool{}
	for _, rows := range [][]matrixRow{matrix, resourcesMatrix, templatesMatrix, schedintMatrix, hardeningMatrix} {
		for _, row := range rows {
			covered[normalize(row.method+" "+row.path)] = true
		}
	}
	var missing []string
	for _, r := range routes(t, e) {
		key := normalize(r)
		if covered[key] || notInMatrix[key] != "" || strings.HasPrefix(key, "GET /api/runner/") || strings.HasPrefix(key, "POST /api/runner/") || strings.HasPrefix(key, "PUT /api/runner/") {
			continue
		}
		missing = append(missing, key)
	}
	if len(missing) > 0 {
		t.Fatalf("%d routes are in no permission matrix (add a row, or a reason to notInMatrix):\n%s", len(missing), strings.Join(missing, "\n"))
	}
}
