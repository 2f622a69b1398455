package apiserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

func sign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return hex.EncodeToString(mac.Sum(nil))
}

func TestWebhookAuth_eachMethodAcceptsOnlyTheSecret(t *testing.T) {
	const secret, body = "s3cret", `{"ref":"refs/heads/main"}`
	header := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name   string
		method bastionv1.IntegrationAuthMethod
		header string
		secret string
		h      http.Header
		want   bool
	}{
		{"none needs nothing", bastionv1.AuthNone, "", "", header(), true},
		{"github, right signature", bastionv1.AuthGitHub, "", secret, header(githubSignatureHeader, "sha256="+sign(secret, body)), true},
		{"github, other secret", bastionv1.AuthGitHub, "", secret, header(githubSignatureHeader, "sha256="+sign("other", body)), false},
		{"github, no sha256= prefix", bastionv1.AuthGitHub, "", secret, header(githubSignatureHeader, sign(secret, body)), false},
		{"github, not hex", bastionv1.AuthGitHub, "", secret, header(githubSignatureHeader, "sha256=zz"), false},
		{"github, no header", bastionv1.AuthGitHub, "", secret, header(), false},
		{"github, empty secret signs nothing", bastionv1.AuthGitHub, "", "", header(githubSignatureHeader, "sha256="+sign("", body)), false},
		{"hmac, right signature in its header", bastionv1.AuthHMAC, "X-Sig", secret, header("X-Sig", sign(secret, body)), true},
		{"hmac, prefix is not stripped", bastionv1.AuthHMAC, "X-Sig", secret, header("X-Sig", "sha256="+sign(secret, body)), false},
		{"hmac, signature in another header", bastionv1.AuthHMAC, "X-Sig", secret, header("X-Other", sign(secret, body)), false},
		{"token, equal", bastionv1.AuthToken, "X-Token", secret, header("X-Token", secret), true},
		{"token, prefix of the secret", bastionv1.AuthToken, "X-Token", secret, header("X-Token", "s3cre"), false},
		{"token, missing", bastionv1.AuthToken, "X-Token", secret, header(), false},
		{"token, empty secret", bastionv1.AuthToken, "X-Token", "", header("X-Token", ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := authentic(tt.method, tt.header, []byte(tt.secret), webhookRequest{header: tt.h, body: []byte(body)})
			if got != tt.want {
				t.Errorf("authentic = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWebhookMatch_jsonPathsHeadersAndWholeBody(t *testing.T) {
	body := `{"ref":"refs/heads/main","commits":[{"id":"abc123","n":7}],"repository":{"name":"app"},"deleted":false}`
	req := webhookRequest{header: http.Header{"X-Github-Event": {"push"}}, body: []byte(body)}
	m := func(matchType, dataType, key, method, value string) bastionv1.IntegrationMatcher {
		return bastionv1.IntegrationMatcher{Name: key, MatchType: matchType, BodyDataType: dataType, Key: key, Method: method, Value: value}
	}
	tests := []struct {
		m    bastionv1.IntegrationMatcher
		want bool
	}{
		{m("body", "json", "ref", "equals", "refs/heads/main"), true},
		{m("body", "json", "ref", "equals", "refs/heads/dev"), false},
		{m("body", "json", "commits.0.id", "equals", "abc123"), true},
		{m("body", "json", "commits.0.n", "equals", "7"), true},
		{m("body", "json", "commits.1.id", "equals", "abc123"), false},
		{m("body", "json", "commits.x.id", "equals", "abc123"), false},
		{m("body", "json", "repository.name", "contains", "ap"), true},
		{m("body", "json", "deleted", "equals", "false"), true},
		{m("body", "json", "missing", "unequals", "x"), true},
		{m("body", "json", "missing", "contains", "x"), false},
		{m("body", "json", "ref", "unequals", "refs/heads/main"), false},
		{m("body", "string", "ignored", "contains", `"name":"app"`), true},
		{m("header", "", "X-GitHub-Event", "equals", "push"), true},
		{m("header", "", "x-github-event", "equals", "push"), true},
		{m("header", "", "X-GitHub-Event", "equals", "ping"), false},
		{m("body", "json", "ref", "regex", "x"), false},
	}
	for _, tt := range tests {
		if got := holds(tt.m, req); got != tt.want {
			t.Errorf("%s %s %s %q = %v, want %v", tt.m.MatchType, tt.m.Key, tt.m.Method, tt.m.Value, got, tt.want)
		}
	}
	notJSON := webhookRequest{header: http.Header{}, body: []byte("ref=main")}
	if holds(m("body", "json", "ref", "equals", "main"), notJSON) {
		t.Error("a json matcher held on a body that is not JSON")
	}
}

func TestWebhookExtract_keepsJSONTypesAndSkipsWhatIsMissing(t *testing.T) {
	body := `{"commits":[{"id":"abc123","n":7,"tags":["a"]}]}`
	req := webhookRequest{header: http.Header{"X-Delivery": {"d-1"}}, body: []byte(body)}
	in := &bastionv1.Integration{Spec: bastionv1.IntegrationSpec{ExtractValues: []bastionv1.IntegrationExtractValue{
		{Name: "id", ValueSource: "body", BodyDataType: "json", Key: "commits.0.id", Variable: "COMMIT"},
		{Name: "n", ValueSource: "body", BodyDataType: "json", Key: "commits.0.n", Variable: "N"},
		{Name: "tags", ValueSource: "body", BodyDataType: "json", Key: "commits.0.tags", Variable: "TAGS"},
		{Name: "delivery", ValueSource: "header", Key: "X-Delivery", Variable: "DELIVERY"},
		{Name: "raw", ValueSource: "body", BodyDataType: "string", Key: "-", Variable: "RAW"},
		{Name: "absent", ValueSource: "header", Key: "X-Absent", Variable: "ABSENT"},
	}}}
	got := extractValues(in, req)
	want := map[string]string{"COMMIT": `"abc123"`, "N": `7`, "TAGS": `["a"]`, "DELIVERY": `"d-1"`, "RAW": string(jsonString(body))}
	if len(got) != len(want) {
		t.Fatalf("extracted %d values, want %d: %s", len(got), len(want), got)
	}
	for k, v := range want {
		if string(got[k]) != v {
			t.Errorf("%s = %s, want %s", k, got[k], v)
		}
	}
}

func TestWebhookTaskParams_applyAndExtractedValuesWin(t *testing.T) {
	in := &bastionv1.Integration{Spec: bastionv1.IntegrationSpec{DisplayName: "hook"}}
	in.Name = "hook"
	raw := `{"message":"from hook","debug":true,"arguments":"[\"-v\"]","environment":{"STAGE":"prod","COMMIT":"old"},"other":1}`
	params, err := taskParamsOf([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	in.Spec.TaskParams = params
	tpl := &bastionv1.Template{Spec: bastionv1.TemplateSpec{AllowOverrideArgsInTask: true, AllowOverrideExtraVarsInTask: true}}
	tpl.Name = "site"
	task, err := webhookTask(in, tpl, map[string]json.RawMessage{"COMMIT": json.RawMessage(`"new"`)})
	if err != nil {
		t.Fatal(err)
	}
	if task.Spec.Message != "from hook" || !task.Spec.Debug || len(task.Spec.Arguments) != 1 || task.Spec.Arguments[0] != "-v" {
		t.Errorf("task params not applied: %+v", task.Spec)
	}
	if got := string(task.Spec.ExtraVars.Raw); got != `{"COMMIT":"new","STAGE":"prod"}` {
		t.Errorf("extraVars = %s", got)
	}
	if task.Spec.IntegrationRef == nil || task.Spec.IntegrationRef.Name != "hook" || task.Spec.TemplateRef.Name != "site" {
		t.Errorf("references = %+v %+v", task.Spec.IntegrationRef, task.Spec.TemplateRef)
	}
	for _, bad := range []string{`[1]`, `"x"`, `{"arguments":{"a":1}}`, `{"environment":"not json"}`, `{"debug":"yes"}`} {
		if _, err := taskParamsOf([]byte(bad)); err == nil {
			t.Errorf("task_params %s accepted", bad)
		}
	}
}
