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

// remoteProtocols are those of AllowedProtocols that reach another host:
// all the manager may use unless local repositories are allowed.
const remoteProtocols = "ssh:https:git"

// ErrBranchNotFound is returned when the remote has no such branch.
var ErrBranchNotFound = errors.New("branch not found")

// ErrUnreachable is what every failure to ask a remote says, and all it
// says: not git's own words, which quote the URL and the server's answer,
// and for a local path tell whether it exists and what it holds.
var ErrUnreachable = errors.New("cannot reach the repository")

// UnreachableError is ErrUnreachable with git's own explanation kept apart
// (redacted of URL credentials) for the manager's log, never for a status
// or an event.
type UnreachableError struct{ Detail string }

func (e *UnreachableError) Error() string        { return ErrUnreachable.Error() }
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// Options says how Head may reach a remote.
type Options struct {
	// AllowLocal lets the URL be a path or a file:// URL of this host (the
	// manager's --allow-local-repositories, on in `bastion dev`). Off, such
	// a URL is refused before git starts: the manager's own files are no
	// repository a project may read.
	AllowLocal bool
	// Env is added to the manager's environment for git, so that callers
	// can pass credentials (GIT_SSH_COMMAND and the like); the settings
	// that keep git from prompting or using another transport are applied
	// after it.
	Env []string
}

// IsLocal reports whether git reads url from this host's file system: a
// file:// URL, or a path (git's rule: no "://", and no colon before the
// first slash, which would make it an scp-like ssh address). A
// "<transport>::<address>" URL is no path; git's protocol allow-list
// decides on it.
func IsLocal(url string) bool {
	if strings.HasPrefix(strings.ToLower(url), "file:") {
		return true
	}
	if strings.Contains(url, "://") || strings.Contains(url, "::") {
		return false
	}
	colon := strings.IndexByte(url, ':')
	slash := strings.IndexByte(url, '/')
	return colon < 0 || (slash >= 0 && slash < colon)
}

// Head answers the commit at the head of branch on the remote url, as
// `git ls-remote` reports it. An empty branch asks for the remote's HEAD.
// Any failure to ask is an UnreachableError; a remote that answers without
// the branch is ErrBranchNotFound.
func Head(ctx context.Context, url, branch string, opts Options) (string, error) {
	if url == "" {
		return "", &UnreachableError{Detail: "empty repository URL"}
	}
	protocols := remoteProtocols
	if opts.AllowLocal {
		protocols = AllowedProtocols
	} else if IsLocal(url) {
		return "", &UnreachableError{Detail: "local repositories are not allowed (--allow-local-repositories)"}
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
	cmd.Env = append(append(os.Environ(), opts.Env...),
		"GIT_TERMINAL_PROMPT=0", // fail instead of waiting for a password
		// Overrides every protocol.*.allow setting: the URL, or a
		// submodule or redirect it leads to, gets no other transport.
		"GIT_ALLOW_PROTOCOL="+protocols,
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
			return "", &UnreachableError{Detail: fmt.Sprintf("git ls-remote %s: no answer within %s", redactURL(url), Timeout)}
		}
		msg := summarize(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", &UnreachableError{Detail: fmt.Sprintf("git ls-remote %s: %s", redactURL(url), redactMessage(msg, url))}
	}
	return parseHead(stdout.String(), ref, branch)
}

// parseHead picks the line for exactly ref. git matches patterns against the
// tail of ref names, so asking for refs/heads/main also lists a branch
// called release/refs/heads/main.
func parseHead(out, ref, branch string) (string, error) {
	for line := range strings.Lines(out) {
		commit, name, ok := strings.Cut(strings.TrimRight(line, "\n"), "\t")
		if ok && name == ref && isObjectID(commit) {
			return commit, nil
		}
	}
	if branch == "" {
		return "", fmt.Errorf("%w: the repository has no HEAD", ErrBranchNotFound)
	}
	return "", fmt.Errorf("%w: %q", ErrBranchNotFound, branch)
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
