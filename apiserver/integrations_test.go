package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

type apiIntegration struct {
	ID           int64           `json:"id"`
	Name         string          `json:"name"`
	ProjectID    int64           `json:"project_id"`
	TemplateID   *int64          `json:"template_id"`
	AuthMethod   string          `json:"auth_method"`
	AuthSecretID *int64          `json:"auth_secret_id"`
	AuthHeader   string          `json:"auth_header"`
	Searchable   bool            `json:"searchable"`
	TaskParams   json.RawMessage `json:"task_params"`
}

type apiAlias struct {
	ID  int64  `json:"id"`
	URL string `json:"url"`
}

type apiMatcher struct {
	ID            int64  `json:"id"`
	IntegrationID int64  `json:"integration_id"`
	Name          string `json:"name"`
	MatchType     string `json:"match_type"`
	Method        string `json:"method"`
	BodyDataType  string `json:"body_data_type"`
	Key           string `json:"key"`
	Value         string `json:"value"`
}

type apiValue struct {
	ID            int64  `json:"id"`
	IntegrationID int64  `json:"integration_id"`
	Name          string `json:"name"`
	ValueSource   string `json:"value_source"`
	BodyDataType  string `json:"body_data_type"`
	Key           string `json:"key"`
	Variable      string `json:"variable"`
}

var aliasURL = regexp.MustCompile(`^(.*)/api/integrations/([A-Za-z0-9_-]{16,})$`)

// aliasOf checks an alias URL's shape and returns the alias in it.
func aliasOf(t *testing.T, e *apiEnv, a apiAlias) string {
	t.Helper()
	m := aliasURL.FindStringSubmatch(a.URL)
	if a.ID == 0 || m == nil || m[1] != e.opts.PublicURL {
		t.Fatalf("alias %+v: want id and <public URL>/api/integrations/<16+ URL-safe characters>", a)
	}
	return m[2]
}

func TestIntegrations_lifecycleWithAliasesMatchersValuesAndRefs(t *testing.T) {
	e := startEnv(t)
	p := e.newSchedintProject(t, "Integrations")
	_, tplID := e.seedTemplate(t, p.obj, "Deploy", "")
	_, keyID := e.seedKey(t, p.obj, bastionv1.KeyTypeLoginPassword, "lifecycle-secret")

	var in apiIntegration
	p.b.must("POST", p.base+"/integrations", map[string]any{"name": " Deploy hook ", "template_id": tplID, "auth_method": "github",
		"auth_secret_id": keyID, "task_params": map[string]any{"message": "from GitHub"}}, http.StatusCreated, &in)
	if in.ID == 0 || in.Name != "Deploy hook" || in.ProjectID != p.id || in.TemplateID == nil || *in.TemplateID != tplID ||
		in.AuthMethod != "github" || in.AuthSecretID == nil || *in.AuthSecretID != keyID || in.Searchable ||
		string(in.TaskParams) != `{"message":"from GitHub"}` {
		t.Fatalf("created %+v (task_params %s)", in, in.TaskParams)
	}
	path := fmt.Sprintf("%s/integrations/%d", p.base, in.ID)
	var list []apiIntegration
	p.b.must("GET", p.base+"/integrations", nil, http.StatusOK, &list)
	if len(list) != 1 || list[0].ID != in.ID {
		t.Fatalf("integrations = %+v", list)
	}

	// PUT: searchable on, template cleared (docs/features.md §5: clearable).
	p.b.must("PUT", path, map[string]any{"id": in.ID, "name": "Deploy hook", "template_id": nil, "auth_method": "github",
		"auth_secret_id": keyID, "searchable": true}, http.StatusNoContent, nil)
	var got apiIntegration
	p.b.must("GET", path, nil, http.StatusOK, &got)
	if !got.Searchable || got.TemplateID != nil || string(got.TaskParams) != `{}` {
		t.Fatalf("after PUT, integration = %+v (task_params %s)", got, got.TaskParams)
	}

	// Aliases: two of the integration, one of the project, each random.
	var a1, a2, pa apiAlias
	p.b.must("POST", path+"/aliases", nil, http.StatusCreated, &a1)
	p.b.must("POST", path+"/aliases", nil, http.StatusCreated, &a2)
	p.b.must("POST", p.base+"/integrations/aliases", nil, http.StatusCreated, &pa)
	seen := map[string]bool{}
	for _, a := range []apiAlias{a1, a2, pa} {
		alias := aliasOf(t, e, a)
		if seen[alias] || len(alias) < 16 {
			t.Fatalf("alias %q repeats or is short", alias)
		}
		seen[alias] = true
	}
	var aliases []apiAlias
	p.b.must("GET", path+"/aliases", nil, http.StatusOK, &aliases)
	if len(aliases) != 2 || aliases[0] != a1 || aliases[1] != a2 {
		t.Fatalf("the integration's aliases = %+v", aliases)
	}
	p.b.must("GET", p.base+"/integrations/aliases", nil, http.StatusOK, &aliases)
	if len(aliases) != 1 || aliases[0] != pa {
		t.Fatalf("the project's aliases = %+v", aliases)
	}
	// An alias is deleted only through its own scope.
	if code, _ := p.b.call("DELETE", fmt.Sprintf("%s/aliases/%d", path, pa.ID), nil); code != http.StatusNotFound {
		t.Fatalf("deleting the project alias through the integration = %d", code)
	}
	if code, _ := p.b.call("DELETE", fmt.Sprintf("%s/integrations/aliases/%d", p.base, a1.ID), nil); code != http.StatusNotFound {
		t.Fatalf("deleting an integration's alias through the project = %d", code)
	}
	p.b.must("DELETE", fmt.Sprintf("%s/aliases/%d", path, a1.ID), nil, http.StatusNoContent, nil)
	p.b.must("GET", path+"/aliases", nil, http.StatusOK, &aliases)
	if len(aliases) != 1 || aliases[0] != a2 {
		t.Fatalf("after delete, aliases = %+v", aliases)
	}

	// Matchers.
	var m apiMatcher
	p.b.must("POST", path+"/matchers", map[string]any{"integration_id": in.ID, "name": "on main", "match_type": "body",
		"body_data_type": "json", "key": "ref", "method": "equals", "value": "refs/heads/main"}, http.StatusCreated, &m)
	if m.ID == 0 || m.IntegrationID != in.ID || m.Name != "on main" || m.Key != "ref" || m.Value != "refs/heads/main" {
		t.Fatalf("matcher = %+v", m)
	}
	p.b.must("PUT", fmt.Sprintf("%s/matchers/%d", path, m.ID), map[string]any{"id": m.ID, "name": "a push", "match_type": "header",
		"body_data_type": "json", "key": "X-GitHub-Event", "method": "equals", "value": "push"}, http.StatusNoContent, nil)
	var matchers []apiMatcher
	p.b.must("GET", path+"/matchers", nil, http.StatusOK, &matchers)
	want := apiMatcher{ID: m.ID, IntegrationID: in.ID, Name: "a push", MatchType: "header", Method: "equals", Key: "X-GitHub-Event", Value: "push"}
	if len(matchers) != 1 || matchers[0] != want {
		t.Fatalf("matchers = %+v, want [%+v] (a header matcher has no body data type)", matchers, want)
	}
	if code, _ := p.b.call("PUT", path+"/matchers/999999", map[string]any{"name": "x", "match_type": "header", "key": "k", "method": "equals", "value": "v"}); code != http.StatusNotFound {
		t.Fatalf("PUT an unknown matcher = %d", code)
	}

	// Extracted values.
	var v apiValue
	p.b.must("POST", path+"/values", map[string]any{"name": "commit", "value_source": "body", "body_data_type": "json",
		"key": "commits.0.id", "variable": "COMMIT"}, http.StatusCreated, &v)
	if v.ID == 0 || v.IntegrationID != in.ID || v.Variable != "COMMIT" {
		t.Fatalf("value = %+v", v)
	}
	p.b.must("PUT", fmt.Sprintf("%s/values/%d", path, v.ID), map[string]any{"name": "commit id", "value_source": "body", "body_data_type": "json",
		"key": "head_commit.id", "variable": "COMMIT"}, http.StatusNoContent, nil)
	var values []apiValue
	p.b.must("GET", path+"/values", nil, http.StatusOK, &values)
	if len(values) != 1 || values[0].Name != "commit id" || values[0].Key != "head_commit.id" || values[0].ID != v.ID {
		t.Fatalf("values = %+v", values)
	}

	// Refs: what the integration holds.
	var refs struct {
		Matchers []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"matchers"`
		Values []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"values"`
	}
	p.b.must("GET", path+"/refs", nil, http.StatusOK, &refs)
	if len(refs.Matchers) != 1 || refs.Matchers[0].ID != m.ID || refs.Matchers[0].Name != "a push" ||
		len(refs.Values) != 1 || refs.Values[0].ID != v.ID || refs.Values[0].Name != "commit id" {
		t.Fatalf("refs = %+v", refs)
	}

	p.b.must("DELETE", fmt.Sprintf("%s/matchers/%d", path, m.ID), nil, http.StatusNoContent, nil)
	p.b.must("DELETE", fmt.Sprintf("%s/values/%d", path, v.ID), nil, http.StatusNoContent, nil)
	p.b.must("GET", path+"/matchers", nil, http.StatusOK, &matchers)
	p.b.must("GET", path+"/values", nil, http.StatusOK, &values)
	if len(matchers) != 0 || len(values) != 0 {
		t.Fatalf("after deletes: matchers %+v, values %+v", matchers, values)
	}
	if code, _ := p.b.call("DELETE", fmt.Sprintf("%s/matchers/%d", path, m.ID), nil); code != http.StatusNotFound {
		t.Fatalf("deleting a matcher twice = %d", code)
	}

	// Deleting the integration deletes its aliases, not the project's.
	p.b.must("DELETE", path, nil, http.StatusNoContent, nil)
	if code, _ := p.b.call("GET", path, nil); code != http.StatusNotFound {
		t.Fatalf("GET a deleted integration = %d", code)
	}
	left := &bastionv1.IntegrationAliasList{}
	if err := e.K8s.List(t.Context(), left, client.InNamespace(p.ns)); err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, a := range left.Items {
		if a.DeletionTimestamp.IsZero() {
			live = append(live, a.Spec.Alias)
		}
	}
	if len(live) != 1 || live[0] != aliasOf(t, e, pa) {
		t.Fatalf("aliases left after deleting the integration: %d", len(live))
	}

	events, err := e.Store.Events(t.Context(), []int64{p.id}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var descriptions []string
	for _, ev := range events {
		descriptions = append(descriptions, ev.Description)
		for alias := range seen {
			if strings.Contains(ev.Description+ev.ObjectName, alias) {
				t.Errorf("event %q names an alias", ev.Description)
			}
		}
	}
	all := strings.Join(descriptions, "\n")
	for _, want := range []string{"Integration Deploy hook created", "Integration Deploy hook updated", "Integration Deploy hook alias created",
		"Alias of the project created", "Integration Deploy hook matcher on main created", "Integration Deploy hook matcher a push updated",
		"Integration Deploy hook extracted value commit id deleted", "Integration Deploy hook deleted"} {
		if !strings.Contains(all, want) {
			t.Errorf("no event %q in:\n%s", want, all)
		}
	}
}
