package apiserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// FuzzWebhookMatch_pathsFindWhatWasPutThereAndValuesStayJSON builds a body
// with a value at a path and checks the matcher and the extractor against
// it: the path finds exactly that value, every extracted value is valid
// JSON, equals/unequals are opposites, and arbitrary bodies (not JSON,
// deep, huge numbers) never break them.
func FuzzWebhookMatch_pathsFindWhatWasPutThereAndValuesStayJSON(f *testing.F) {
	f.Add("ref", "refs/heads/main", []byte(`{"ref":"refs/heads/main","commits":[{"id":"abc"}]}`), "commits.0.id")
	f.Add("a.b", "x", []byte(`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`), "0.0.0.0.0")
	f.Add("", "", []byte("\xff\x00 not json"), "")
	f.Add("n", "1e999", []byte(`{"n": 1e999, "m": -0, "big": 123456789012345678901234567890}`), "big")
	f.Add("ü", "$(touch /tmp/x)", []byte(`{"a": {"a": {"a": null}}}`), "a.a.a")
	f.Add("k", "v", []byte(`{"k": "v", "k": "w"}`), "k.-1")
	f.Add("0", "\u2028", []byte(`{"0": [1, 2], "1": {}}`), "0.99999999999999999999")
	f.Fuzz(func(t *testing.T, key, value string, body []byte, path string) {
		// 1. A value put at a path is found there, as a string.
		if key != "" && !strings.Contains(key, ".") && utf8.ValidString(key) && utf8.ValidString(value) {
			doc, _ := json.Marshal(map[string]any{"x": map[string]any{key: []string{value}}})
			raw, found := jsonPath(doc, "x."+key+".0")
			if !found || textOf(raw) != value {
				t.Fatalf("put %q at x.%s.0 of %s, found %v %q", value, key, doc, found, raw)
			}
		}
		// 2. Any body, any path: a found value is valid JSON.
		req := webhookRequest{header: http.Header{"X-Event": {value}}, body: body}
		if raw, found := jsonPath(body, path); found && !json.Valid(raw) {
			t.Fatalf("path %q of %q found invalid JSON %q", path, body, raw)
		}
		// 3. Matchers: equals and unequals are opposites, contains of ""
		// always holds; header matchers read the header.
		for _, m := range []bastionv1.IntegrationMatcher{
			{Name: "j", MatchType: sourceBody, BodyDataType: dataJSON, Key: path, Value: value},
			{Name: "s", MatchType: sourceBody, BodyDataType: dataString, Key: path, Value: value},
			{Name: "h", MatchType: sourceHeader, Key: "X-Event", Value: value},
		} {
			m.Method = "equals"
			eq := holds(m, req)
			m.Method = "unequals"
			if holds(m, req) == eq {
				t.Fatalf("matcher %+v: equals and unequals agree on %q", m, body)
			}
			m.Method, m.Value = "contains", ""
			if !holds(m, req) {
				t.Fatalf("matcher %+v: contains \"\" does not hold", m)
			}
		}
		// A matcher's value comes from JSON, so it is valid UTF-8; a header
		// that is not never equals one.
		if utf8.ValidString(value) && !holds(bastionv1.IntegrationMatcher{MatchType: sourceHeader, Key: "X-Event", Method: "equals", Value: value}, req) {
			t.Fatalf("the header X-Event: %q does not equal itself", value)
		}
		if !holds(bastionv1.IntegrationMatcher{MatchType: sourceBody, BodyDataType: dataString, Method: "equals", Value: string(body)}, req) && json.Valid(jsonString(string(body))) && textOf(jsonString(string(body))) == string(body) {
			t.Fatalf("the whole body %q does not equal itself", body)
		}
		// 4. Extracted values: valid JSON, only variables that were found.
		in := &bastionv1.Integration{Spec: bastionv1.IntegrationSpec{ExtractValues: []bastionv1.IntegrationExtractValue{
			{Variable: "J", ValueSource: sourceBody, BodyDataType: dataJSON, Key: path},
			{Variable: "S", ValueSource: sourceBody, BodyDataType: dataString, Key: path},
			{Variable: "H", ValueSource: sourceHeader, Key: "X-Event"},
			{Variable: "M", ValueSource: sourceHeader, Key: "X-Missing"},
		}}}
		got := extractValues(in, req)
		for k, raw := range got {
			if !json.Valid(raw) {
				t.Fatalf("extracted %s = %q, not JSON", k, raw)
			}
		}
		if _, ok := got["M"]; ok {
			t.Fatal("a missing header was extracted")
		}
		var s string
		// Invalid UTF-8 is carried as U+FFFD; valid text byte for byte.
		if json.Unmarshal(got["S"], &s) != nil || utf8.Valid(body) && !bytes.Equal([]byte(s), body) {
			t.Fatalf("the whole body %q extracted as %q", body, got["S"])
		}
	})
}

// FuzzWebhookAuth_onlyTheRightSignatureOrTokenPasses: a signature or token
// made without the secret never authenticates, the right one always does,
// and an empty secret proves nothing.
func FuzzWebhookAuth_onlyTheRightSignatureOrTokenPasses(f *testing.F) {
	f.Add([]byte("s3cret"), []byte(`{"a":1}`), "deadbeef")
	f.Add([]byte(""), []byte(""), "")
	f.Add([]byte("\x00"), []byte("\xff"), "sha256=")
	f.Add([]byte("k"), []byte("body"), strings.Repeat("0", 64))
	f.Fuzz(func(t *testing.T, secret, body []byte, guess string) {
		right := sign(string(secret), string(body))
		for _, method := range []bastionv1.IntegrationAuthMethod{bastionv1.AuthGitHub, bastionv1.AuthHMAC, bastionv1.AuthToken} {
			header := "X-Auth"
			req := func(value string) webhookRequest {
				h := http.Header{}
				if method == bastionv1.AuthGitHub {
					h.Set(githubSignatureHeader, value)
				} else {
					h.Set(header, value)
				}
				return webhookRequest{header: h, body: body}
			}
			good := right
			switch method {
			case bastionv1.AuthGitHub:
				good = "sha256=" + right
			case bastionv1.AuthToken:
				good = string(secret)
			}
			if len(secret) == 0 {
				if authentic(method, header, secret, req(good)) || authentic(method, header, secret, req(guess)) {
					t.Fatalf("%s: an empty secret authenticated", method)
				}
				continue
			}
			if !authentic(method, header, secret, req(good)) && !strings.ContainsAny(good, "\r\n\x00") && strings.TrimSpace(good) == good {
				t.Fatalf("%s: the right proof %q for secret %q was refused", method, good, secret)
			}
			sameProof := strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(guess, "sha256=")), right) || guess == good
			if !sameProof && authentic(method, header, secret, req(guess)) {
				t.Fatalf("%s: the guess %q authenticated for secret %q", method, guess, secret)
			}
		}
	})
}
