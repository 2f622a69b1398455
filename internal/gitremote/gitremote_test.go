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

func TestHead_answersTheBranchHeadForLocalPathsAndFileURLs(t *testing.T) {
	repo := gittest.NewRepo(t)
	first := repo.Git("-C", repo.Path, "rev-parse", "HEAD")

	for _, url := range []string{repo.Path, repo.FileURL()} {
		got, err := Head(context.Background(), url, gittest.Branch, nil)
		if err != nil {
			t.Fatalf("Head(%s): %v", url, err)
		}
		if got != first {
			t.Errorf("Head(%s) = %s, want %s", url, got, first)
		}
	}

	second := repo.Commit("second")
	if got, err := Head(context.Background(), repo.Path, gittest.Branch, nil); err != nil || got != second {
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

	got, err := Head(context.Background(), repo.Path, gittest.Branch, nil)
	if err != nil || got != main {
		t.Errorf("Head = %s, %v; want %s", got, err, main)
	}
}

func TestHead_missingBranchIsAClearError(t *testing.T) {
	repo := gittest.NewRepo(t)
	_, err := Head(context.Background(), repo.Path, "nope", nil)
	if !errors.Is(err, ErrBranchNotFound) {
		t.Fatalf("Head error = %v, want ErrBranchNotFound", err)
	}
	want := "git ls-remote " + repo.Path + `: branch not found: "nope"`
	if err.Error() != want {
		t.Errorf("Head error = %q, want %q", err, want)
	}
}

func TestHead_reportsWhatGitSaysForARepositoryThatDoesNotExist(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	_, err := Head(context.Background(), missing, gittest.Branch, nil)
	if err == nil || !strings.Contains(err.Error(), "does not appear to be a git repository") {
		t.Errorf("Head error = %v, want git's explanation", err)
	}
	if err != nil && errors.Is(err, ErrBranchNotFound) {
		t.Errorf("a missing repository is not a missing branch: %v", err)
	}
}

func TestHead_refusesAnEmptyURL(t *testing.T) {
	if _, err := Head(context.Background(), "", gittest.Branch, nil); err == nil {
		t.Error("Head with an empty URL succeeded")
	}
}

func TestHead_withoutABranchAnswersTheRemotesHEAD(t *testing.T) {
	repo := gittest.NewRepo(t)
	want := repo.Commit("second")
	got, err := Head(context.Background(), repo.Path, "", nil)
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
		if _, err := Head(context.Background(), url, gittest.Branch, nil); err == nil {
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
	_, err := Head(context.Background(), url, gittest.Branch, nil)
	if err == nil {
		t.Fatal("Head succeeded against a closed port")
	}
	if strings.Contains(err.Error(), "s3cret-token") || strings.Contains(err.Error(), "someone") {
		t.Errorf("error leaks credentials: %v", err)
	}
	if !strings.Contains(err.Error(), "https://127.0.0.1:1/repo.git") {
		t.Errorf("error does not name the redacted URL: %v", err)
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
	_, err := Head(context.Background(), repo.Path, gittest.Branch, []string{"GIT_CONFIG_GLOBAL=" + bad})
	if err == nil || !strings.Contains(err.Error(), "bad config") {
		t.Errorf("Head with a broken global config = %v, want git's config error", err)
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
