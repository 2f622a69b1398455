package runner

import (
	"encoding/pem"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// gitOverHTTPS serves the repositories under root with git's own smart
// HTTP backend, over TLS, behind basic authentication.
func gitOverHTTPS(t *testing.T, root, login, password string) *httptest.Server {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != login || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	// The runner trusts this server's certificate the way an operator
	// trusts a private CA: through the runner's own environment.
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_SSL_CAINFO", caFile)
	return srv
}

func TestRun_clonesOverHTTPSWithALoginPasswordKeyThatNeverShows(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.WriteFile("run.sh", echoArgs, true)
	srv := gitOverHTTPS(t, filepath.Dir(repo.Path), "deploy", "pa55-word-xyz")
	spec := runspec.Spec{App: "bash", Playbook: "run.sh", Arguments: []string{"over-https"},
		Repository: runspec.Repository{URL: srv.URL + "/repo", Branch: gittest.Branch, Key: &runspec.KeyRef{Secret: "login", Type: "login_password"}}}

	res, out := runTask(t, newInputs(t, spec, map[string]map[string]string{"login": {"username": "deploy", "password": "pa55-word-xyz"}}))
	if !res.Succeeded() || !contains(out, "arg:over-https") {
		t.Fatalf("%+v\n%s", res, strings.Join(out, "\n"))
	}
	if contains(out, "pa55-word-xyz") {
		t.Fatal("the password reached the output")
	}

	res, out = runTask(t, newInputs(t, spec, map[string]map[string]string{"login": {"username": "deploy", "password": "wrong-pass"}}))
	joined := strings.Join(out, "\n")
	if res.Err != nil {
		joined += "\n" + res.Err.Error()
	}
	if res.Err == nil || !strings.Contains(joined, "Authentication failed") {
		t.Fatalf("a wrong password: %+v\n%s", res, joined)
	}
	if strings.Contains(joined, "wrong-pass") {
		t.Fatal("the wrong password reached the output")
	}
}
