// Package oidc signs console users in through OpenID Connect providers: the
// authorization code flow with state, nonce and PKCE (S256), the ID token
// verified by go-oidc against the provider's published keys. It only proves
// who the user is; finding or creating the Bastion user and starting a
// console session is the caller's job.
//
// Discovery is lazy: New makes no request that can fail it. It starts one
// background attempt per provider so the first sign-in is quick, and Login
// and Callback retry discovery until it has succeeded once. A provider that
// is down when the manager starts costs its users an error page, not the
// manager its start.
package oidc

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// RoutePrefix is where the caller mounts {id}/login and {id}/redirect,
// below the public URL's path. The login cookie is scoped to it.
const RoutePrefix = "/api/auth/oidc"

const (
	// loginTTL bounds a sign-in from Login to Callback: long enough for a
	// password and a second factor, short enough that a stale cookie is
	// useless.
	loginTTL = 10 * time.Minute
	// discoveryTimeout and exchangeTimeout keep a hanging provider from
	// holding a request (and, for discovery, the provider's lock) forever.
	discoveryTimeout = 15 * time.Second
	exchangeTimeout  = 30 * time.Second
	// maxReturnQuery keeps the cookie well under browsers' 4 KiB limit; a
	// longer query is dropped and the console lands on its home page.
	maxReturnQuery = 1024
)

// The errors Login and Callback return wrap one of these, with a message
// that is safe to show the user: it never holds a code, token, nonce,
// verifier or client secret. HTTPStatus maps them to a status.
var (
	// ErrUnknownProvider: no provider has that id (404).
	ErrUnknownProvider = errors.New("unknown sign-in provider")
	// ErrInvalidState: the callback does not belong to a sign-in this
	// browser started here, or it expired, or it was already used (400).
	ErrInvalidState = errors.New("invalid sign-in attempt")
	// ErrSignInFailed: the provider refused, or what it sent did not
	// verify (401).
	ErrSignInFailed = errors.New("sign-in failed")
	// ErrProviderUnavailable: discovery or the token endpoint could not be
	// reached or answered nonsense (502).
	ErrProviderUnavailable = errors.New("sign-in provider unavailable")
)

// HTTPStatus is the response status for an error from Login or Callback.
func HTTPStatus(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, ErrUnknownProvider):
		return http.StatusNotFound
	case errors.Is(err, ErrInvalidState):
		return http.StatusBadRequest
	case errors.Is(err, ErrSignInFailed):
		return http.StatusUnauthorized
	case errors.Is(err, ErrProviderUnavailable):
		return http.StatusBadGateway
	default:
		return http.StatusInternalServerError
	}
}

// Public is what the sign-in page shows of a provider.
type Public struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Color string `json:"color,omitempty"`
	Icon  string `json:"icon,omitempty"`
}

// Identity is who the provider says signed in. (ProviderID or Issuer,
// Subject) is the stable key; the other fields are the user's to change.
type Identity struct {
	ProviderID    string `json:"provider_id"`
	Issuer        string `json:"issuer"`
	Subject       string `json:"subject"`
	Username      string `json:"username"`
	Name          string `json:"name"`
	Email         string `json:"email,omitempty"`
	EmailVerified bool   `json:"email_verified"`
}

// Option tunes New.
type Option func(*options)

type options struct {
	client    *http.Client
	cookieKey []byte
}

// WithHTTPClient sets the client for discovery, keys, token and userinfo
// requests (a private CA, a proxy). The default has a 30 s timeout.
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.client = c } }

// WithCookieKey sets the secret the login cookie is encrypted with. Without
// it each process draws a random one, so a sign-in must finish on the
// replica, and in the process lifetime, that started it; replicas behind
// one URL should share a key.
func WithCookieKey(secret []byte) Option {
	return func(o *options) { o.cookieKey = slices.Clone(secret) }
}

// Providers is the set of configured providers. It is safe for concurrent
// use.
type Providers struct {
	list       []*provider
	byID       map[string]*provider
	sealer     *sealer
	cookiePath string
	secure     bool
	now        func() time.Time

	usedMu sync.Mutex
	used   map[string]time.Time // states already seen at Callback, until they expire
}

type provider struct {
	cfg         ProviderConfig
	secret      string
	redirectURL string
	client      *http.Client
	now         func() time.Time

	mu    sync.Mutex // held through discovery so concurrent first uses wait for one fetch
	ready *discovered
}

// discovered is what discovery yields; kept once it succeeded.
type discovered struct {
	provider *gooidc.Provider
	oauth    *oauth2.Config
	verifier *gooidc.IDTokenVerifier
}

// New checks the providers, reads client secret files and prepares the
// flows. publicURL is how browsers reach the console (like
// http://127.0.0.1:3000); each provider's redirect URL is publicURL +
// RoutePrefix + "/{id}/redirect" and must be registered with it. ctx bounds
// the background discovery New starts (see the package comment).
func New(ctx context.Context, cfgs []ProviderConfig, publicURL string, opts ...Option) (*Providers, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	base, err := url.Parse(publicURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, errors.New("oidc: the public URL must be an absolute http or https URL")
	}
	base.Path = strings.TrimSuffix(base.Path, "/")
	base.RawPath, base.RawQuery, base.Fragment = "", "", ""

	client := o.client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	s, err := newSealer(o.cookieKey)
	if err != nil {
		return nil, err
	}
	p := &Providers{
		byID:       map[string]*provider{},
		sealer:     s,
		cookiePath: base.Path + RoutePrefix,
		secure:     base.Scheme == "https",
		now:        time.Now,
		used:       map[string]time.Time{},
	}
	for i := range cfgs {
		c := cfgs[i]
		c.Scopes = slices.Clone(c.Scopes)
		if err := c.normalize(); err != nil {
			return nil, fmt.Errorf("oidc: providers[%d]: %w", i, err)
		}
		if p.byID[c.ID] != nil {
			return nil, fmt.Errorf("oidc: provider id %q is used twice", c.ID)
		}
		secret, err := resolveSecret(c)
		if err != nil {
			return nil, fmt.Errorf("oidc: provider %q: %w", c.ID, err)
		}
		pr := &provider{
			cfg:         c,
			secret:      secret,
			redirectURL: base.String() + RoutePrefix + "/" + c.ID + "/redirect",
			client:      client,
			now:         func() time.Time { return p.now() },
		}
		p.list = append(p.list, pr)
		p.byID[c.ID] = pr
	}
	for _, pr := range p.list {
		go func() { _, _ = pr.discover(ctx) }() // warm-up only: failures are retried on use
	}
	return p, nil
}

// resolveSecret returns the secret New will use; a ClientSecretRef must
// have been resolved into ClientSecret by the caller.
func resolveSecret(c ProviderConfig) (string, error) {
	switch {
	case c.ClientSecret != "":
		return c.ClientSecret, nil
	case c.ClientSecretFile != "":
		data, err := os.ReadFile(c.ClientSecretFile)
		if err != nil {
			return "", fmt.Errorf("client secret file: %w", err)
		}
		// Files written by editors and `echo` end with a newline that is
		// never part of the secret.
		secret := strings.TrimSpace(string(data))
		if secret == "" {
			return "", errors.New("client secret file is empty")
		}
		return secret, nil
	case c.ClientSecretRef != nil:
		return "", errors.New("client secret ref was not resolved into the client secret before New")
	}
	return "", nil
}

// List is the providers for the sign-in page, in configured order.
func (p *Providers) List() []Public {
	out := make([]Public, 0, len(p.list))
	for _, pr := range p.list {
		out = append(out, Public{ID: pr.cfg.ID, Name: pr.cfg.Name, Color: pr.cfg.Color, Icon: pr.cfg.Icon})
	}
	return out
}

// RedirectURL is the callback URL to register with provider id.
func (p *Providers) RedirectURL(id string) (string, error) {
	pr := p.byID[id]
	if pr == nil {
		return "", ErrUnknownProvider
	}
	return pr.redirectURL, nil
}

// Login starts a sign-in with provider id: it answers 302 to the provider's
// authorization endpoint and sets the login cookie, which remembers the
// state, nonce, PKCE verifier and r.URL.RawQuery (for the console to return
// to) for Callback. On error it writes nothing; HTTPStatus maps the error.
func (p *Providers) Login(w http.ResponseWriter, r *http.Request, id string) error {
	return p.start(w, r, id, "")
}

// Link starts a sign-in with provider id whose identity is to be linked
// to a signed-in user rather than sign anyone in: session names that
// user's session, and Callback hands it back in Started.Link, sealed in
// the login cookie so no one can swap it. The caller checks at the
// callback that the same session is still signed in.
func (p *Providers) Link(w http.ResponseWriter, r *http.Request, id, session string) error {
	if session == "" {
		return fmt.Errorf("%w: linking needs a signed-in session", ErrSignInFailed)
	}
	return p.start(w, r, id, session)
}

// Started is what Login or Link remembered for Callback.
type Started struct {
	// Query is the query string the sign-in started with.
	Query string
	// Link is the session given to Link; "" for a plain sign-in.
	Link string
}

func (p *Providers) start(w http.ResponseWriter, r *http.Request, id, link string) error {
	pr := p.byID[id]
	if pr == nil {
		return ErrUnknownProvider
	}
	d, err := pr.discover(r.Context())
	if err != nil {
		return err
	}
	query := r.URL.RawQuery
	if len(query) > maxReturnQuery {
		query = ""
	}
	st := loginState{
		Provider: id,
		State:    randomToken(),
		Nonce:    randomToken(),
		Verifier: oauth2.GenerateVerifier(),
		Query:    query,
		Link:     link,
		Expires:  p.now().Add(loginTTL).Unix(),
	}
	value, err := p.sealer.seal(st)
	if err != nil {
		return err
	}
	http.SetCookie(w, p.cookie(value, int(loginTTL/time.Second)))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, d.oauth.AuthCodeURL(st.State, gooidc.Nonce(st.Nonce), oauth2.S256ChallengeOption(st.Verifier)), http.StatusFound)
	return nil
}

// Callback finishes a sign-in at provider id's redirect URL: it checks the
// state against the login cookie, exchanges the code (with the PKCE
// verifier), verifies the ID token (signature, issuer, audience, expiry,
// nonce) and reads the identity. It returns what Login or Link
// remembered. The login cookie is cleared whatever the outcome: a sign-in
// attempt is good for one callback. The caller writes the response.
func (p *Providers) Callback(w http.ResponseWriter, r *http.Request, id string) (Identity, Started, error) {
	pr := p.byID[id]
	if pr == nil {
		return Identity{}, Started{}, ErrUnknownProvider
	}
	cookie, cookieErr := r.Cookie(cookieName)
	http.SetCookie(w, p.cookie("", -1))
	w.Header().Set("Cache-Control", "no-store")
	if cookieErr != nil {
		return Identity{}, Started{}, fmt.Errorf("%w: no sign-in was started in this browser, or it expired; start again", ErrInvalidState)
	}
	st, err := p.sealer.open(cookie.Value, id)
	if err != nil {
		return Identity{}, Started{}, fmt.Errorf("%w: the sign-in was started elsewhere or by another server; start again", ErrInvalidState)
	}
	expires := time.Unix(st.Expires, 0)
	if p.now().After(expires) {
		return Identity{}, Started{}, fmt.Errorf("%w: the sign-in took too long; start again", ErrInvalidState)
	}
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(st.State)) != 1 {
		return Identity{}, Started{}, fmt.Errorf("%w: the state does not match this browser's sign-in", ErrInvalidState)
	}
	if !p.consume(st.State, expires) {
		return Identity{}, Started{}, fmt.Errorf("%w: this sign-in was already completed", ErrInvalidState)
	}
	if e := q.Get("error"); e != "" {
		// Only the standard error code is repeated: the description is
		// free text anyone can put in a link.
		return Identity{}, Started{}, fmt.Errorf("%w: the provider answered %s", ErrSignInFailed, safeCode(e))
	}
	code := q.Get("code")
	if code == "" {
		return Identity{}, Started{}, fmt.Errorf("%w: the provider sent no authorization code", ErrSignInFailed)
	}

	d, err := pr.discover(r.Context())
	if err != nil {
		return Identity{}, Started{}, err
	}
	ctx, cancel := context.WithTimeout(gooidc.ClientContext(r.Context(), pr.client), exchangeTimeout)
	defer cancel()
	secrets := []string{code, st.Verifier, st.Nonce, pr.secret}

	tok, err := d.oauth.Exchange(ctx, code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		return Identity{}, Started{}, pr.exchangeError(err, secrets)
	}
	rawID, _ := tok.Extra("id_token").(string)
	if rawID == "" {
		return Identity{}, Started{}, fmt.Errorf("%w: the provider sent no ID token (is the openid scope allowed?)", ErrSignInFailed)
	}
	secrets = append(secrets, rawID, tok.AccessToken, tok.RefreshToken)
	idt, err := d.verifier.Verify(ctx, rawID)
	if err != nil {
		return Identity{}, Started{}, fmt.Errorf("%w: the ID token did not verify: %s", ErrSignInFailed, redact(err.Error(), secrets))
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(st.Nonce)) != 1 {
		return Identity{}, Started{}, fmt.Errorf("%w: the ID token's nonce does not match this sign-in", ErrSignInFailed)
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return Identity{}, Started{}, fmt.Errorf("%w: the access token does not match the ID token", ErrSignInFailed)
		}
	}
	claims := map[string]any{}
	if err := idt.Claims(&claims); err != nil {
		return Identity{}, Started{}, fmt.Errorf("%w: the ID token's claims are unreadable", ErrSignInFailed)
	}
	pr.addUserinfo(ctx, d, tok, idt.Subject, claims)

	ident := Identity{
		ProviderID:    id,
		Issuer:        idt.Issuer,
		Subject:       idt.Subject,
		Username:      stringClaim(claims, pr.cfg.UsernameClaim),
		Name:          stringClaim(claims, pr.cfg.NameClaim),
		Email:         stringClaim(claims, pr.cfg.EmailClaim),
		EmailVerified: boolClaim(claims, "email_verified"),
	}
	if ident.Username == "" && ident.Email != "" {
		ident.Username, _, _ = strings.Cut(ident.Email, "@")
	}
	if ident.Username == "" {
		ident.Username = ident.Subject
	}
	if ident.Name == "" {
		ident.Name = ident.Username
	}
	return ident, Started{Query: st.Query, Link: st.Link}, nil
}

// discover fetches the provider's metadata once; until that succeeds every
// use tries again.
func (pr *provider) discover(ctx context.Context) (*discovered, error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.ready != nil {
		return pr.ready, nil
	}
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	op, err := gooidc.NewProvider(gooidc.ClientContext(ctx, pr.client), pr.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("%w: discovery for %q failed: %s", ErrProviderUnavailable, pr.cfg.ID, redact(err.Error(), []string{pr.secret}))
	}
	pr.ready = &discovered{
		provider: op,
		oauth: &oauth2.Config{
			ClientID:     pr.cfg.ClientID,
			ClientSecret: pr.secret,
			// AuthStyle stays auto-detect: providers differ on basic auth
			// versus form fields, and oauth2 remembers what worked.
			Endpoint:    op.Endpoint(),
			RedirectURL: pr.redirectURL,
			Scopes:      pr.cfg.Scopes,
		},
		verifier: op.Verifier(&gooidc.Config{ClientID: pr.cfg.ClientID, Now: pr.now}),
	}
	return pr.ready, nil
}

// exchangeError turns a failed code exchange into a user-safe error. A
// provider's error description is left out: some echo the request's code
// or even the client secret back.
func (pr *provider) exchangeError(err error, secrets []string) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		switch code := re.ErrorCode; {
		case code == "server_error" || code == "temporarily_unavailable":
			return fmt.Errorf("%w: the token endpoint answered %s", ErrProviderUnavailable, code)
		case code != "":
			return fmt.Errorf("%w: the provider refused the authorization code (%s)", ErrSignInFailed, safeCode(code))
		case status >= 500:
			return fmt.Errorf("%w: the token endpoint answered HTTP %d", ErrProviderUnavailable, status)
		default:
			return fmt.Errorf("%w: the token endpoint answered HTTP %d", ErrSignInFailed, status)
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%w: the token endpoint could not be reached: %s", ErrProviderUnavailable, redact(ue.Err.Error(), secrets))
	}
	return fmt.Errorf("%w: the token response was not usable: %s", ErrProviderUnavailable, redact(err.Error(), secrets))
}

// addUserinfo fills the configured claims the ID token lacks from the
// userinfo endpoint (some providers keep ID tokens minimal). It is best
// effort: the ID token alone is enough to sign in. Userinfo claims count
// only when their subject is the ID token's (OIDC Core §5.3.2).
func (pr *provider) addUserinfo(ctx context.Context, d *discovered, tok *oauth2.Token, subject string, claims map[string]any) {
	wanted := []string{pr.cfg.UsernameClaim, pr.cfg.NameClaim, pr.cfg.EmailClaim}
	missing := slices.ContainsFunc(wanted, func(c string) bool { return stringClaim(claims, c) == "" })
	if !missing || d.provider.UserInfoEndpoint() == "" || tok.AccessToken == "" {
		return
	}
	info, err := d.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil || info.Subject != subject {
		return
	}
	extra := map[string]any{}
	if info.Claims(&extra) != nil {
		return
	}
	for _, c := range append(wanted, "email_verified") {
		if _, ok := claims[c]; !ok {
			if v, ok := extra[c]; ok {
				claims[c] = v
			}
		}
	}
}

// consume records a state as used; false if it already was. Entries are
// dropped once their cookie has expired, since the cookie is then refused
// anyway.
func (p *Providers) consume(state string, until time.Time) bool {
	p.usedMu.Lock()
	defer p.usedMu.Unlock()
	now := p.now()
	for s, t := range p.used {
		if now.After(t) {
			delete(p.used, s)
		}
	}
	if _, ok := p.used[state]; ok {
		return false
	}
	p.used[state] = until
	return true
}

func (p *Providers) cookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name:     cookieName,
		Value:    value,
		Path:     p.cookiePath,
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   p.secure,
		// Lax still sends it on the provider's top-level redirect back.
		SameSite: http.SameSiteLaxMode,
	}
}

// stringClaim reads a claim as a string; numbers count too (some providers
// use numeric user ids).
func stringClaim(claims map[string]any, name string) string {
	switch v := claims[name].(type) {
	case string:
		return strings.TrimSpace(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// boolClaim reads a boolean claim, also from the string "true" that some
// providers send.
func boolClaim(claims map[string]any, name string) bool {
	switch v := claims[name].(type) {
	case bool:
		return v
	case string:
		b, _ := strconv.ParseBool(v)
		return b
	}
	return false
}

// safeCode passes an OAuth error code on only if it looks like one.
func safeCode(code string) string {
	if len(code) > 64 || strings.TrimLeft(code, "abcdefghijklmnopqrstuvwxyz_") != "" {
		return "an error"
	}
	return code
}

// redact removes known secrets from text taken from another library and
// shortens it, so it can go into a message for the user.
func redact(msg string, secrets []string) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	if r := []rune(msg); len(r) > 300 {
		msg = string(r[:300]) + "…"
	}
	return msg
}
