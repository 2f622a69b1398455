package runner

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/bastion-dev/bastion/internal/gitremote"
)

// gitProtocols allows the transports Bastion supports and nothing else:
// in particular not ext::, which runs a command named in the URL.
var gitProtocols = []string{
	"-c", "protocol.allow=never",
	"-c", "protocol.file.allow=always",
	"-c", "protocol.git.allow=always",
	"-c", "protocol.ssh.allow=always",
	"-c", "protocol.https.allow=always",
}

// checkout clones the task's repository into dir and returns the commit.
// Credentials go through files in private (mode 0600), never argv.
func (t *taskRun) checkout(ctx context.Context, dir string) (commit, message string, err error) {
	repo := t.in.Spec.Repository
	env := append(t.baseEnv(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	config := append([]string{}, gitProtocols...)
	if gitremote.IsLocal(repo.URL) {
		// A repository of this host belongs to another user than a local
		// run that has a user of its own (bastion dev as root), and git
		// reads another user's repository only when a global config calls
		// it safe. The run's user is the one at risk, and it owns nothing.
		file, err := writePrivate(filepath.Join(t.private, "gitconfig"), "[safe]\n\tdirectory = *\n")
		if err != nil {
			return "", "", err
		}
		env = append(env, "GIT_CONFIG_GLOBAL="+file)
	}

	if repo.Key != nil {
		switch repo.Key.Type {
		case "ssh":
			keyFile, err := t.sshKeyFile(repo.Key.Secret, "git")
			if err != nil {
				return "", "", err
			}
			env = append(env, "GIT_SSH_COMMAND="+sshCommand(keyFile, t.private))
		case "login_password":
			helper, err := t.credentialStore(repo.URL, repo.Key.Secret)
			if err != nil {
				return "", "", err
			}
			config = append(config, "-c", "credential.helper=", "-c", "credential.helper="+helper)
		}
	}

	// Not --recurse-submodules: for a repository without submodules, git
	// would still run its submodule script, a dozen processes and about
	// 30 ms of CPU per task (docs/benchmarks.md); submodules are updated
	// below when the tree names some.
	// An empty --template: git's template directory holds only sample
	// hooks, a description and an exclude file, 18 files a run never
	// uses, which each clone would create and the run's end remove again
	// (docs/benchmarks.md, "Sixth round"). .git/info is made below, empty,
	// for a playbook that adds to .git/info/exclude.
	args := append(append([]string{}, config...), "clone", "--template=")
	if repo.Branch != "" {
		args = append(args, "--branch", repo.Branch)
	}
	args = append(args, "--", repo.URL, dir)
	why := &gitComplaint{next: t.out}
	if code, err := run(ctx, process{path: "git", args: args, dir: t.work, env: env}, why); err != nil {
		return "", "", fmt.Errorf("git clone: %w", err)
	} else if code != 0 {
		return "", "", fmt.Errorf("git clone of %s failed: %s", redactURL(repo.URL), t.out.mask(why.last("exit "+fmt.Sprint(code)), outStream))
	}
	if err := os.Mkdir(filepath.Join(dir, ".git", "info"), 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", "", err
	}
	gitIn := func(args ...string) (int, error) {
		return run(ctx, process{path: "git", args: append(append(append([]string{}, config...), "-C", dir), args...), dir: t.work, env: env}, t.out)
	}
	if repo.CommitHash != "" {
		if code, err := gitIn("checkout", "--detach", repo.CommitHash, "--"); err != nil || code != 0 {
			return "", "", fmt.Errorf("checking out commit %s failed", repo.CommitHash)
		}
	}
	// What clone --recurse-submodules does after its checkout, when the
	// checked-out tree has submodules (a gitlink without .gitmodules has
	// no URL to update from, with or without it).
	if _, err := os.Lstat(filepath.Join(dir, ".gitmodules")); err == nil {
		if code, err := gitIn("submodule", "update", "--init", "--recursive"); err != nil || code != 0 {
			return "", "", errors.New("updating the repository's submodules failed")
		}
	}

	// One git for both: each process is a few ms of a task's start.
	head, err := gitOutput(ctx, dir, env, 2, "log", "-1", "--format=%H%n%s")
	if err != nil {
		return "", "", err
	}
	return head[0], head[1], nil
}

// gitOutput runs a git command in dir and returns the first lines of its
// answer, which must have at least that many.
func gitOutput(ctx context.Context, dir string, env []string, lines int, args ...string) ([]string, error) {
	var got collector
	code, err := run(ctx, process{path: "git", args: append([]string{"-C", dir}, args...), dir: dir, env: env}, &got)
	all := got.all()
	if err != nil || code != 0 || len(all) < lines {
		return nil, fmt.Errorf("git %s failed", strings.Join(args, " "))
	}
	return all[:lines], nil
}

// sshKeyFile writes the ssh key of a Secret, decrypted if it has a
// passphrase (ssh in batch mode cannot ask for one), mode 0600.
func (t *taskRun) sshKeyFile(secret, purpose string) (string, error) {
	pem, err := t.in.secret(secret, "ssh-privatekey")
	if err != nil {
		return "", err
	}
	if pem == "" {
		return "", fmt.Errorf("key %s has no private key", secret)
	}
	passphrase, err := t.in.secret(secret, "passphrase")
	if err != nil {
		return "", err
	}
	t.redact(pem, passphrase)
	if passphrase != "" {
		raw, err := ssh.ParseRawPrivateKeyWithPassphrase([]byte(pem), []byte(passphrase))
		if err != nil {
			return "", fmt.Errorf("key %s: the passphrase does not open the private key", secret)
		}
		block, err := ssh.MarshalPrivateKey(raw, "")
		if err != nil {
			return "", fmt.Errorf("key %s: %w", secret, err)
		}
		pem = string(pemEncode(block))
	} else if _, err := ssh.ParseRawPrivateKey([]byte(pem)); err != nil {
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return "", fmt.Errorf("key %s is encrypted and has no passphrase", secret)
		}
		return "", fmt.Errorf("key %s is not a private key ssh can read", secret)
	}
	return writePrivate(filepath.Join(t.private, purpose+"_key"), pem)
}

// sshCommand is what git runs for ssh. Git passes it to a shell, so it
// holds only paths the runner made (no user input). Host keys: each task
// starts with an empty known_hosts and accepts the first key it sees, as
// Semaphore does; pinning host keys per project is future work.
func sshCommand(keyFile, private string) string {
	return fmt.Sprintf("ssh -i '%s' -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile='%s'",
		keyFile, filepath.Join(private, "known_hosts"))
}

// credentialStore writes a git credential file for an https URL and
// returns the helper that reads it.
func (t *taskRun) credentialStore(repoURL, secret string) (string, error) {
	login, err := t.in.secret(secret, "username")
	if err != nil {
		return "", err
	}
	password, err := t.in.secret(secret, "password")
	if err != nil {
		return "", err
	}
	t.redact(password)
	u, err := url.Parse(repoURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("the repository URL %s is not a URL that takes a login and password", redactURL(repoURL))
	}
	entry := url.URL{Scheme: u.Scheme, Host: u.Host, User: url.UserPassword(login, password)}
	path, err := writePrivate(filepath.Join(t.private, "git-credentials"), entry.String()+"\n")
	if err != nil {
		return "", err
	}
	return "store --file=" + path, nil
}

// redactURL drops a password from a URL shown to the user.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

// gitComplaint passes git's lines on and remembers its last complaint
// ("fatal: ..." or "error: ..."), so that the task's message says why a
// clone failed, not only that it did.
type gitComplaint struct {
	next Sink
	mu   sync.Mutex
	line string
}

func (g *gitComplaint) Line(at time.Time, text string) {
	if strings.HasPrefix(text, "fatal: ") || strings.HasPrefix(text, "error: ") {
		g.mu.Lock()
		g.line = text
		g.mu.Unlock()
	}
	g.next.Line(at, text)
}

// StderrLine never comes (git is not the task's program), but a Sink has it.
func (g *gitComplaint) StderrLine(at time.Time, text string) { g.Line(at, text) }

func (g *gitComplaint) last(fallback string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.line == "" {
		return fallback
	}
	return g.line
}
