package apiserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/go-chi/chi/v5"

	"github.com/bastion-dev/bastion/apiserver"
)

// The OpenAPI document (GET /api/openapi.json) against the real route
// tree: every route is in it, every operation in it is routed, it is a
// valid OpenAPI 3.0 document, and real answers fit its schemas.

// loadOpenAPI parses and validates a document with kin-openapi.
func loadOpenAPI(t *testing.T, data []byte) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatalf("the document does not parse: %v", err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}
	return doc
}

func TestOpenAPI_isPublicValidAndTheSameOnEveryCall(t *testing.T) {
	e := startEnv(t)
	get := func() []byte {
		resp, err := http.Get(e.URL + "/api/openapi.json") // no session, no token
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("GET /api/openapi.json = %d %s %.200s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		return body
	}
	first := get()
	if second := get(); !bytes.Equal(first, second) {
		t.Fatal("two calls answered different documents")
	}
	doc := loadOpenAPI(t, first)
	if doc.OpenAPI != "3.0.3" || doc.Info == nil || doc.Info.Title == "" || doc.Info.Version != "test" {
		t.Fatalf("openapi %q, info %+v; want 3.0.3 and the server's version", doc.OpenAPI, doc.Info)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/api" {
		t.Fatalf("servers = %+v, want /api", doc.Servers)
	}
	for _, name := range []string{"session", "apiToken", "runnerToken"} {
		if doc.Components.SecuritySchemes[name] == nil {
			t.Errorf("security scheme %s is missing", name)
		}
	}
	errSchema := doc.Components.Responses["Error"].Value.Content.Get("application/json").Schema.Value
	if errSchema.Properties["error"] == nil || !slices.Contains(errSchema.Required, "error") {
		t.Errorf("the error response is not {\"error\": \"...\"}: %+v", errSchema)
	}
	for path, item := range doc.Paths.Map() {
		for method, o := range item.Operations() {
			checkOperation(t, method+" "+path, o)
		}
	}
	// Spot checks of the reflection on real routes.
	signedIn := doc.Paths.Find("/project/{id}/inventory").Get
	if len(*signedIn.Security) != 2 || !signedIn.Responses.Value("200").Value.Content.Get("application/json").Schema.Value.Type.Is("array") {
		t.Errorf("GET /project/{id}/inventory: security %v, answer not a list", signedIn.Security)
	}
	if ping := doc.Paths.Find("/ping").Get; ping.Security == nil || len(*ping.Security) != 0 {
		t.Errorf("GET /ping should need no sign-in: %v", ping.Security)
	}
}

// checkOperation insists on what every operation must say.
func checkOperation(t *testing.T, name string, o *openapi3.Operation) {
	t.Helper()
	if o.Summary == "" || o.OperationID == "" {
		t.Errorf("%s has no summary or operationId", name)
	}
	if o.Security == nil {
		t.Errorf("%s does not say who may call it", name)
	}
	if o.Responses.Default() == nil || o.Responses.Default().Ref != "#/components/responses/Error" {
		t.Errorf("%s does not name the error shape", name)
	}
	success := 0
	for code := range o.Responses.Map() {
		if code != "default" && code < "400" {
			success++
		}
	}
	if success != 1 {
		t.Errorf("%s has %d success answers, want 1", name, success)
	}
	if (strings.HasPrefix(name, "GET ") || strings.HasPrefix(name, "DELETE ")) && o.RequestBody != nil {
		t.Errorf("%s takes a body", name)
	}
}

// A server without sign-in serves the routes it has, and documents those
// alone: the document is the tree's, not a fixed list.
func TestOpenAPI_followsTheTreeOfAServerWithoutSignIn(t *testing.T) {
	h := apiserver.New(apiserver.Options{Version: "bare"})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /api/openapi.json = %d %s", rec.Code, rec.Body)
	}
	doc := loadOpenAPI(t, rec.Body.Bytes())
	var paths []string
	for path := range doc.Paths.Map() {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	if want := []string{"/info", "/openapi.json", "/ping"}; !slices.Equal(paths, want) || doc.Info.Version != "bare" {
		t.Errorf("paths %v (version %s), want %v", paths, doc.Info.Version, want)
	}
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// concrete fills a path's parameters with sample values.
func concrete(path string) string { return pathParam.ReplaceAllString(path, "1") }

// The paths come from the tree, so none can be missing; the test checks
// both ways anyway, through chi's own matching: each documented operation,
// made into a request, reaches a route (not 404 or 405), and every route
// of the tree is reached by one documented operation.
func TestOpenAPI_everyRouteIsDocumentedAndEveryDocumentedRouteIsServed(t *testing.T) {
	e := startEnv(t)
	h := apiserver.New(e.opts)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /api/openapi.json = %d %s", rec.Code, rec.Body)
	}
	doc := loadOpenAPI(t, rec.Body.Bytes())
	tree := h.(chi.Routes)

	reached := map[string]string{} // route → the operation that reaches it
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			pattern := tree.Find(chi.NewRouteContext(), method, "/api"+concrete(path))
			if pattern == "" {
				t.Errorf("the document names %s %s, which no route serves", method, path)
				continue
			}
			reached[method+" "+pattern] = method + " " + path
			// A mount serves "/keys" by its subrouter's "/" route, which
			// Walk names "/keys/" and Find, reached without the slash,
			// names "/keys".
			if !strings.HasSuffix(pattern, "/") {
				reached[method+" "+pattern+"/"] = method + " " + path
			}
		}
	}
	routes := 0
	_ = chi.Walk(tree, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if !strings.HasPrefix(pattern, "/api/") {
			return nil // the console
		}
		routes++
		if reached[method+" "+pattern] == "" {
			t.Errorf("route %s %s is missing from the document", method, pattern)
		}
		return nil
	})
	if routes < 100 || len(doc.Paths.Map()) < 60 {
		t.Errorf("%d routes under /api, %d paths in the document", routes, len(doc.Paths.Map()))
	}
	if problems := apiserver.OpenAPIProblems(apiserver.APIRoutes(e.opts, nil)); len(problems) > 0 {
		t.Errorf("the route tree and the documentation table disagree:\n%s", strings.Join(problems, "\n"))
	}
}

// A route added to the tree without an entry in the table is reported
// (and listed without a summary); an entry whose route goes is reported.
func TestOpenAPI_aRouteWithoutDocumentationFails(t *testing.T) {
	e := startEnv(t)
	tree := apiserver.APIRoutes(e.opts, func(r chi.Router) {
		r.Get("/project/{id}/brand-new", http.NotFound)
	})
	problems := apiserver.OpenAPIProblems(tree)
	if !slices.Equal(problems, []string{"GET /project/{id}/brand-new"}) {
		t.Errorf("problems = %q, want the undocumented route alone", problems)
	}
	data, err := apiserver.OpenAPIDocument(tree)
	if err != nil {
		t.Fatal(err)
	}
	doc := loadOpenAPI(t, data)
	if item := doc.Paths.Find("/project/{id}/brand-new"); item == nil || item.Get == nil || item.Get.Summary != "" {
		t.Errorf("the undocumented route should be listed without a summary: %+v", item)
	}

	small := chi.NewRouter()
	small.Get("/ping", http.NotFound)
	problems = apiserver.OpenAPIProblems(small)
	if !slices.Contains(problems, "GET /info is documented but not routed") || slices.ContainsFunc(problems, func(p string) bool {
		return strings.HasPrefix(p, "GET /ping ")
	}) {
		t.Errorf("a tree of /ping alone: problems = %q", problems)
	}
}

// answerChecker sends real requests as b, and checks each request and
// its answer against the document.
type answerChecker struct {
	t      *testing.T
	router routers.Router
	b      *browser
	seen   int
}

// call sends body (JSON) to path, insists on the status, checks both
// ways against the document and returns the answer.
func (c *answerChecker) call(method, path string, body any, want int) []byte {
	c.t.Helper()
	var sent []byte
	if body != nil {
		sent, _ = json.Marshal(body)
	}
	request := func(base string) *http.Request {
		req, err := http.NewRequestWithContext(c.t.Context(), method, base+path, bytes.NewReader(sent))
		if err != nil {
			c.t.Fatal(err)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		return req
	}
	live := request(c.b.base)
	for k, v := range c.b.header {
		live.Header[k] = v
	}
	resp, err := c.b.c.Do(live)
	if err != nil {
		c.t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != want {
		c.t.Fatalf("%s %s = %d %s (%v), want %d", method, path, resp.StatusCode, data, err, want)
	}

	// The same request against the document, at its server's address.
	req := request("http://bastion.test")
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		c.t.Fatalf("%s %s: not in the document: %v", method, path, err)
	}
	input := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateRequest(c.t.Context(), input); err != nil {
		c.t.Errorf("%s %s: the request does not fit the document: %v", method, path, err)
	}
	err = openapi3filter.ValidateResponse(c.t.Context(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: input, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(data)), Options: &openapi3filter.Options{IncludeResponseStatus: true},
	})
	if err != nil {
		c.t.Errorf("%s %s: the answer does not fit the document: %v\n%.600s", method, path, err, data)
	}
	c.seen++
	return data
}

// Real requests and answers of a project's life fit the schemas the document reflects
// from the Go types: required fields are there, nullable ones may be null.
func TestOpenAPI_realAnswersFitTheDocument(t *testing.T) {
	e := startEnv(t)
	resp, err := http.Get(e.URL + "/api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	doc := loadOpenAPI(t, data)
	doc.Servers = openapi3.Servers{{URL: "http://bastion.test/api"}}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	p := newTplProject(t, e)
	c := &answerChecker{t: t, router: router, b: p.b}

	c.call("GET", "/api/ping", nil, http.StatusOK)
	c.call("GET", "/api/info", nil, http.StatusOK)
	c.call("GET", "/api/auth/login", nil, http.StatusOK)
	c.call("GET", "/api/user", nil, http.StatusOK)
	c.call("GET", "/api/projects", nil, http.StatusOK)
	c.call("GET", "/api/apps", nil, http.StatusOK)
	c.call("GET", "/api/events/last", nil, http.StatusOK)
	c.call("GET", "/api/users", nil, http.StatusOK)
	c.call("GET", "/api/user/tokens", nil, http.StatusOK)
	c.call("POST", "/api/user/tokens", nil, http.StatusCreated)
	c.call("GET", p.path(""), nil, http.StatusOK)
	c.call("GET", p.path("/role"), nil, http.StatusOK)
	c.call("GET", p.path("/users"), nil, http.StatusOK)
	for _, kind := range []string{"keys", "repositories", "inventory", "environment", "views", "schedules", "integrations", "templates", "tasks"} {
		c.call("GET", p.path("/%s", kind), nil, http.StatusOK)
	}
	c.call("GET", p.path("/keys/%d", p.key.id), nil, http.StatusOK)
	c.call("GET", p.path("/keys/%d/refs", p.key.id), nil, http.StatusOK)
	c.call("GET", p.path("/repositories/%d", p.repo.id), nil, http.StatusOK)
	c.call("GET", p.path("/inventory/%d", p.inv.id), nil, http.StatusOK)
	c.call("GET", p.path("/environment/%d", p.env.id), nil, http.StatusOK)
	c.call("GET", p.path("/views/%d", p.view.id), nil, http.StatusOK)
	c.call("POST", p.path("/keys"), map[string]any{"name": "k", "type": "none"}, http.StatusNoContent)
	c.call("POST", p.path("/repositories"), map[string]any{"name": "r", "git_url": "https://git.example/r.git",
		"git_branch": "main", "ssh_key_id": p.key.id}, http.StatusNoContent)
	c.call("POST", p.path("/inventory"), map[string]any{"name": "i", "type": "static", "inventory": "web1",
		"ssh_key_id": p.key.id}, http.StatusCreated)
	c.call("POST", p.path("/environment"), map[string]any{"name": "e", "json": "{}", "env": "{}"}, http.StatusNoContent)
	var view struct {
		ID int64 `json:"id"`
	}
	decodeInto(t, c.call("POST", p.path("/views"), map[string]any{"title": "New"}, http.StatusCreated), &view)
	c.call("PUT", p.path("/views/%d", view.ID), map[string]any{"id": view.ID, "title": "Renamed", "position": 1}, http.StatusNoContent)
	c.call("POST", p.path("/views/positions"), map[string]any{itoa(view.ID): 0}, http.StatusNoContent)
	c.call("DELETE", p.path("/views/%d", view.ID), nil, http.StatusNoContent)

	var tpl struct {
		ID int64 `json:"id"`
	}
	decodeInto(t, c.call("POST", p.path("/templates"), p.templateBody("Deploy", nil), http.StatusCreated), &tpl)
	c.call("GET", p.path("/templates/%d", tpl.ID), nil, http.StatusOK)
	c.call("GET", p.path("/templates/%d/refs", tpl.ID), nil, http.StatusOK)
	c.call("PUT", p.path("/templates/%d", tpl.ID), p.templateBody("Deploy", func(m map[string]any) { m["id"] = tpl.ID }),
		http.StatusNoContent)
	c.call("GET", p.path("/views/%d/templates", p.view.id), nil, http.StatusOK)
	var sch struct {
		ID int64 `json:"id"`
	}
	decodeInto(t, c.call("POST", p.path("/schedules"), map[string]any{"template_id": tpl.ID, "cron_format": "0 3 * * *", "name": "nightly"},
		http.StatusCreated), &sch)
	c.call("GET", p.path("/schedules/%d", sch.ID), nil, http.StatusOK)
	c.call("GET", p.path("/schedules"), nil, http.StatusOK)
	c.call("GET", p.path("/templates/%d/schedules", tpl.ID), nil, http.StatusOK)
	c.call("POST", p.path("/schedules/validate"), map[string]any{"cron_format": "0 3 * * *"}, http.StatusOK)
	c.call("PUT", p.path("/schedules/%d/active", sch.ID), map[string]any{"active": false}, http.StatusNoContent)
	c.call("DELETE", p.path("/schedules/%d", sch.ID), nil, http.StatusNoContent)
	var integration struct {
		ID int64 `json:"id"`
	}
	decodeInto(t, c.call("POST", p.path("/integrations"), map[string]any{"name": "hook", "template_id": tpl.ID, "auth_method": ""},
		http.StatusCreated), &integration)
	c.call("GET", p.path("/integrations/%d", integration.ID), nil, http.StatusOK)
	c.call("GET", p.path("/integrations/%d/refs", integration.ID), nil, http.StatusOK)
	c.call("POST", p.path("/integrations/%d/aliases", integration.ID), nil, http.StatusCreated)
	c.call("GET", p.path("/integrations/%d/aliases", integration.ID), nil, http.StatusOK)
	c.call("POST", p.path("/integrations/%d/matchers", integration.ID), map[string]any{"name": "on main", "match_type": "body",
		"method": "equals", "body_data_type": "json", "key": "ref", "value": "refs/heads/main"}, http.StatusCreated)
	c.call("GET", p.path("/integrations/%d/matchers", integration.ID), nil, http.StatusOK)
	c.call("POST", p.path("/integrations/%d/values", integration.ID), map[string]any{"name": "ref", "value_source": "body",
		"body_data_type": "json", "key": "ref", "variable": "REF"}, http.StatusCreated)
	c.call("GET", p.path("/integrations/%d/values", integration.ID), nil, http.StatusOK)
	c.call("POST", p.path("/integrations/aliases"), nil, http.StatusCreated)
	c.call("GET", p.path("/integrations/aliases"), nil, http.StatusOK)

	var task struct {
		ID int64 `json:"id"`
	}
	decodeInto(t, c.call("POST", p.path("/tasks"), map[string]any{"template_id": tpl.ID}, http.StatusCreated), &task)
	c.call("GET", p.path("/tasks/%d", task.ID), nil, http.StatusOK)
	c.call("GET", p.path("/tasks"), nil, http.StatusOK)
	c.call("GET", p.path("/templates/%d/tasks", tpl.ID), nil, http.StatusOK)
	c.call("GET", p.path("/tasks/%d/output", task.ID), nil, http.StatusOK)
	c.call("GET", p.path("/tasks/%d/raw", task.ID), nil, http.StatusOK)
	c.call("GET", p.path("/tasks/%d/stderr", task.ID), nil, http.StatusOK)
	c.call("GET", p.path("/templates/%d/tasks/last", tpl.ID), nil, http.StatusOK)
	c.call("GET", p.path("/tasks/last"), nil, http.StatusOK)
	c.call("GET", p.path("/stats/tasks?days=7"), nil, http.StatusOK)
	c.call("GET", p.path("/templates/%d/durations?limit=5", tpl.ID), nil, http.StatusOK)
	c.call("GET", p.path("/backup"), nil, http.StatusOK)
	c.call("GET", p.path("/events/last"), nil, http.StatusOK)
	if c.seen < 65 {
		t.Errorf("checked %d answers", c.seen)
	}
}
