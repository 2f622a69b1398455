package apiserver

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

var builtConsole = fstest.MapFS{
	"index.html":         {Data: []byte(`<!doctype html><div id="root"></div>`)},
	"assets/app-1a2b.js": {Data: []byte(`console.log("app")`)},
	// The build writes a gzip next to each asset (console/vite.config.ts).
	"assets/app-1a2b.js.gz": {Data: gzipOf(`console.log("app")`)},
	"assets/plain-3c4d.css": {Data: []byte(`body{}`)},
	"favicon.svg":           {Data: []byte(`<svg/>`)},
	".keep":                 {Data: nil},
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

func gzipOf(text string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(text))
	_ = zw.Close()
	return buf.Bytes()
}

func TestConsole_sendsTheBuiltGzipToBrowsersThatTakeIt(t *testing.T) {
	h := New(Options{Console: builtConsole})
	get := func(path, acceptEncoding string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", acceptEncoding)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}

	rec := get("/assets/app-1a2b.js", "gzip, deflate, br")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("asset with Accept-Encoding gzip = %d, Content-Encoding %q", rec.Code, rec.Header().Get("Content-Encoding"))
	}
	if !bytes.Equal(rec.Body.Bytes(), builtConsole["assets/app-1a2b.js.gz"].Data) {
		t.Fatal("the body is not the gzip the build wrote")
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := io.ReadAll(zr); err != nil || string(plain) != `console.log("app")` {
		t.Fatalf("decompressed = %q, %v", plain, err)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("Content-Type = %q, want the script's type, not gzip's", ct)
	}
	if vary := rec.Header().Get("Vary"); vary != "Accept-Encoding" {
		t.Errorf("Vary = %q: a cache must not hand the gzip to a browser that did not ask for it", vary)
	}
	if cc := rec.Header().Get("Cache-Control"); !strings.Contains(cc, "immutable") {
		t.Errorf("Cache-Control = %q", cc)
	}

	for _, accept := range []string{"", "identity", "gzip;q=0"} {
		rec := get("/assets/app-1a2b.js", accept)
		if rec.Header().Get("Content-Encoding") != "" || rec.Body.String() != `console.log("app")` {
			t.Errorf("Accept-Encoding %q: got encoding %q, body %q, want the file as it is", accept, rec.Header().Get("Content-Encoding"), rec.Body.String())
		}
	}
	// An asset without a gzip beside it goes as it is.
	if rec := get("/assets/plain-3c4d.css", "gzip"); rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "" || rec.Body.String() != "body{}" {
		t.Errorf("asset without .gz = %d, encoding %q, body %q", rec.Code, rec.Header().Get("Content-Encoding"), rec.Body.String())
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
