package gitremote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
)

// local is how bastion dev asks: repositories of this host allowed.
var local = Options{AllowLocal: true}

func TestHead_answersTheBranchHeadForLocalPathsAndFileURLs(t *testing.T) {
	repo := gittest.NewRepo(t)
	first := repo.Git("-C", repo.Path, "rev-parse", "HEAD")

	for _, url := range []string{repo.Path, repo.FileURL()} {
		got, err := Head(context.Background(), url, gittest.Branch, local)
		if err != nil {
			t.Fatalf("Head(%s): %v", url, err)
		}
		if got != first {
			t.Errorf("Head(%s) = %s, want %s", url, got, first)
		}
	}

	second := repo.Commit("second")
	if got, err := Head(context.Background(), repo.Path, gittest.Branch, local); err != nil || got != second {
		t.Errorf("after a commit, Head = %s, %v; want %s", got, err, second)
	}
}

func TestHead_matchesTheBranchExactly(t *testing.T) {
	repo := gittest.NewRepo(t)
	main := repo.Git("-C", repo.Path, "rev-parse", "HEAD")
	// git ls-remote matches the tail of ref names: asking for refs/heads/main
	// also lists this branch.
	repo.Git("-C", repo.Path, "checkout", "--quiet", "-b", "release/refs/heads/main")
	repo.Commit("on the look-alike branch")

	got, err := Head(context.Background(), repo.Path, gittest.Branch, local)
	if err != nil || got != main {
		t.Errorf("Head = %s, %v; want %s", got, err, main)
	}
}

func TestHead_missingBranchIsAClearError(t *testing.T) {
	repo := gittest.NewRepo(t)
	_, err := Head(context.Background(), repo.Path, "nope", local)
	if !errors.Is(err, ErrBranchNotFound) {
		t.Fatalf("Head error = %v, want ErrBranchNotFound", err)
	}
	want := `branch not found: "nope"`
	if err.Error() != want {
		t.Errorf("Head error = %q, want %q", err, want)
	}
}

// A path that is no repository says what any failure says, and keeps
// git's explanation for the log only.
func TestHead_aRepositoryThatDoesNotExistCannotBeReached(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	_, err := Head(context.Background(), missing, gittest.Branch, local)
	if err == nil || err.Error() != "cannot reach the repository" || !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Head error = %v, want exactly \"cannot reach the repository\"", err)
	}
	var unreachable *UnreachableError
	if !errors.As(err, &unreachable) || !strings.Contains(unreachable.Detail, "does not appear to be a git repository") {
		t.Errorf("the detail for the log = %+v, want git's explanation", unreachable)
	}
	if err != nil && errors.Is(err, ErrBranchNotFound) {
		t.Errorf("a missing repository is not a missing branch: %v", err)
	}
}

func TestHead_refusesAnEmptyURL(t *testing.T) {
	if _, err := Head(context.Background(), "", gittest.Branch, local); err == nil {
		t.Error("Head with an empty URL succeeded")
	}
}

func TestHead_withoutABranchAnswersTheRemotesHEAD(t *testing.T) {
	repo := gittest.NewRepo(t)
	want := repo.Commit("second")
	got, err := Head(context.Background(), repo.Path, "", local)
	if err != nil || got != want {
		t.Errorf("Head without a branch = %s, %v; want %s", got, err, want)
	}
}

// A URL is never an option nor a command: not --upload-pack, not ext::.
func TestHead_neverRunsACommandFromTheURL(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	for _, url := range []string{
		"--upload-pack=touch " + marker,
		"ext::sh -c touch% " + marker,
	} {
		if _, err := Head(context.Background(), url, gittest.Branch, local); err == nil {
			t.Errorf("Head(%q) succeeded", url)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("Head(%q) ran a command", url)
		}
	}
}

func TestHead_errorsCarryNoCredentials(t *testing.T) {
	// Nothing listens on port 1, so git fails at once, after quoting the URL.
	url := "https://someone:s3cret-token@127.0.0.1:1/repo.git"
	_, err := Head(context.Background(), url, gittest.Branch, local)
	if err == nil {
		t.Fatal("Head succeeded against a closed port")
	}
	if err.Error() != "cannot reach the repository" {
		t.Errorf("error = %q, want only \"cannot reach the repository\"", err)
	}
	var unreachable *UnreachableError
	if !errors.As(err, &unreachable) {
		t.Fatalf("error %T is no UnreachableError", err)
	}
	if strings.Contains(unreachable.Detail, "s3cret-token") || strings.Contains(unreachable.Detail, "someone") {
		t.Errorf("the detail for the log leaks credentials: %v", unreachable.Detail)
	}
	if !strings.Contains(unreachable.Detail, "https://127.0.0.1:1/repo.git") {
		t.Errorf("the detail for the log does not name the redacted URL: %v", unreachable.Detail)
	}
}

func TestHead_passesTheCallersEnvironmentToGit(t *testing.T) {
	repo := gittest.NewRepo(t)
	// A broken GIT_CONFIG_GLOBAL file makes git fail, which proves the
	// variable reached it.
	bad := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(bad, []byte("[broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Head(context.Background(), repo.Path, gittest.Branch, Options{AllowLocal: true, Env: []string{"GIT_CONFIG_GLOBAL=" + bad}})
	var unreachable *UnreachableError
	if !errors.As(err, &unreachable) || !strings.Contains(unreachable.Detail, "bad config") {
		t.Errorf("Head with a broken global config = %v, want git's config error in the detail", err)
	}
}

func TestHead_redactsUserInfoFromURLs(t *testing.T) {
	tests := map[string]string{
		"https://user:pw@host/r.git": "https://host/r.git",
		"https://token@host/r.git":   "https://host/r.git",
		"ssh://git@host:22/r.git":    "ssh://host:22/r.git",
		"git@host:r.git":             "git@host:r.git",
		"/srv/git/r":                 "/srv/git/r",
		"https://host/r.git":         "https://host/r.git",
		"https://u:p%zz@host/r":      "https://host/r",
		"file:///srv/git/r@1":        "file:///srv/git/r@1",
	}
	for in, want := range tests {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// Without --allow-local-repositories the manager never reads its own
// disk for a schedule: a path or file:// URL is refused before git starts
// (a git on PATH that records its calls proves it never ran), with the
// same words as any other failure, whether the path exists or not. With
// the flag, the same repository answers.
func TestHead_refusesRepositoriesOfThisHostUnlessAllowed(t *testing.T) {
	repo := gittest.NewRepo(t)
	head := repo.Git("-C", repo.Path, "rev-parse", "HEAD")
	calls := gittest.RecordGitCalls(t)
	missing := filepath.Join(t.TempDir(), "missing")
	for _, url := range []string{
		repo.Path, repo.FileURL(), "FILE://" + repo.Path, "file:" + repo.Path, missing, "file://" + missing,
		"./relative/" + filepath.Base(repo.Path), "/etc",
	} {
		_, err := Head(context.Background(), url, gittest.Branch, Options{})
		if err == nil || err.Error() != "cannot reach the repository" {
			t.Errorf("Head(%q) without the flag = %v, want \"cannot reach the repository\"", url, err)
		}
	}
	if got := gittest.GitCalls(t, calls); got != "" {
		t.Fatalf("git ran for a refused local repository: %s", got)
	}

	for _, url := range []string{repo.Path, repo.FileURL()} {
		if got, err := Head(context.Background(), url, gittest.Branch, local); err != nil || got != head {
			t.Errorf("Head(%q) with the flag = %s, %v; want %s", url, got, err, head)
		}
	}
	if got := gittest.GitCalls(t, calls); got == "" {
		t.Fatal("the recording git never ran: the test proves nothing")
	}
}

// A remote URL may not lead git to the host's files or to a command by
// any transport: only ssh, https and git are allowed without the flag.
func TestHead_remoteURLsGetNoOtherTransport(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	for _, url := range []string{
		"ext::sh -c touch% " + marker,
		"fd::3",
		"http://127.0.0.1:1/repo.git",
	} {
		_, err := Head(context.Background(), url, gittest.Branch, Options{})
		var unreachable *UnreachableError
		if !errors.As(err, &unreachable) || err.Error() != "cannot reach the repository" {
			t.Errorf("Head(%q) = %v, want \"cannot reach the repository\"", url, err)
			continue
		}
		if !strings.Contains(unreachable.Detail, "not allowed") {
			t.Errorf("Head(%q): git did not refuse the transport: %s", url, unreachable.Detail)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("ext:: ran a command")
	}
}

func TestIsLocal(t *testing.T) {
	for url, want := range map[string]bool{
		"/srv/git/r": true, "./r": true, "../r": true, "r": true, "file:///srv/r": true, "File:///srv/r": true,
		"c/d:e":              true,
		"https://host/r.git": false, "ssh://git@host/r": false, "git@host:r.git": false, "host:r": false,
		"git://host/r": false, "ext::sh -c x": false,
	} {
		if got := IsLocal(url); got != want {
			t.Errorf("IsLocal(%q) = %v, want %v", url, got, want)
		}
	}
}
