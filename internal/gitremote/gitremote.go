// Package gitremote asks git remotes about their branches without cloning
// them. It runs the real git binary, so every URL form and transport git
// knows works as it does for the checkout that follows.
package gitremote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Timeout bounds one question to a remote: an unreachable host must not hold
// a reconcile worker for the minutes a TCP or ssh timeout can take.
const Timeout = 60 * time.Second

// AllowedProtocols are the git transports a Repository may use (ssh, https,
// file and git URLs and local paths, as its CRD admits). Anything else, ext::
// above all, which runs a command, is refused by git itself.
const AllowedProtocols = "ssh:https:file:git"

// ErrBranchNotFound is returned when the remote has no such branch.
var ErrBranchNotFound = errors.New("branch not found")

// Head answers the commit at the head of branch on the remote url, as
// `git ls-remote` reports it. An empty branch asks for the remote's HEAD.
//
// env is added to the manager's environment for git, so that callers can
// pass credentials (GIT_SSH_COMMAND and the like); the settings that keep
// git from prompting or using another transport are applied after it.
// Errors name the URL without any user or password in it.
func Head(ctx context.Context, url, branch string, env []string) (string, error) {
	if url == "" {
		return "", errors.New("git ls-remote: empty repository URL")
	}
	// No branch means the remote's default branch, which is what a clone
	// without --branch checks out (a local-path Repository may omit it).
	ref := "HEAD"
	if branch != "" {
		ref = "refs/heads/" + branch
	}

	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	// "--" ends git's options: a URL starting with "-" is a repository, never
	// a flag such as --upload-pack.
	cmd := exec.CommandContext(ctx, "git", "ls-remote", "--", url, ref)
	cmd.Env = append(append(os.Environ(), env...),
		"GIT_TERMINAL_PROMPT=0", // fail instead of waiting for a password
		"GIT_ALLOW_PROTOCOL="+AllowedProtocols,
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// git runs ssh or git-remote-https as children; on cancel, kill the whole
	// group, and stop waiting for pipes a straggler might still hold.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second

	if err := cmd.Run(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return "", fmt.Errorf("git ls-remote %s: no answer within %s", redactURL(url), Timeout)
		}
		msg := summarize(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git ls-remote %s: %s", redactURL(url), redactMessage(msg, url))
	}
	return parseHead(stdout.String(), ref, url, branch)
}

// parseHead picks the line for exactly ref. git matches patterns against the
// tail of ref names, so asking for refs/heads/main also lists a branch
// called release/refs/heads/main.
func parseHead(out, ref, url, branch string) (string, error) {
	for line := range strings.Lines(out) {
		commit, name, ok := strings.Cut(strings.TrimRight(line, "\n"), "\t")
		if ok && name == ref && isObjectID(commit) {
			return commit, nil
		}
	}
	if branch == "" {
		return "", fmt.Errorf("git ls-remote %s: %w: the remote has no HEAD", redactURL(url), ErrBranchNotFound)
	}
	return "", fmt.Errorf("git ls-remote %s: %w: %q", redactURL(url), ErrBranchNotFound, branch)
}

// summarize keeps git's error lines, one line in all, for a condition
// message; the advice git adds after them ("Please make sure you have the
// correct access rights") is dropped. Other output (ssh warnings) is kept
// only when there is no error line.
func summarize(stderr string) string {
	var errs, all []string
	for line := range strings.Lines(stderr) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		all = append(all, line)
		if strings.HasPrefix(line, "fatal: ") || strings.HasPrefix(line, "error: ") {
			errs = append(errs, line)
		}
	}
	if len(errs) > 0 {
		return strings.Join(errs, "; ")
	}
	return strings.Join(all, "; ")
}

// isObjectID accepts SHA-1 and SHA-256 object names.
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
