package gitremote

import (
	"net/url"
	"strings"
)

// redactURL drops the user information from a URL with a scheme
// (https://user:token@host/repo → https://host/repo): a token is often
// passed as the user name alone. Local paths and scp-like addresses
// (git@host:repo) carry no password and stay as they are.
func redactURL(raw string) string {
	userinfo := rawUserinfo(raw)
	if userinfo == "" {
		return raw
	}
	if u, err := url.Parse(raw); err == nil {
		u.User = nil
		return u.String()
	}
	return strings.Replace(raw, userinfo+"@", "", 1)
}

// redactMessage removes the URL's user information from git's own output,
// which may quote the URL as it was given.
func redactMessage(msg, raw string) string {
	userinfo := rawUserinfo(raw)
	if userinfo == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, raw, redactURL(raw))
	return strings.ReplaceAll(msg, userinfo+"@", "")
}

// rawUserinfo is the "user:password" of scheme://user:password@host/..., as
// written, or "". It does not rely on url.Parse, which refuses some URLs git
// accepts.
func rawUserinfo(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if at := strings.LastIndexByte(rest, '@'); at > 0 {
		return rest[:at]
	}
	return ""
}
