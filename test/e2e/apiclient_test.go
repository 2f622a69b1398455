package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// apiClient is a signed-in caller of a running bastion's /api, as a script
// or the console would be: a cookie jar, JSON in and out.
type apiClient struct {
	t    *testing.T
	base string
	c    *http.Client
}

// signedIn signs in to base as login and returns a client that carries the
// session.
func signedIn(t *testing.T, base, login, password string) *apiClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &apiClient{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	a.must("POST", "/api/auth/login", map[string]string{"auth": login, "password": password}, http.StatusNoContent, nil)
	return a
}

// call sends a request (body JSON-encoded when not nil) and returns the
// status and the body.
func (a *apiClient) call(method, path string, body any) (int, []byte) {
	a.t.Helper()
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(a.t.Context(), method, a.base+path, r)
	if err != nil {
		a.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.c.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// must sends a request, insists on the status and decodes the answer into
// out when out is not nil.
func (a *apiClient) must(method, path string, body any, want int, out any) {
	a.t.Helper()
	code, data := a.call(method, path, body)
	if code != want {
		a.t.Fatalf("%s %s = %d %s, want %d", method, path, code, data, want)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			a.t.Fatalf("%s %s: decoding %s: %v", method, path, data, err)
		}
	}
}

// idNamed finds the id of the item called name in a list answer.
func (a *apiClient) idNamed(path, name string) int64 {
	a.t.Helper()
	var items []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	a.must("GET", path, nil, http.StatusOK, &items)
	for _, it := range items {
		if it.Name == name {
			return it.ID
		}
	}
	a.t.Fatalf("GET %s has no item named %q: %+v", path, name, items)
	return 0
}

// websocket opens /api/ws with the client's session cookie.
func (a *apiClient) websocket() *websocket.Conn {
	a.t.Helper()
	wsURL := "ws" + strings.TrimPrefix(a.base, "http") + "/api/ws"
	header := http.Header{}
	for _, c := range a.c.Jar.Cookies(mustURL(a.t, a.base)) {
		header.Add("Cookie", c.Name+"="+c.Value)
	}
	header.Set("Origin", a.base)
	conn, resp, err := websocket.DefaultDialer.DialContext(a.t.Context(), wsURL, header)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		a.t.Fatalf("opening %s: %v (status %d)", wsURL, err, status)
	}
	a.t.Cleanup(func() { conn.Close() })
	return conn
}

// wsFrame is either frame of api-contract.md's websocket.
type wsFrame struct {
	Type      string  `json:"type"`
	TaskID    int64   `json:"task_id"`
	ProjectID int64   `json:"project_id"`
	Status    string  `json:"status"`
	Output    string  `json:"output"`
	Version   *string `json:"version"`
}

// follow reads frames of the task until an update says it finished, and
// returns its final status and the log lines seen, in order.
func follow(t *testing.T, conn *websocket.Conn, projectID, taskID int64, limit time.Duration) (status string, lines []string) {
	t.Helper()
	return followUpdates(t, conn, projectID, taskID, limit, nil)
}

func itoa(id int64) string { return fmt.Sprint(id) }

// localProject is a project made as a user makes one to run code from a
// local repository: a key "none", the repository, a static inventory
// "here" and an empty environment "empty".
type localProject struct {
	ID                                      int64
	Path                                    string // /api/project/{id}
	Key, Repository, Inventory, Environment int64
}

// newLocalProject makes such a project; inventory is the inventory's text.
func (a *apiClient) newLocalProject(name, repoPath, inventory string) localProject {
	a.t.Helper()
	var created struct {
		ID int64 `json:"id"`
	}
	a.must("POST", "/api/projects", map[string]any{"name": name}, http.StatusCreated, &created)
	p := localProject{ID: created.ID, Path: "/api/project/" + itoa(created.ID)}
	a.must("POST", p.Path+"/keys", map[string]any{"name": "none", "type": "none"}, http.StatusNoContent, nil)
	p.Key = a.idNamed(p.Path+"/keys", "none")
	a.must("POST", p.Path+"/repositories", map[string]any{"name": "code", "git_url": repoPath, "git_branch": "", "ssh_key_id": p.Key},
		http.StatusNoContent, nil)
	p.Repository = a.idNamed(p.Path+"/repositories", "code")
	var inv struct {
		ID int64 `json:"id"`
	}
	a.must("POST", p.Path+"/inventory", map[string]any{"name": "here", "type": "static", "inventory": inventory, "ssh_key_id": p.Key},
		http.StatusCreated, &inv)
	p.Inventory = inv.ID
	a.must("POST", p.Path+"/environment", map[string]any{"name": "empty", "json": "{}", "env": "{}"}, http.StatusNoContent, nil)
	p.Environment = a.idNamed(p.Path+"/environment", "empty")
	return p
}
