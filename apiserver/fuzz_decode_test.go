package apiserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz targets for the API's bodies: every request type a handler decodes
// goes through the real decode, then through the validator that needs no
// cluster. `go test` runs them over testdata/fuzz; `make fuzz` explores.

// requestTypes are the bodies the handlers decode, by name.
var requestTypes = []func() any{
	func() any { return &loginRequest{} }, func() any { return &userRequest{} },
	func() any { return &passwordRequest{} }, func() any { return &projectRequest{} },
	func() any { return &memberRequest{} }, func() any { return &keyJSON{} },
	func() any { return &repositoryJSON{} }, func() any { return &inventoryJSON{} },
	func() any { return &environmentJSON{} }, func() any { return &templateRequest{} },
	func() any { return &taskRequest{} }, func() any { return &stopRequest{} },
	func() any { return &viewRequest{} }, func() any { return &map[string]int32{} },
	func() any { return &scheduleRequest{} }, func() any { return &integrationJSON{} },
	func() any { return &matcherRequest{} }, func() any { return &valueRequest{} },
}

// decodeBody runs decode on body and returns the answer's message ("" when
// decode accepted it). It fails the test unless a refusal is a clean
// 400 {"error": "..."}.
func decodeBody(t *testing.T, body []byte, v any) (ok bool, msg string) {
	t.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	if decode(w, r, v) {
		if w.Body.Len() != 0 {
			t.Fatalf("decode accepted %q but wrote %q", body, w.Body.String())
		}
		return true, ""
	}
	return false, cleanError(t, w, body)
}

// cleanError insists on a 400 whose body is exactly {"error": "<text>"}:
// valid UTF-8, one line, and no Go internals (package paths, "json:").
func cleanError(t *testing.T, w *httptest.ResponseRecorder, input []byte) string {
	t.Helper()
	if w.Code != http.StatusBadRequest {
		t.Fatalf("input %q answered %d %s, want 400", input, w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("input %q answered Content-Type %q", input, ct)
	}
	var body map[string]any
	dec := json.NewDecoder(w.Body)
	if err := dec.Decode(&body); err != nil || len(body) != 1 {
		t.Fatalf("input %q answered %v (%v), want {\"error\": ...}", input, body, err)
	}
	msg, _ := body["error"].(string)
	switch {
	case msg == "", !utf8.ValidString(msg), strings.ContainsAny(msg, "\n\r\x00"):
		t.Fatalf("input %q answered the error %q: empty, not UTF-8 or not one line", input, msg)
	case strings.Contains(msg, "apiserver.") || strings.Contains(msg, "json: ") || strings.Contains(msg, "v1alpha1"):
		t.Fatalf("input %q answered %q, which names Go internals", input, msg)
	}
	return msg
}

// literals are the string and number values in a JSON text, as far as it
// parses: what a user sends (passwords, keys, secrets), as opposed to the
// field names the server knows.
func literals(data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []string
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		switch v := tok.(type) {
		case string:
			out = append(out, v)
		case json.Number:
			out = append(out, string(v))
		}
	}
}

// vocabulary is every word a decode error may legitimately hold: the
// field names of the request types and the fixed phrases.
func vocabulary() string {
	var b strings.Builder
	b.WriteString("invalid JSON: the body is empty, more than one value in the body, must be a JSON object " +
		"not a number string boolean array object null integer whole number. the body is larger than 1048576 bytes " +
		"unexpected end of JSON input invalid character looking for beginning of value after top-level value " +
		"after object key:value pair after array element in string literal escape code in numeric literal " +
		"in literal true false null (expecting) a string, an array, an object, a boolean, a number, a whole number, " +
		"a value must be the body must be a JSON object, ")
	var walk func(reflect.Type)
	seen := map[reflect.Type]bool{}
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			b.WriteString(strings.Split(f.Tag.Get("json"), ",")[0] + " ")
			walk(f.Type)
		}
	}
	for _, newReq := range requestTypes {
		walk(reflect.TypeOf(newReq()))
	}
	return b.String()
}

// FuzzDecode_everyRequestBodyAnswersACleanErrorWithoutEchoingValues feeds
// one body to every request type. A refusal is a clean 400 that repeats
// none of the values the body carried (a password, a private key, a
// secret number): only field names and fixed words.
func FuzzDecode_everyRequestBodyAnswersACleanErrorWithoutEchoingValues(f *testing.F) {
	for _, seed := range []string{
		`{"name":"x"}`, `{"password": 12345678}`, `{"id": 1e400}`, `{"id": 99999999999999999999}`,
		`[]`, `null`, `"just a string"`, `{"name": "a"} {"name": "b"}`, `{"name": "\u0000"}`,
		`{"survey_vars": [{"name": {"deep": [[[[[[[]]]]]]]}}]}`, "{\"name\": \"\xff\xfe\"}",
		`{"position": -2147483649}`, `{"1": 4294967296}`, `{"private_key": ["-----BEGIN"]}`,
	} {
		f.Add([]byte(seed))
	}
	vocab := vocabulary()
	f.Fuzz(func(t *testing.T, body []byte) {
		values := literals(body)
		for _, newReq := range requestTypes {
			ok, msg := decodeBody(t, body, newReq())
			if ok {
				continue
			}
			for _, v := range values {
				if len(v) >= 6 && strings.Contains(msg, v) && !strings.Contains(vocab, v) {
					t.Fatalf("decoding %q into %T answered %q, which echoes the value %q", body, newReq(), msg, v)
				}
			}
		}
	})
}

// FuzzDecode_acceptedBodiesRoundTrip: what decode accepts, encoded again
// and decoded, is the same request (nothing is lost or invented).
func FuzzDecode_acceptedBodiesRoundTrip(f *testing.F) {
	for _, seed := range []string{
		`{"name":"n","git_url":"https://h/r.git","git_branch":"main","ssh_key_id":1}`,
		`{"name":"t","playbook":"site.yml","survey_vars":[{"name":"a","title":"A","type":"enum","values":[{"name":"x","value":"1"}]}]}`,
		`{"template_id":1,"environment":"{\"a\":\"$(id)\"}","arguments":"[\"; touch x\"]"}`,
		`{"7": 3, "8": 0}`, `{"auth":"ü","password":"` + "\u202e" + `"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, newReq := range requestTypes {
			first := newReq()
			if ok, _ := decodeBody(t, body, first); !ok {
				continue
			}
			again, err := json.Marshal(first)
			if err != nil {
				t.Fatalf("%T decoded from %q does not encode: %v", first, body, err)
			}
			second := newReq()
			if ok, msg := decodeBody(t, again, second); !ok {
				t.Fatalf("%T: %q decoded, its encoding %q does not: %s", first, body, again, msg)
			}
			// Compared as JSON: a json.RawMessage field reads an absent
			// value as nil and writes it as null, which mean the same.
			third, _ := json.Marshal(second)
			if !bytes.Equal(again, third) {
				t.Fatalf("%T changed in a round trip: %s, then %s", first, again, third)
			}
		}
	})
}

// TestDecode_errorsNameTheFieldNotTheValue pins the messages the fuzz
// targets found echoing a number or naming a Go type.
func TestDecode_errorsNameTheFieldNotTheValue(t *testing.T) {
	for _, tc := range []struct {
		body string
		into any
		want string
	}{
		{`{"password": 12345678}`, &loginRequest{}, "invalid JSON: password must be a string, not a number"},
		{`{"ssh_key_id": 99999999999999999999}`, &repositoryJSON{}, "invalid JSON: ssh_key_id must be a whole number, not a number"},
		{`[1, 2]`, &loginRequest{}, "invalid JSON: the body must be a JSON object, not an array"},
		{`{"survey_vars": {"a": 1}}`, &templateRequest{}, "invalid JSON: survey_vars must be an array, not an object"},
		{`{"survey_vars": [{"values": "x"}]}`, &templateRequest{}, "invalid JSON: survey_vars.values must be an array, not a string"},
		{`{"7": "x"}`, &map[string]int32{}, "invalid JSON: a value must be a whole number, not a string"},
		{`{"name": true}`, &matcherRequest{}, "invalid JSON: name must be a string, not a boolean"},
	} {
		if ok, msg := decodeBody(t, []byte(tc.body), tc.into); ok || msg != tc.want {
			t.Errorf("%s into %T = %v %q, want %q", tc.body, tc.into, ok, msg, tc.want)
		}
	}
}
