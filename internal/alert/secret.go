package alert

import (
	"errors"
	"fmt"
	"net/url"
	"os"
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
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "********")
		}
	}
	return errors.New(msg)
}
