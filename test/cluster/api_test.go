package cluster

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// api is a signed-in caller of the installed manager's /api.
type api struct {
	t    *testing.T
	base string
	c    *http.Client
	// last is the last answer's status line and headers, for a failure to
	// say who answered (every answer of Bastion's /api has a JSON body).
	last string
}

func signIn(t *testing.T, base, login, password string) *api {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	// A transport of its own: its connections are only ever this caller's.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	a := &api{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: transport}}
	// The manager creates the initial administrator just after it starts
	// serving: a 401 right after a (re)start is retried for a while.
	deadline := time.Now().Add(time.Minute)
	for {
		code, data, err := a.call("POST", "/api/auth/login", map[string]string{"auth": login, "password": password})
		if err == nil && code == http.StatusNoContent {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("signing in as %s: %d %s %v (answered by: %s)", login, code, data, err, a.last)
		}
		// The next try on a new connection: kube-proxy's rewrite of the
		// Service address is decided at a connection's first packet.
		a.c.CloseIdleConnections()
		time.Sleep(time.Second)
	}
}

// call sends a request (body JSON-encoded when not nil); a transport error
// is returned, not fatal, so that callers can ride out a manager restart.
func (a *api) call(method, path string, body any) (int, []byte, error) {
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
		return 0, nil, err
	}
	defer resp.Body.Close()
	a.last = fmt.Sprintf("%s %v", resp.Status, resp.Header)
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

func (a *api) must(method, path string, body any, want int, out any) {
	a.t.Helper()
	code, data, err := a.call(method, path, body)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	if code != want {
		a.t.Fatalf("%s %s = %d %s, want %d", method, path, code, data, want)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			a.t.Fatalf("%s %s: decoding %s: %v", method, path, data, err)
		}
	}
}

// idNamed is the id of the item of the list named name. The list may come
// from another replica than the write that made the item, which sees it
// when its informer does (docs/architecture.md, "State across replicas":
// milliseconds): it is asked again until the item is there.
func (a *api) idNamed(path, name string) int64 {
	a.t.Helper()
	var id int64
	a.eventually(fmt.Sprintf("GET %s has an item named %q", path, name), func() bool {
		var items []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		}
		a.must("GET", path, nil, http.StatusOK, &items)
		for _, it := range items {
			if it.Name == name {
				id = it.ID
				return true
			}
		}
		return false
	})
	return id
}

// eventually asks ok until it holds, for 10 s at most: what one replica
// wrote reaches another's lists through its informers.
func (a *api) eventually(what string, ok func() bool) {
	a.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			a.t.Fatalf("after 10 s, still not: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type task struct {
	ID            int64  `json:"id"`
	Status        string `json:"status"`
	IntegrationID *int64 `json:"integration_id"`
}

func (a *api) task(project, id int64) task {
	a.t.Helper()
	var tk task
	a.must("GET", fmt.Sprintf("/api/project/%d/tasks/%d", project, id), nil, http.StatusOK, &tk)
	return tk
}

// output is the task's stored output, one string per line; nil while the
// manager cannot be reached (during its restart).
func (a *api) output(project, id int64) ([]string, error) {
	code, data, err := a.call("GET", fmt.Sprintf("/api/project/%d/tasks/%d/output", project, id), nil)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("output = %d %s", code, data)
	}
	var records []struct {
		Output string `json:"output"`
	}
	if err := json.Unmarshal(data, &records); err != nil {
		return nil, err
	}
	lines := make([]string, len(records))
	for i, r := range records {
		lines[i] = r.Output
	}
	return lines, nil
}

// waitStatus polls the task until its status is one of want.
func (a *api) waitStatus(project, id int64, limit time.Duration, want ...string) string {
	a.t.Helper()
	deadline := time.Now().Add(limit)
	last := ""
	for time.Now().Before(deadline) {
		code, data, err := a.call("GET", fmt.Sprintf("/api/project/%d/tasks/%d", project, id), nil)
		if err == nil && code == http.StatusOK {
			var tk task
			if json.Unmarshal(data, &tk) == nil {
				last = tk.Status
				for _, w := range want {
					if tk.Status == w {
						return w
					}
				}
				if tk.Status == "error" || (tk.Status == "success" && !contains(want, "success")) {
					out, _ := a.output(project, id)
					a.t.Fatalf("task %d ended %s, want %v; output:\n%s", id, tk.Status, want, strings.Join(out, "\n"))
				}
			}
		}
		time.Sleep(time.Second)
	}
	out, _ := a.output(project, id)
	a.t.Fatalf("task %d is %q after %s, want %v; output:\n%s", id, last, limit, want, strings.Join(out, "\n"))
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// wsLog collects the log frames the websocket delivers, by task, and the
// statuses of its update frames.
type wsLog struct {
	mu       sync.Mutex
	lines    map[int64][]string
	statuses map[int64][]string
	// local is the connection's own address (which replica it reached:
	// replicaOf), and closed is closed when the connection ends.
	local  net.Addr
	closed chan struct{}
	conn   *websocket.Conn
}

func (w *wsLog) close() { w.conn.Close() }

func (a *api) watch() *wsLog {
	a.t.Helper()
	u, err := url.Parse(a.base)
	if err != nil {
		a.t.Fatal(err)
	}
	header := http.Header{}
	for _, c := range a.c.Jar.Cookies(u) {
		header.Add("Cookie", c.Name+"="+c.Value)
	}
	header.Set("Origin", a.base)
	conn, _, err := websocket.DefaultDialer.DialContext(a.t.Context(), "ws"+strings.TrimPrefix(a.base, "http")+"/api/ws", header)
	if err != nil {
		a.t.Fatalf("opening the websocket: %v", err)
	}
	a.t.Cleanup(func() { conn.Close() })
	w := &wsLog{lines: map[int64][]string{}, statuses: map[int64][]string{}, local: conn.LocalAddr(), closed: make(chan struct{}), conn: conn}
	go func() {
		defer close(w.closed)
		for {
			var f struct {
				Type   string `json:"type"`
				TaskID int64  `json:"task_id"`
				Output string `json:"output"`
				Status string `json:"status"`
			}
			if err := conn.ReadJSON(&f); err != nil {
				return
			}
			w.mu.Lock()
			switch f.Type {
			case "log":
				w.lines[f.TaskID] = append(w.lines[f.TaskID], f.Output)
			case "update":
				w.statuses[f.TaskID] = append(w.statuses[f.TaskID], f.Status)
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// statusesOf is the task's statuses as its update frames told them, a
// repeat of the same status dropped.
func (w *wsLog) statusesOf(task int64) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, s := range w.statuses[task] {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

func (w *wsLog) of(task int64) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines[task]...)
}

// deliver posts a webhook as a server would: no cookie, no Origin.
func deliver(t *testing.T, url string, body []byte, header map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func hmacHex(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}
