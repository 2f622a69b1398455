package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

var builtConsole = fstest.MapFS{
	"index.html":         {Data: []byte(`<!doctype html><div id="root"></div>`)},
	"assets/app-1a2b.js": {Data: []byte(`console.log("app")`)},
	"favicon.svg":        {Data: []byte(`<svg/>`)},
	".keep":              {Data: nil},
}

func serve(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

func TestInfo_reportsVersionAndWebHost(t *testing.T) {
	h := New(Options{Version: "1.2.3", PublicURL: "http://bastion.example", Console: builtConsole})
	rec := serve(t, h, http.MethodGet, "/api/info")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["version"] != "1.2.3" || got["web_host"] != "http://bastion.example" {
		t.Fatalf("info = %v", got)
	}
	for _, key := range []string{"ansible", "use_remote_runner", "auth_methods"} {
		if _, ok := got[key]; !ok {
			t.Errorf("info lacks %q (api-contract.md)", key)
		}
	}
}

func TestPing_answersPong(t *testing.T) {
	rec := serve(t, New(Options{Console: builtConsole}), http.MethodGet, "/api/ping")
	if rec.Code != http.StatusOK || rec.Body.String() != "pong" {
		t.Fatalf("ping = %d %q", rec.Code, rec.Body.String())
	}
}

func TestAPI_unknownRoutesAnswerJSONErrors(t *testing.T) {
	h := New(Options{Console: builtConsole})
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{http.MethodGet, "/api/nothing-here", http.StatusNotFound},
		{http.MethodGet, "/api/project/1/nothing", http.StatusNotFound},
		{http.MethodPost, "/api/info", http.StatusMethodNotAllowed},
	} {
		rec := serve(t, h, tc.method, tc.path)
		var body errorBody
		if rec.Code != tc.code || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.Error == "" {
			t.Errorf("%s %s = %d %q, want %d with {\"error\": ...}", tc.method, tc.path, rec.Code, rec.Body.String(), tc.code)
		}
	}
}

func TestConsole_servesIndexForClientRoutesAndCachesAssets(t *testing.T) {
	h := New(Options{Console: builtConsole})
	for _, path := range []string{"/", "/project/1/history", "/auth/login", "/index.html"} {
		rec := serve(t, h, http.MethodGet, path)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `<div id="root">`) {
			t.Errorf("%s = %d %q, want index.html", path, rec.Code, rec.Body.String())
		}
		if cc := rec.Header().Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("%s Cache-Control = %q, want no-cache (index.html must not be cached)", path, cc)
		}
	}

	rec := serve(t, h, http.MethodGet, "/assets/app-1a2b.js")
	if rec.Code != http.StatusOK || rec.Body.String() != `console.log("app")` {
		t.Fatalf("asset = %d %q", rec.Code, rec.Body.String())
	}
	if cc := rec.Header().Get("Cache-Control"); !strings.Contains(cc, "max-age=31536000") || !strings.Contains(cc, "immutable") {
		t.Fatalf("asset Cache-Control = %q", cc)
	}
	if rec := serve(t, h, http.MethodGet, "/favicon.svg"); rec.Code != http.StatusOK || rec.Body.String() != "<svg/>" {
		t.Fatalf("top-level file = %d %q", rec.Code, rec.Body.String())
	}
}

func TestConsole_missingAssetIs404NotIndex(t *testing.T) {
	h := New(Options{Console: builtConsole})
	for _, path := range []string{"/assets/gone-9z9z.js", "/assets/", "/assets"} {
		rec := serve(t, h, http.MethodGet, path)
		if strings.Contains(rec.Body.String(), `<div id="root">`) {
			t.Errorf("%s answered index.html", path)
		}
		if rec.Code == http.StatusOK {
			t.Errorf("%s = 200, want an error", path)
		}
	}
}

func TestConsole_pathsNeverLeaveTheConsole(t *testing.T) {
	h := New(Options{Console: builtConsole})
	for _, path := range []string{"/assets/../../etc/passwd", "/../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd"} {
		rec := serve(t, h, http.MethodGet, path)
		if strings.Contains(rec.Body.String(), "root:") {
			t.Errorf("%s served a file outside the console", path)
		}
	}
}

func TestConsole_hidesDotFiles(t *testing.T) {
	rec := serve(t, New(Options{Console: builtConsole}), http.MethodGet, "/.keep")
	if !strings.Contains(rec.Body.String(), `<div id="root">`) {
		t.Fatalf("/.keep served the placeholder file instead of the app: %q", rec.Body.String())
	}
}

func TestConsole_notBuiltExplainsHowToBuildIt(t *testing.T) {
	h := New(Options{Console: fstest.MapFS{".keep": {}}})
	rec := serve(t, h, http.MethodGet, "/")
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "make build") {
		t.Fatalf("unbuilt console = %d %q", rec.Code, rec.Body.String())
	}
	// The API still works without a console.
	if rec := serve(t, h, http.MethodGet, "/api/ping"); rec.Code != http.StatusOK {
		t.Fatalf("ping without console = %d", rec.Code)
	}
}

func TestConsole_refusesWrites(t *testing.T) {
	rec := serve(t, New(Options{Console: builtConsole}), http.MethodPost, "/project/1/history")
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST to a console route = %d", rec.Code)
	}
}
