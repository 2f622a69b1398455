package alert

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
)

// Secret is a credential read when it is used, from a file (a mounted
// Secret, so a rotated value is picked up without a restart) or else an
// environment variable (a Secret mapped into the manager's environment).
// Its value is never passed on the command line, where `ps` and the pod
// spec would show it.
type Secret struct {
	File string
	Env  string
}

// Set reports whether the secret has a source.
func (s Secret) Set() bool { return s.File != "" || s.Env != "" }

// Read returns the value, without surrounding white space (a file written
// by `echo` ends in a newline). Errors name the source, never the value.
func (s Secret) Read() (string, error) {
	if s.File != "" {
		b, err := os.ReadFile(s.File)
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", s.File, unwrapPath(err))
		}
		return strings.TrimSpace(string(b)), nil
	}
	if s.Env != "" {
		if v := strings.TrimSpace(os.Getenv(s.Env)); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("$%s is empty", s.Env)
	}
	return "", errors.New("no secret configured")
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// scrub makes an error safe to log and to show in an event: an HTTP
// client's error names the URL (which holds a bot token or a webhook's
// secret path), so only the underlying cause is kept, and any secret
// value that still appears in the text is masked.
func scrub(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	// Longest first: a secret that is part of another (a URL's path) must
	// not be masked first and leave the rest of the longer one showing.
	secrets = slices.Clone(secrets)
	sort.SliceStable(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "********")
		}
	}
	return errors.New(msg)
}

// urlSecrets are the parts of a secret URL (an incoming webhook's) that a
// receiver may quote back on their own, as a web framework's "Cannot POST
// /hooks/…" page does: the URL, its path and query, escaped or not, and each
// path segment long enough to be a token rather than a word like "hooks".
func urlSecrets(raw string) []string {
	out := []string{raw}
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	for _, part := range []string{u.Path, u.EscapedPath(), u.RawQuery} {
		if len(part) >= 8 {
			out = append(out, part)
		}
	}
	for _, segment := range strings.Split(u.Path, "/") {
		if len(segment) >= 16 {
			out = append(out, segment, url.PathEscape(segment))
		}
	}
	return out
}

// tokenSecrets is a bot token and its secret half (after "123456:"), which
// an answer may quote without the bot's id.
func tokenSecrets(token string) []string {
	out := []string{token}
	if _, secret, ok := strings.Cut(token, ":"); ok && len(secret) >= 8 {
		out = append(out, secret)
	}
	return out
}
