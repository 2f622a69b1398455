package oidc

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

// These tests run the whole flow over loopback HTTP against mockoidc, a real
// (if small) OpenID provider: discovery, JWKS, authorize with PKCE, token
// endpoint, RS256-signed ID tokens. Nothing of go-oidc or oauth2 is faked.

// testUser is a mockoidc user whose ID token and userinfo claims the test
// chooses, so claims like "name" that mockoidc's own user lacks can be had.
type testUser struct {
	sub      string
	claims   map[string]any // added to the ID token
	userinfo map[string]any // served by the userinfo endpoint
}

func (u *testUser) ID() string { return u.sub }

func (u *testUser) Userinfo([]string) ([]byte, error) { return json.Marshal(u.userinfo) }

func (u *testUser) Claims(_ []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	return &extraClaims{IDTokenClaims: base, extra: u.claims}, nil
}

// extraClaims is the standard claims mockoidc fills (iss, aud, exp, nonce,
// ...) plus the test's own.
type extraClaims struct {
	*mockoidc.IDTokenClaims
	extra map[string]any
}

func (c *extraClaims) MarshalJSON() ([]byte, error) {
	base, err := json.Marshal(c.IDTokenClaims)
	if err != nil {
		return nil, err
	}
	all := map[string]any{}
	if err := json.Unmarshal(base, &all); err != nil {
		return nil, err
	}
	maps.Copy(all, c.extra)
	return json.Marshal(all)
}

func runProvider(t *testing.T) *mockoidc.MockOIDC {
	t.Helper()
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return m
}

// env is the console side: an HTTP server mounting Login and Callback the
// way the API does, over Providers configured for the running provider.
type env struct {
	srv      *httptest.Server
	login    *Providers // serves /login
	callback *Providers // serves /redirect (another replica in one test)
}

type callbackResult struct {
	Identity Identity `json:"identity"`
	Query    string   `json:"query"`
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{}
	r := chi.NewRouter()
	r.Get(RoutePrefix+"/{id}/login", func(w http.ResponseWriter, r *http.Request) {
		if err := e.login.Login(w, r, chi.URLParam(r, "id")); err != nil {
			http.Error(w, err.Error(), HTTPStatus(err))
		}
	})
	r.Get(RoutePrefix+"/{id}/redirect", func(w http.ResponseWriter, r *http.Request) {
		ident, started, err := e.callback.Callback(w, r, chi.URLParam(r, "id"))
		if err != nil {
			http.Error(w, err.Error(), HTTPStatus(err))
			return
		}
		_ = json.NewEncoder(w).Encode(callbackResult{Identity: ident, Query: started.Query})
	})
	e.srv = httptest.NewServer(r)
	t.Cleanup(e.srv.Close)
	return e
}

func mockConfig(m *mockoidc.MockOIDC, id string) ProviderConfig {
	return ProviderConfig{ID: id, Name: "Mock " + id, Issuer: m.Issuer(), ClientID: m.ClientID, ClientSecret: m.ClientSecret}
}

// setup runs a provider and a console that knows it as "mock".
func setup(t *testing.T, opts ...Option) (*mockoidc.MockOIDC, *env) {
	t.Helper()
	m := runProvider(t)
	e := newEnv(t)
	p, err := New(t.Context(), []ProviderConfig{mockConfig(m, "mock")}, e.srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	e.login, e.callback = p, p
	return m, e
}

// browser keeps cookies and follows no redirect by itself, so each hop can
// be looked at.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{
		Jar:           jar,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

type response struct {
	status int
	header http.Header
	body   string
}

func get(t *testing.T, c *http.Client, u string) response {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(body)}
}

func redirectTarget(t *testing.T, r response) *url.URL {
	t.Helper()
	if r.status != http.StatusFound {
		t.Fatalf("status %d, want 302; body %q", r.status, r.body)
	}
	u, err := url.Parse(r.header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// toProvider runs Login and returns the provider's authorize URL.
func toProvider(t *testing.T, c *http.Client, e *env, id, query string) *url.URL {
	t.Helper()
	u := e.srv.URL + RoutePrefix + "/" + id + "/login"
	if query != "" {
		u += "?" + query
	}
	return redirectTarget(t, get(t, c, u))
}

// toCallback runs Login and the provider's authorize step, and returns the
// callback URL the provider sends the browser to (not yet visited).
func toCallback(t *testing.T, c *http.Client, e *env, id, query string) *url.URL {
	t.Helper()
	return authorize(t, c, toProvider(t, c, e, id, query))
}

// authorize visits the provider's authorize URL (mockoidc signs the queued
// user in at once) and returns where it sends the browser back to.
func authorize(t *testing.T, c *http.Client, authz *url.URL) *url.URL {
	t.Helper()
	return redirectTarget(t, get(t, c, authz.String()))
}

func finish(t *testing.T, c *http.Client, callback *url.URL) callbackResult {
	t.Helper()
	r := get(t, c, callback.String())
	if r.status != http.StatusOK {
		t.Fatalf("callback: status %d: %s", r.status, r.body)
	}
	var res callbackResult
	if err := json.Unmarshal([]byte(r.body), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// refused asserts a callback failed with status and a message containing
// want, and that no secret of the flow leaked into the message.
func refused(t *testing.T, r response, status int, want string, secrets ...string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %q", r.status, status, r.body)
	}
	if !strings.Contains(r.body, want) {
		t.Errorf("body %q does not mention %q", r.body, want)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(r.body, s) {
			t.Errorf("body %q leaks a secret", r.body)
		}
	}
}

func loginCookie(c *http.Client, e *env) *http.Cookie {
	u, _ := url.Parse(e.srv.URL + RoutePrefix + "/mock/redirect")
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == cookieName {
			return ck
		}
	}
	return nil
}

func TestFullFlow(t *testing.T) {
	m := runProvider(t)
	e := newEnv(t)
	// The secret comes from a file, with the newline editors leave.
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte(m.ClientSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := mockConfig(m, "mock")
	cfg.ClientSecret, cfg.ClientSecretFile = "", secretFile
	cfg.Color, cfg.Icon = "#4285f4", "openid"
	p, err := New(t.Context(), []ProviderConfig{cfg}, e.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	e.login, e.callback = p, p

	if got, want := p.List(), []Public{{ID: "mock", Name: "Mock mock", Color: "#4285f4", Icon: "openid"}}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("List() = %+v, want %+v", got, want)
	}

	m.QueueUser(&testUser{sub: "u-42", claims: map[string]any{
		"preferred_username": "ada", "name": "Ada Lovelace", "email": "ada@example.com", "email_verified": true,
	}})
	c := browser(t)

	// Login: a redirect to the provider's authorize endpoint, with state,
	// nonce and an S256 PKCE challenge, and the login cookie.
	const returnQuery = "return=%2Fproject%2F3%2Ftemplates&tab=2"
	authz := toProvider(t, c, e, "mock", returnQuery)
	if got := authz.Scheme + "://" + authz.Host + authz.Path; got != m.AuthorizationEndpoint() {
		t.Fatalf("Login redirected to %s, want the authorize endpoint %s", got, m.AuthorizationEndpoint())
	}
	q := authz.Query()
	for k, want := range map[string]string{
		"response_type":         "code",
		"client_id":             m.ClientID,
		"redirect_uri":          e.srv.URL + "/api/auth/oidc/mock/redirect",
		"scope":                 "openid profile email",
		"code_challenge_method": "S256",
	} {
		if q.Get(k) != want {
			t.Errorf("authorize %s = %q, want %q", k, q.Get(k), want)
		}
	}
	for _, k := range []string{"state", "nonce", "code_challenge"} {
		if len(q.Get(k)) < 16 {
			t.Errorf("authorize %s = %q, want a random value", k, q.Get(k))
		}
	}
	if q.Get("client_secret") != "" || strings.Contains(authz.String(), m.ClientSecret) {
		t.Error("the client secret went to the browser")
	}
	ck := loginCookie(c, e)
	if ck == nil {
		t.Fatal("Login set no cookie scoped to the callback")
	}
	if strings.Contains(ck.Value, q.Get("state")) || strings.Contains(ck.Value, returnQuery) {
		t.Error("the login cookie is readable; it should be sealed")
	}

	// The provider signs the user in and sends the browser back.
	cb := authorize(t, c, authz)
	if got := cb.Scheme + "://" + cb.Host + cb.Path; got != e.srv.URL+"/api/auth/oidc/mock/redirect" {
		t.Fatalf("provider redirected to %s", got)
	}
	res := finish(t, c, cb)
	want := Identity{
		ProviderID: "mock", Issuer: m.Issuer(), Subject: "u-42",
		Username: "ada", Name: "Ada Lovelace", Email: "ada@example.com", EmailVerified: true,
	}
	if res.Identity != want {
		t.Errorf("identity %+v, want %+v", res.Identity, want)
	}
	if res.Query != returnQuery {
		t.Errorf("remembered query %q, want %q", res.Query, returnQuery)
	}
	if loginCookie(c, e) != nil {
		t.Error("Callback left the login cookie in place")
	}
}

func TestLoginCookieAttributes(t *testing.T) {
	m := runProvider(t)
	for _, tc := range []struct {
		publicURL, path, redirect string
		secure                    bool
	}{
		{"http://127.0.0.1:3000", "/api/auth/oidc", "http://127.0.0.1:3000/api/auth/oidc/mock/redirect", false},
		{"https://bastion.example.test/ops/", "/ops/api/auth/oidc", "https://bastion.example.test/ops/api/auth/oidc/mock/redirect", true},
	} {
		p, err := New(t.Context(), []ProviderConfig{mockConfig(m, "mock")}, tc.publicURL)
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		long := "q=" + strings.Repeat("x", maxReturnQuery)
		if err := p.Login(w, httptest.NewRequest("GET", "/api/auth/oidc/mock/login?"+long, nil), "mock"); err != nil {
			t.Fatal(err)
		}
		resp := w.Result()
		cookies := resp.Cookies()
		if len(cookies) != 1 {
			t.Fatalf("%d cookies", len(cookies))
		}
		ck := cookies[0]
		if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != tc.path || ck.Secure != tc.secure || ck.MaxAge != 600 {
			t.Errorf("%s: cookie %+v", tc.publicURL, ck)
		}
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if got := loc.Query().Get("redirect_uri"); got != tc.redirect {
			t.Errorf("redirect_uri %q, want %q", got, tc.redirect)
		}
		if got, _ := p.RedirectURL("mock"); got != tc.redirect {
			t.Errorf("RedirectURL %q, want %q", got, tc.redirect)
		}
		// A query too long for a cookie is dropped rather than failing the
		// sign-in.
		st, err := p.sealer.open(ck.Value, "mock")
		if err != nil || st.Query != "" {
			t.Errorf("remembered %d bytes of query (err %v), want none", len(st.Query), err)
		}
	}
}

func TestClaimFallbacks(t *testing.T) {
	m, e := setup(t)
	for _, tc := range []struct {
		name string
		user mockoidc.User
		want Identity
	}{
		{"mockoidc default user", nil, Identity{Subject: "1234567890", Username: "jane.doe", Name: "jane.doe", Email: "jane.doe@example.com", EmailVerified: true}},
		{"email local part", &testUser{sub: "s-1", claims: map[string]any{"email": "grace@example.com", "email_verified": "true"}},
			Identity{Subject: "s-1", Username: "grace", Name: "grace", Email: "grace@example.com", EmailVerified: true}},
		{"subject", &testUser{sub: "s-2"}, Identity{Subject: "s-2", Username: "s-2", Name: "s-2"}},
		{"userinfo fills what the ID token lacks", &testUser{sub: "s-3",
			claims:   map[string]any{"preferred_username": "linus"},
			userinfo: map[string]any{"sub": "s-3", "name": "Linus T", "email": "linus@example.com", "email_verified": true, "preferred_username": "not-this"}},
			Identity{Subject: "s-3", Username: "linus", Name: "Linus T", Email: "linus@example.com", EmailVerified: true}},
		{"userinfo for another subject is ignored", &testUser{sub: "s-4",
			userinfo: map[string]any{"sub": "someone-else", "email": "mallory@example.com"}},
			Identity{Subject: "s-4", Username: "s-4", Name: "s-4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.user != nil {
				m.QueueUser(tc.user)
			}
			c := browser(t)
			res := finish(t, c, toCallback(t, c, e, "mock", ""))
			tc.want.ProviderID, tc.want.Issuer = "mock", m.Issuer()
			if res.Identity != tc.want {
				t.Errorf("identity %+v, want %+v", res.Identity, tc.want)
			}
		})
	}
}

func TestStateIsChecked(t *testing.T) {
	m, e := setup(t)
	secrets := []string{m.ClientSecret}

	t.Run("missing state", func(t *testing.T) {
		c := browser(t)
		cb := toCallback(t, c, e, "mock", "")
		q := cb.Query()
		q.Del("state")
		cb.RawQuery = q.Encode()
		refused(t, get(t, c, cb.String()), 400, "state does not match", append(secrets, q.Get("code"))...)
	})
	t.Run("wrong state", func(t *testing.T) {
		c := browser(t)
		cb := toCallback(t, c, e, "mock", "")
		q := cb.Query()
		q.Set("state", "forged-state-value")
		cb.RawQuery = q.Encode()
		refused(t, get(t, c, cb.String()), 400, "state does not match", append(secrets, q.Get("code"))...)
	})
	t.Run("another browser", func(t *testing.T) {
		// Login CSRF: a callback link made in the attacker's browser is
		// useless in the victim's, which holds no login cookie.
		cb := toCallback(t, browser(t), e, "mock", "")
		refused(t, get(t, browser(t), cb.String()), 400, "no sign-in was started", append(secrets, cb.Query().Get("code"))...)
	})
	t.Run("another provider's cookie", func(t *testing.T) {
		e2 := newEnv(t)
		p, err := New(t.Context(), []ProviderConfig{mockConfig(m, "mock"), mockConfig(m, "other")}, e2.srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		e2.login, e2.callback = p, p
		c := browser(t)
		cb := toCallback(t, c, e2, "mock", "")
		cb.Path = strings.Replace(cb.Path, "/mock/", "/other/", 1)
		refused(t, get(t, c, cb.String()), 400, "started elsewhere", secrets...)
	})
	t.Run("expired", func(t *testing.T) {
		c := browser(t)
		cb := toCallback(t, c, e, "mock", "")
		e.callback.now = func() time.Time { return time.Now().Add(loginTTL + time.Minute) }
		defer func() { e.callback.now = time.Now }()
		refused(t, get(t, c, cb.String()), 400, "took too long", secrets...)
	})
	t.Run("provider error", func(t *testing.T) {
		c := browser(t)
		authz := toProvider(t, c, e, "mock", "")
		cb, _ := url.Parse(e.srv.URL + RoutePrefix + "/mock/redirect")
		cb.RawQuery = url.Values{
			"state": {authz.Query().Get("state")}, "error": {"access_denied"},
			"error_description": {"<b>call +1 555 0100 to unlock</b>"},
		}.Encode()
		r := get(t, c, cb.String())
		refused(t, r, 401, "access_denied", "555 0100")
	})
}

func TestCodeIsChecked(t *testing.T) {
	m, e := setup(t)

	t.Run("tampered", func(t *testing.T) {
		c := browser(t)
		cb := toCallback(t, c, e, "mock", "")
		q := cb.Query()
		bad := q.Get("code") + "x"
		q.Set("code", bad)
		cb.RawQuery = q.Encode()
		// mockoidc's error description echoes the code back; it must not
		// reach the user.
		refused(t, get(t, c, cb.String()), 401, "invalid_grant", m.ClientSecret, bad)
	})

	t.Run("replayed", func(t *testing.T) {
		c := browser(t)
		cb := toCallback(t, c, e, "mock", "")
		code := cb.Query().Get("code")
		saved := loginCookie(c, e)
		finish(t, c, cb)

		// The same callback again, cookie and all, as someone who copied
		// both would send it.
		u, _ := url.Parse(e.srv.URL + RoutePrefix)
		c.Jar.SetCookies(u, []*http.Cookie{{Name: saved.Name, Value: saved.Value, Path: RoutePrefix}})
		refused(t, get(t, c, cb.String()), 400, "already completed", m.ClientSecret, code)

		// The used code in a fresh sign-in: the provider refuses it (it was
		// redeemed, and this attempt's PKCE verifier does not fit it).
		fresh := toProvider(t, c, e, "mock", "")
		replay, _ := url.Parse(e.srv.URL + RoutePrefix + "/mock/redirect")
		replay.RawQuery = url.Values{"state": {fresh.Query().Get("state")}, "code": {code}}.Encode()
		refused(t, get(t, c, replay.String()), 401, "invalid_grant", m.ClientSecret, code)
	})
}

func TestTokenEndpointOutage(t *testing.T) {
	m, e := setup(t)
	c := browser(t)
	cb := toCallback(t, c, e, "mock", "")
	// Twice: oauth2 tries the client secret in a header, then in the form.
	for range 2 {
		m.QueueError(&mockoidc.ServerError{Code: 503, Error: "temporarily_unavailable", Description: "maintenance, secret " + m.ClientSecret})
	}
	refused(t, get(t, c, cb.String()), 502, "temporarily_unavailable", m.ClientSecret, "maintenance")
}

func TestIDTokenIsVerified(t *testing.T) {
	t.Run("nonce", func(t *testing.T) {
		m, e := setup(t)
		c := browser(t)
		cb := toCallback(t, c, e, "mock", "")
		// Swap the nonce inside the sealed cookie (keeping the state and
		// verifier): the ID token then carries a nonce this sign-in did
		// not ask for, as a token injected from another flow would.
		ck := loginCookie(c, e)
		st, err := e.callback.sealer.open(ck.Value, "mock")
		if err != nil {
			t.Fatal(err)
		}
		st.Nonce = randomToken()
		v, _ := e.callback.sealer.seal(st)
		u, _ := url.Parse(e.srv.URL + RoutePrefix)
		c.Jar.SetCookies(u, []*http.Cookie{{Name: cookieName, Value: v, Path: RoutePrefix}})
		refused(t, get(t, c, cb.String()), 401, "nonce", m.ClientSecret)
	})

	t.Run("expired", func(t *testing.T) {
		m, e := setup(t)
		c := browser(t)
		cb := toCallback(t, c, e, "mock", "")
		m.FastForward(-time.Hour) // the provider issues a token that expired 50 minutes ago
		refused(t, get(t, c, cb.String()), 401, "expired", m.ClientSecret)
	})

	t.Run("signed with another key", func(t *testing.T) {
		m, err := mockoidc.NewServer(nil)
		if err != nil {
			t.Fatal(err)
		}
		other, err := mockoidc.RandomKeypair(2048)
		if err != nil {
			t.Fatal(err)
		}
		otherJWKS, err := other.JWKS()
		if err != nil {
			t.Fatal(err)
		}
		// The provider publishes a key that did not sign its tokens.
		_ = m.AddMiddleware(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == mockoidc.JWKSEndpoint {
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write(otherJWKS)
					return
				}
				next.ServeHTTP(w, r)
			})
		})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Start(ln, nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Shutdown() })
		e := newEnv(t)
		p, err := New(t.Context(), []ProviderConfig{mockConfig(m, "mock")}, e.srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		e.login, e.callback = p, p
		c := browser(t)
		refused(t, get(t, c, toCallback(t, c, e, "mock", "").String()), 401, "did not verify", m.ClientSecret)
	})

	t.Run("issuer mismatch", func(t *testing.T) {
		m := runProvider(t)
		e := newEnv(t)
		cfg := mockConfig(m, "mock")
		cfg.Issuer += "/" // discovery says otherwise, and tokens would too
		p, err := New(t.Context(), []ProviderConfig{cfg}, e.srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		e.login, e.callback = p, p
		r := get(t, browser(t), e.srv.URL+RoutePrefix+"/mock/login")
		refused(t, r, 502, "did not match", m.ClientSecret)
	})
}

// TestProviderDownAtStartup: New succeeds with the provider unreachable,
// Login reports it, and once the provider is up the next Login works.
func TestProviderDownAtStartup(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	cfg := ProviderConfig{ID: "mock", Issuer: "http://" + addr + mockoidc.IssuerBase, ClientID: m.ClientID, ClientSecret: m.ClientSecret}
	p, err := New(t.Context(), []ProviderConfig{cfg}, e.srv.URL)
	if err != nil {
		t.Fatalf("New with the provider down: %v", err)
	}
	e.login, e.callback = p, p
	refused(t, get(t, browser(t), e.srv.URL+RoutePrefix+"/mock/login"), 502, "unavailable", m.ClientSecret)

	ln, err = net.Listen("tcp", addr)
	if err != nil {
		// The port was free a moment ago; losing it now is a failure to
		// look into, not a pass.
		t.Fatalf("the provider's port %s was taken meanwhile: %v", addr, err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	c := browser(t)
	if res := finish(t, c, toCallback(t, c, e, "mock", "")); res.Identity.Username != "jane.doe" {
		t.Errorf("identity %+v", res.Identity)
	}
}

func TestUnknownProvider(t *testing.T) {
	_, e := setup(t)
	c := browser(t)
	refused(t, get(t, c, e.srv.URL+RoutePrefix+"/nope/login"), 404, "unknown sign-in provider")
	refused(t, get(t, c, e.srv.URL+RoutePrefix+"/nope/redirect?state=x&code=y"), 404, "unknown sign-in provider")

	w := httptest.NewRecorder()
	if err := e.login.Login(w, httptest.NewRequest("GET", "/", nil), "nope"); !errors.Is(err, ErrUnknownProvider) {
		t.Errorf("Login: %v", err)
	}
	if _, _, err := e.login.Callback(w, httptest.NewRequest("GET", "/", nil), "nope"); !errors.Is(err, ErrUnknownProvider) {
		t.Errorf("Callback: %v", err)
	}
	if _, err := e.login.RedirectURL("nope"); !errors.Is(err, ErrUnknownProvider) {
		t.Errorf("RedirectURL: %v", err)
	}
	if len(w.Result().Cookies()) != 0 {
		t.Error("an unknown provider's callback touched cookies")
	}
}

// TestSharedCookieKey: replicas sharing a cookie key finish each other's
// sign-ins; without one, a sign-in only finishes where it started.
func TestSharedCookieKey(t *testing.T) {
	m := runProvider(t)
	e := newEnv(t)
	newP := func(opts ...Option) *Providers {
		p, err := New(t.Context(), []ProviderConfig{mockConfig(m, "mock")}, e.srv.URL, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	key := []byte("a key shared by the replicas")
	e.login, e.callback = newP(WithCookieKey(key)), newP(WithCookieKey(key))
	c := browser(t)
	if res := finish(t, c, toCallback(t, c, e, "mock", "x=1")); res.Query != "x=1" {
		t.Errorf("query %q", res.Query)
	}

	e.login, e.callback = newP(), newP()
	c = browser(t)
	refused(t, get(t, c, toCallback(t, c, e, "mock", "").String()), 400, "started elsewhere", m.ClientSecret)
}

func TestNewErrors(t *testing.T) {
	ok := ProviderConfig{ID: "a", Issuer: "http://127.0.0.1:1/", ClientID: "c", ClientSecret: "S3CRET-in-config"}
	ref := ok
	ref.ClientSecret, ref.ClientSecretRef = "", &SecretRef{Name: "oidc", Key: "a"}
	missingFile := ok
	missingFile.ClientSecret, missingFile.ClientSecretFile = "", filepath.Join(t.TempDir(), "absent")
	for name, tc := range map[string]struct {
		cfgs      []ProviderConfig
		publicURL string
		want      string
	}{
		"public URL":        {[]ProviderConfig{ok}, "127.0.0.1:3000", "public URL"},
		"duplicate":         {[]ProviderConfig{ok, ok}, "http://127.0.0.1:3000", "used twice"},
		"unresolved ref":    {[]ProviderConfig{ref}, "http://127.0.0.1:3000", "not resolved"},
		"missing file":      {[]ProviderConfig{missingFile}, "http://127.0.0.1:3000", "client secret file"},
		"invalid":           {[]ProviderConfig{{ID: "a", Issuer: "http://127.0.0.1:1/", ClientSecret: "S3CRET-in-config"}}, "http://127.0.0.1:3000", "client id is required"},
		"two secret values": {[]ProviderConfig{{ID: "a", Issuer: "http://127.0.0.1:1/", ClientID: "c", ClientSecret: "S3CRET-in-config", ClientSecretFile: "/x"}}, "http://127.0.0.1:3000", "one way only"},
	} {
		_, err := New(t.Context(), tc.cfgs, tc.publicURL)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", name, err, tc.want)
		} else if strings.Contains(err.Error(), "S3CRET") {
			t.Errorf("%s: error %q leaks the secret", name, err)
		}
	}
}
