package apiserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/users"
)

const (
	// markerCookie is the cookie Semaphore clients look for with
	// document.cookie to know a session exists. It carries no secret.
	markerCookie = "semaphore"
	// sessionCookie carries the session secret. It is HttpOnly, so a
	// script injected into the console cannot read it.
	sessionCookie = "bastion_session"
)

// AuthOptions tunes sign-in; zero fields take the defaults.
type AuthOptions struct {
	// SessionTTL is how long a session lasts (7 days).
	SessionTTL time.Duration
	// AccountFailures failed sign-ins in a row to one account are free;
	// each one after makes the next try from a guessing address wait, twice
	// as long each time, up to AccountDelayCap (3; see loginLimiter).
	AccountFailures int
	// AccountDelayCap is the longest such wait (30 s).
	AccountDelayCap time.Duration
	// AddressFailures failed sign-ins from one address within
	// FailureWindow block that address for the rest of it (20).
	AddressFailures int
	// FailureWindow is the period failures are counted over (15 min).
	FailureWindow time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

func (o AuthOptions) withDefaults() AuthOptions {
	if o.SessionTTL <= 0 {
		o.SessionTTL = 7 * 24 * time.Hour
	}
	if o.AccountFailures <= 0 {
		o.AccountFailures = 3
	}
	if o.AccountDelayCap <= 0 {
		o.AccountDelayCap = 30 * time.Second
	}
	if o.AddressFailures <= 0 {
		o.AddressFailures = 20
	}
	if o.FailureWindow <= 0 {
		o.FailureWindow = 15 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// principal is who a request acts for.
type principal struct {
	user *bastionv1.User
	id   int64
	// credential is the hash of the session or token that signed the
	// request in: a password change keeps this session and ends the rest.
	credential string
	kind       store.CredentialKind
}

func (p *principal) admin() bool { return p.user.Spec.Admin }

type principalKey struct{}

// who is the signed-in user of a request that passed authenticate.
func who(r *http.Request) *principal {
	p, _ := r.Context().Value(principalKey{}).(*principal)
	return p
}

// authenticate lets a request through only with a live session cookie or
// API token, and puts its user in the context. Everything else is 401.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, msg := s.principalOf(r)
		if p == nil {
			fail(w, http.StatusUnauthorized, msg)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// principalOf resolves the request's credential. A bearer token wins over
// the cookie; a request that sends a bad token is refused even if it has a
// cookie, so a script never acts as the wrong user by accident.
func (s *Server) principalOf(r *http.Request) (*principal, string) {
	secret, kind := "", store.CredentialSession
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			return nil, "Authorization must be \"Bearer <token>\""
		}
		secret, kind = strings.TrimSpace(token), store.CredentialToken
	} else if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		secret = c.Value
	} else {
		return nil, "not signed in"
	}
	cred, err := s.creds.lookup(r.Context(), s.opts.Store, hashSecret(secret))
	if err != nil || cred.Kind != kind {
		if kind == store.CredentialToken {
			return nil, "invalid API token"
		}
		return nil, "session expired or signed out; sign in again"
	}
	if cred.Expired || (!cred.Expires.IsZero() && !s.opts.Auth.Now().Before(cred.Expires)) {
		if kind == store.CredentialToken {
			return nil, "API token expired"
		}
		return nil, "session expired; sign in again"
	}
	user, err := s.opts.Users.FindByID(r.Context(), cred.UserID)
	if err != nil {
		// The user was deleted: their credentials die with them.
		return nil, "user no longer exists"
	}
	if cred.Created.Before(users.PasswordChangedAt(user)) {
		// The password changed after this sign-in or this token was made,
		// here or through `bastion user change-by-login` (which cannot
		// reach the store to delete them).
		if kind == store.CredentialToken {
			return nil, "API token ended by a password change; create a new one"
		}
		return nil, "the password was changed; sign in again"
	}
	return &principal{user: user, id: cred.UserID, credential: cred.Hash, kind: kind}, ""
}

// newSecret is 32 random bytes, hex: a session or token secret.
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails on Linux
	return hex.EncodeToString(b)
}

// hashSecret is what the store keeps of a secret. Secrets are 256 random
// bits, so a plain SHA-256 (no salt, no stretching) is enough to make a
// stolen database useless.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// startSession stores a new session for user, sets both cookies and
// returns the session's hash.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, user *bastionv1.User) (string, error) {
	id, ok := ids.FromLabels(user)
	if !ok {
		return "", errors.New("the user has no id yet; try again in a moment")
	}
	secret := newSecret()
	now := s.opts.Auth.Now()
	expires := now.Add(s.opts.Auth.SessionTTL)
	hash := hashSecret(secret)
	err := s.opts.Store.PutCredential(r.Context(), store.Credential{
		Hash: hash, Kind: store.CredentialSession, UserID: id, Created: now, Expires: expires,
	})
	if err != nil {
		return "", err
	}
	secure := s.secureCookies(r)
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: secret, Path: "/", Expires: expires,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode,
	})
	// The marker holds no secret: it only tells the console a session
	// exists (docs/features.md §9, "the session is detected by a session cookie").
	http.SetCookie(w, &http.Cookie{
		Name: markerCookie, Value: "1", Path: "/", Expires: expires,
		Secure: secure, SameSite: http.SameSiteLaxMode,
	})
	return hash, nil
}

// clearSession expires both cookies in the browser.
func (s *Server) clearSession(w http.ResponseWriter, r *http.Request) {
	secure := s.secureCookies(r)
	for _, c := range []*http.Cookie{
		{Name: sessionCookie, HttpOnly: true},
		{Name: markerCookie},
	} {
		c.Path, c.MaxAge, c.Secure, c.SameSite = "/", -1, secure, http.SameSiteLaxMode
		http.SetCookie(w, c)
	}
}

// secureCookies: cookies are Secure when the console is served over TLS,
// directly or (by the public URL) behind a proxy.
func (s *Server) secureCookies(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(s.opts.PublicURL, "https://")
}

// userID is a user's id, or 0 when the controller has not stamped it yet.
func userID(u *bastionv1.User) int64 {
	id, _ := ids.FromLabels(u)
	return id
}
