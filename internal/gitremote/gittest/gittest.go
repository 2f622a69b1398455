// Package gittest makes real git repositories for tests of code that talks
// to git remotes.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Branch is the branch NewRepo creates.
const Branch = "main"

// Repo is a git repository in a test's temporary directory.
type Repo struct {
	// Path is the repository's directory, usable as a local-path URL.
	Path string
	t    testing.TB
}

// NewRepo runs `git init` in a new temporary directory and commits once to
// Branch.
//
// Every user can read it (a run of `bastion dev` as root clones it as a
// user of its own): the test's temporary directory, mode 0700, becomes
// passable (0711) though not listable, and the repository's own readable.
func NewRepo(t testing.TB) *Repo {
	t.Helper()
	dir := t.TempDir()
	for d, mode := range map[string]os.FileMode{filepath.Dir(dir): 0o711, dir: 0o755} {
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
	}
	r := &Repo{Path: filepath.Join(dir, "repo"), t: t}
	r.Git("init", "--quiet", "--initial-branch="+Branch, r.Path)
	r.Commit("first")
	return r
}

// FileURL is the repository as a file:// URL.
func (r *Repo) FileURL() string { return "file://" + r.Path }

// Commit records an empty commit on the current branch and returns its id.
func (r *Repo) Commit(message string) string {
	r.t.Helper()
	r.Git("-C", r.Path, "commit", "--quiet", "--allow-empty", "-m", message)
	return r.Git("-C", r.Path, "rev-parse", "HEAD")
}

// Git runs git with a fixed identity and no user or system configuration,
// and returns its trimmed output.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + r.t.TempDir(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// WriteFile writes a file into the work tree (mode 0755 when executable)
// and commits it; it returns the commit id.
func (r *Repo) WriteFile(path, content string, executable bool) string {
	r.t.Helper()
	mode := os.FileMode(0o644)
	if executable {
		mode = 0o755
	}
	full := filepath.Join(r.Path, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), mode); err != nil {
		r.t.Fatal(err)
	}
	r.Git("-C", r.Path, "add", "--", path)
	return r.Commit("add " + path)
}

// RecordGitCalls puts a git first on PATH (for the rest of the test) that
// appends its arguments to the returned file, then runs the real git: the
// file shows whether, and how, code under test ran git.
func RecordGitCalls(t *testing.T) (calls string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	script := "#!/bin/sh\necho \"$@\" >> '" + calls + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return calls
}

// GitCalls reads what RecordGitCalls recorded so far ("" when git never ran).
func GitCalls(t testing.TB, calls string) string {
	t.Helper()
	data, err := os.ReadFile(calls)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}
