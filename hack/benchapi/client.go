package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// apiClient is a signed-in client of /api, as a script holds one.
type apiClient struct {
	base string
	c    *http.Client
}

func signIn(ctx context.Context, base, login, password string) (*apiClient, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	a := &apiClient{base: base, c: &http.Client{Jar: jar, Timeout: time.Minute}}
	err = a.do(ctx, "POST", "/api/auth/login", map[string]string{"auth": login, "password": password}, http.StatusNoContent, nil)
	return a, err
}

// do sends a request (body JSON-encoded when not nil), checks the status
// and decodes the answer into out when out is not nil.
func (a *apiClient) do(ctx context.Context, method, path string, body any, want int, out any) error {
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		data, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, data)
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// project is a project with what a bash template needs: a repository, an
// inventory and an environment.
type project struct {
	path                               string // /api/project/<id>
	repository, inventory, environment int64
}

type idOnly struct {
	ID int64 `json:"id"`
}

// newLocalProject makes a project over a local git repository, through
// the API as a user would: a key, the repository, an inventory and an
// environment. Keys, repositories and environments answer 204, so their
// ids are read back from the lists.
func (a *apiClient) newLocalProject(ctx context.Context, name, repoPath string) (project, error) {
	var created idOnly
	if err := a.do(ctx, "POST", "/api/projects", map[string]any{"name": name}, http.StatusCreated, &created); err != nil {
		return project{}, err
	}
	p := project{path: "/api/project/" + strconv.FormatInt(created.ID, 10)}
	var key int64
	steps := []func() error{
		func() error {
			return a.do(ctx, "POST", p.path+"/keys", map[string]any{"name": "none", "type": "none"}, http.StatusNoContent, nil)
		},
		func() (err error) { key, err = a.idNamed(ctx, p.path+"/keys", "none"); return err },
		func() error {
			return a.do(ctx, "POST", p.path+"/repositories", map[string]any{"name": "code", "git_url": repoPath, "git_branch": "", "ssh_key_id": key}, http.StatusNoContent, nil)
		},
		func() (err error) { p.repository, err = a.idNamed(ctx, p.path+"/repositories", "code"); return err },
		func() error {
			var inv idOnly
			err := a.do(ctx, "POST", p.path+"/inventory", map[string]any{"name": "here", "type": "static", "inventory": "localhost\n", "ssh_key_id": key}, http.StatusCreated, &inv)
			p.inventory = inv.ID
			return err
		},
		func() error {
			return a.do(ctx, "POST", p.path+"/environment", map[string]any{"name": "empty", "json": "{}", "env": "{}"}, http.StatusNoContent, nil)
		},
		func() (err error) { p.environment, err = a.idNamed(ctx, p.path+"/environment", "empty"); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return project{}, err
		}
	}
	return p, nil
}

func (a *apiClient) idNamed(ctx context.Context, listPath, name string) (int64, error) {
	var items []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	if err := a.do(ctx, "GET", listPath, nil, http.StatusOK, &items); err != nil {
		return 0, err
	}
	for _, it := range items {
		if it.Name == name {
			return it.ID, nil
		}
	}
	return 0, fmt.Errorf("no %q in %s", name, listPath)
}

// newBashTemplate makes a bash template running script from the repository.
func (a *apiClient) newBashTemplate(ctx context.Context, p project, name, script string) (int64, error) {
	var t idOnly
	err := a.do(ctx, "POST", p.path+"/templates", map[string]any{
		"name": name, "app": "bash", "playbook": script,
		"repository_id": p.repository, "inventory_id": p.inventory, "environment_id": p.environment,
	}, http.StatusCreated, &t)
	return t.ID, err
}

// The scripts of the benchmark's repository.
const (
	shortScript = "short.sh" // P1: ~20 ms of work
	linesScript = "lines.sh" // P2: prints "L 1" to "L N", one a line
	// linePrefix tells the script's lines from the runner's own (the
	// clone's), which come first.
	linePrefix = "L "
)

// makeRepo makes a local git repository holding the benchmark's scripts.
func makeRepo(dir string, lines int) (string, error) {
	files := map[string]string{
		shortScript: "#!/bin/bash\nsleep 0.02\n",
		linesScript: fmt.Sprintf("#!/bin/bash\nseq -f '%s%%.0f' 1 %d\n", linePrefix, lines),
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			return "", err
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "."},
		{"-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "bench-api scripts"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("git %v: %w: %s", args, err, out)
		}
	}
	return dir, nil
}
