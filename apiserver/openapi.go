package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"
)

// GET /api/openapi.json: an OpenAPI 3.0 document of /api, made from the
// route tree this server serves (chi.Walk) and the per-route metadata of
// openAPIOps (openapi_routes.go), with the schemas reflected from the Go
// types the handlers encode (openapi_schema.go). The paths come from the
// walk, so no served route is missing; a route without metadata is still
// listed, without a summary, and TestOpenAPI fails on it.
//
// Version 3.0.3 rather than 3.1: kin-openapi, which the tests validate
// the document with, checks 3.0 fully, and 3.0 is what most client
// generators and viewers read. Its one cost here is `nullable: true`
// instead of a null type.
//
// The document is public, like Semaphore's api-docs: it says which routes
// exist and their shapes, which the source says too, and nothing about
// any project.

const openAPIVersion = "3.0.3"

type openAPIDoc struct {
	OpenAPI      string               `json:"openapi"`
	Info         openAPIInfo          `json:"info"`
	Servers      []openAPIServer      `json:"servers"`
	Tags         []openAPITag         `json:"tags"`
	Paths        map[string]*pathItem `json:"paths"`
	Components   openAPIComponents    `json:"components"`
	undocumented []string
}

type openAPIInfo struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

type openAPIServer struct {
	URL string `json:"url"`
}

type openAPITag struct {
	Name string `json:"name"`
}

type openAPIComponents struct {
	Schemas         map[string]*schema         `json:"schemas"`
	Responses       map[string]*response       `json:"responses"`
	SecuritySchemes map[string]*securityScheme `json:"securitySchemes"`
}

type securityScheme struct {
	Type        string `json:"type"`
	Scheme      string `json:"scheme,omitempty"`
	In          string `json:"in,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description"`
}

// pathItem holds a path's operations; its fields fix their order.
type pathItem struct {
	Get    *operation `json:"get,omitempty"`
	Put    *operation `json:"put,omitempty"`
	Post   *operation `json:"post,omitempty"`
	Delete *operation `json:"delete,omitempty"`
	Patch  *operation `json:"patch,omitempty"`
}

func (p *pathItem) slot(method string) **operation {
	switch method {
	case http.MethodGet:
		return &p.Get
	case http.MethodPut:
		return &p.Put
	case http.MethodPost:
		return &p.Post
	case http.MethodDelete:
		return &p.Delete
	case http.MethodPatch:
		return &p.Patch
	}
	return nil
}

type operation struct {
	OperationID string                `json:"operationId"`
	Summary     string                `json:"summary,omitempty"`
	Description string                `json:"description,omitempty"`
	Tags        []string              `json:"tags"`
	Parameters  []parameter           `json:"parameters,omitempty"`
	RequestBody *requestBody          `json:"requestBody,omitempty"`
	Responses   map[string]*response  `json:"responses"`
	Security    []map[string][]string `json:"security"`
}

type parameter struct {
	Name        string  `json:"name"`
	In          string  `json:"in"`
	Required    bool    `json:"required,omitempty"`
	Description string  `json:"description,omitempty"`
	Schema      *schema `json:"schema"`
}

type requestBody struct {
	Required bool                 `json:"required"`
	Content  map[string]mediaType `json:"content"`
}

type response struct {
	Ref         string               `json:"$ref,omitempty"`
	Description string               `json:"description,omitempty"`
	Content     map[string]mediaType `json:"content,omitempty"`
}

type mediaType struct {
	Schema *schema `json:"schema"`
}

// route is one (method, pattern) of the tree, the pattern as chi has it.
type route struct{ method, pattern string }

// walkRoutes lists every route of r, sorted by pattern, then method.
func walkRoutes(r chi.Routes) []route {
	var out []route
	_ = chi.Walk(r, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		out = append(out, route{method, pattern})
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].pattern != out[j].pattern {
			return out[i].pattern < out[j].pattern
		}
		return out[i].method < out[j].method
	})
	return out
}

var paramRegexp = regexp.MustCompile(`\{([^}:]+)(:[^}]*)?\}`)

// documentedPaths maps each route's chi pattern to its path in the
// document: "{name:regexp}" becomes "{name}", and the trailing slash of a
// mounted "/" goes (chi serves /project/1/keys and /project/1/keys/ alike),
// unless the path without it is a route of its own.
func documentedPaths(routes []route) map[route]string {
	exists := map[route]bool{}
	for _, rt := range routes {
		exists[rt] = true
	}
	out := map[route]string{}
	for _, rt := range routes {
		path := paramRegexp.ReplaceAllString(rt.pattern, "{$1}")
		if trimmed := strings.TrimSuffix(path, "/"); trimmed != "" && trimmed != path &&
			!exists[route{rt.method, trimmed}] {
			path = trimmed
		}
		out[rt] = path
	}
	return out
}

// buildOpenAPI makes the document of the routes of r.
func buildOpenAPI(r chi.Routes, version string) *openAPIDoc {
	ops := openAPIOpsByKey()
	sc := newSchemas()
	doc := &openAPIDoc{
		OpenAPI: openAPIVersion,
		Info: openAPIInfo{Title: "Bastion API", Version: version, Description: "Bastion's /api, which " +
			"Semaphore UI's clients speak. Every error answers {\"error\": \"...\"}. Signed-in calls carry " +
			"the session cookie set by POST /auth/login, or an API token (POST /user/tokens) as a bearer token."},
		Servers: []openAPIServer{{URL: "/api"}},
		Paths:   map[string]*pathItem{},
		Components: openAPIComponents{
			Schemas: sc.components,
			Responses: map[string]*response{"Error": {Description: "The error, in the one error shape.",
				Content: jsonContent(sc.of(errorBody{}, asAnswer))}},
			SecuritySchemes: securitySchemes,
		},
	}
	tags := map[string]bool{}
	routes := walkRoutes(r)
	paths := documentedPaths(routes)
	for _, rt := range routes {
		path := paths[rt]
		op, ok := ops[rt.method+" "+path]
		if !ok {
			doc.undocumented = append(doc.undocumented, rt.method+" "+path)
		}
		item := doc.Paths[path]
		if item == nil {
			item = &pathItem{}
			doc.Paths[path] = item
		}
		slot := item.slot(rt.method)
		if slot == nil {
			doc.undocumented = append(doc.undocumented, rt.method+" "+path+" (method OpenAPI cannot name)")
			continue
		}
		*slot = op.render(rt.method, path, sc)
		tags[(*slot).Tags[0]] = true
	}
	for tag := range tags {
		doc.Tags = append(doc.Tags, openAPITag{tag})
	}
	sort.Slice(doc.Tags, func(i, j int) bool { return doc.Tags[i].Name < doc.Tags[j].Name })
	sort.Strings(doc.undocumented)
	return doc
}

// openAPIProblems says what is wrong between the tree of r and
// openAPIOps: routes without metadata, metadata of no route, and entries
// without a summary or an answer. Only the full tree (every option on)
// has every route; the tests check that one.
func openAPIProblems(r chi.Routes) []string {
	doc := buildOpenAPI(r, "")
	problems := append([]string(nil), doc.undocumented...)
	for key, op := range openAPIOpsByKey() {
		method, path, _ := strings.Cut(key, " ")
		if item := doc.Paths[path]; item == nil || item.slot(method) == nil || *item.slot(method) == nil {
			problems = append(problems, key+" is documented but not routed")
		}
		if op.summary == "" || (op.status == 0 && op.response == nil && !op.text) {
			problems = append(problems, key+" needs a summary and its answer (status or type)")
		}
	}
	sort.Strings(problems)
	return problems
}

// render is the document's operation for op at method and path.
func (op opDoc) render(method, path string, sc *schemas) *operation {
	o := &operation{
		OperationID: operationID(method, path),
		Summary:     op.summary,
		Description: op.description,
		Tags:        []string{tagOf(path)},
		Responses:   map[string]*response{"default": {Ref: "#/components/responses/Error"}},
		Security:    op.auth.requirement(),
	}
	for _, m := range paramRegexp.FindAllStringSubmatch(path, -1) {
		o.Parameters = append(o.Parameters, pathParameter(m[1], slices.Contains(op.textIDs, m[1])))
	}
	for _, q := range op.query {
		o.Parameters = append(o.Parameters, parameter{Name: q.name, In: "query", Description: q.description,
			Schema: sc.of(q.example, asRequest)})
	}
	if op.request != nil {
		o.RequestBody = &requestBody{Required: !op.optionalBody, Content: jsonContent(sc.of(op.request, asRequest))}
	}
	status := op.status
	if status == 0 {
		status = http.StatusOK
	}
	ok := &response{Description: http.StatusText(status)}
	switch {
	case op.text:
		ok.Content = map[string]mediaType{"text/plain": {Schema: &schema{Type: "string"}}}
	case op.response != nil:
		ok.Content = jsonContent(sc.of(op.response, asAnswer))
	}
	o.Responses[strconv.Itoa(status)] = ok
	return o
}

func jsonContent(s *schema) map[string]mediaType {
	return map[string]mediaType{"application/json": {Schema: s}}
}

// pathParameter: ids are integers (the /api's ids) unless the table says
// otherwise; other names are strings.
func pathParameter(name string, textID bool) parameter {
	p := parameter{Name: name, In: "path", Required: true, Schema: &schema{Type: "string"}}
	if !textID && (name == "id" || strings.HasSuffix(name, "_id")) {
		p.Schema = &schema{Type: "integer", Format: "int64"}
	}
	if name == "id" {
		p.Description = "the project's id"
	}
	return p
}

// tagOf groups a path by its resource: the segment after /project/{id},
// else the first one.
func tagOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) > 2 && parts[0] == "project" {
		return parts[2]
	}
	if parts[0] == "project" || parts[0] == "projects" {
		return "project"
	}
	return parts[0]
}

// operationID is the method and the path in camel case, parameters as
// "By…": getProjectByIdKeysByKeyId.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, part := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '.' || r == '-' }) {
		if strings.HasPrefix(part, "{") {
			b.WriteString("By")
			part = strings.Trim(part, "{}")
		}
		for _, word := range strings.Split(part, "_") {
			b.WriteString(upperFirst(word))
		}
	}
	if strings.HasSuffix(path, "/") && path != "/" {
		b.WriteString("Slash")
	}
	return b.String()
}

// openAPIHandler serves the document of the tree it is mounted in, built
// on the first call (the tree is complete by then) and kept: the tree
// does not change while the server runs.
type openAPIHandler struct {
	routes  chi.Routes
	version string
	once    sync.Once
	body    []byte
	err     error
}

func (h *openAPIHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	h.once.Do(func() {
		defer func() {
			if p := recover(); p != nil { // two types claiming one schema name
				h.err = fmt.Errorf("%v", p)
			}
		}()
		h.body, h.err = json.MarshalIndent(buildOpenAPI(h.routes, h.version), "", "  ")
	})
	if h.err != nil {
		fail(w, http.StatusInternalServerError, fmt.Sprintf("building the OpenAPI document: %v", h.err))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(h.body)
}
