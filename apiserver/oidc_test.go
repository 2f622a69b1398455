package apiserver_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/apiserver"
	"github.com/bastion-dev/bastion/internal/oidc"
)

// ssoServer runs a real OpenID Connect provider (mockoidc) and an API
// server that offers it as "mock".
func ssoServer(t *testing.T, e *apiEnv, passwordOff bool) (*mockoidc.MockOIDC, string) {
	t.Helper()
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	base := e.serve(t, func(publicURL string, o *apiserver.Options) {
		p, err := oidc.New(t.Context(), []oidc.ProviderConfig{{
			ID: "mock", Name: "Mock SSO", Color: "#123456", Issuer: m.Issuer(), ClientID: m.ClientID, ClientSecret: m.ClientSecret,
		}}, publicURL)
		if err != nil {
			t.Fatal(err)
		}
		o.OIDC, o.DisablePasswordLogin = p, passwordOff
	})
	return m, base
}

// ssoSignIn walks the browser from the console's button through the
// provider and back, and returns where it landed.
func ssoSignIn(t *testing.T, b *browser, query string) *url.URL {
	t.Helper()
	var landed *url.URL
	b.c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		landed = req.URL
		if !strings.HasPrefix(req.URL.Path, "/api/") && req.URL.Host == strings.TrimPrefix(b.base, "http://") {
			return http.ErrUseLastResponse // the console page: stop here
		}
		return nil
	}
	defer func() { b.c.CheckRedirect = nil }()
	if code, data := b.call("GET", "/api/auth/oidc/mock/login?"+query, nil); code != http.StatusFound {
		t.Fatalf("single sign-on ended with %d %s at %v", code, data, landed)
	}
	return landed
}

func TestOIDC_signInEndToEndCreatesThenReusesAnExternalUser(t *testing.T) {
	e := startEnv(t)
	m, base := ssoServer(t, e, false)
	b := e.browser(t)
	b.base = base

	var opts struct {
		OIDCProviders []struct {
			ID, Name, Color string
		} `json:"oidc_providers"`
		LoginWithPassword bool `json:"login_with_password"`
	}
	b.must("GET", "/api/auth/login", nil, http.StatusOK, &opts)
	if len(opts.OIDCProviders) != 1 || opts.OIDCProviders[0].ID != "mock" || opts.OIDCProviders[0].Name != "Mock SSO" || !opts.LoginWithPassword {
		t.Fatalf("sign-in options = %+v", opts)
	}

	login := fmt.Sprintf("sso-%d", userSeq.Add(1))
	m.QueueUser(&mockoidc.MockUser{Subject: "sub-" + login, Email: login + "@corp.test", EmailVerified: true, PreferredUsername: login})
	landed := ssoSignIn(t, b, "next=%2Fproject%2F3")
	if landed.Path != "/" || landed.Query().Get("next") != "/project/3" {
		t.Fatalf("after sign-in the browser went to %v, want / with the query kept", landed)
	}
	var me apiUser
	b.must("GET", "/api/user", nil, http.StatusOK, &me)
	if me.Username != login || !me.External || me.Email != login+"@corp.test" {
		t.Fatalf("signed in as %+v, want a new external user %s", me, login)
	}

	// The same person again (a new browser) is the same user.
	m.QueueUser(&mockoidc.MockUser{Subject: "sub-" + login, Email: login + "@corp.test", EmailVerified: true, PreferredUsername: login})
	again := e.browser(t)
	again.base = base
	ssoSignIn(t, again, "")
	var me2 apiUser
	again.must("GET", "/api/user", nil, http.StatusOK, &me2)
	if me2.ID != me.ID {
		t.Fatalf("second sign-in made user %d, want %d", me2.ID, me.ID)
	}
	// An external user has no password to change.
	if code, _ := again.call("POST", fmt.Sprintf("/api/users/%d/password", me.ID), map[string]string{"password": "x"}); code != http.StatusBadRequest {
		t.Fatalf("external user's password change = %d", code)
	}
}

func TestOIDC_linksByVerifiedEmailOnly(t *testing.T) {
	e := startEnv(t)
	m, base := ssoServer(t, e, false)
	local, _ := e.newUser(t, "localsso", false)

	// Unverified: a lookalike must not become the local user.
	m.QueueUser(&mockoidc.MockUser{Subject: "sub-fake-" + local.Name, Email: local.Spec.Email, EmailVerified: false, PreferredUsername: local.Spec.Username})
	b := e.browser(t)
	b.base = base
	ssoSignIn(t, b, "")
	var me apiUser
	b.must("GET", "/api/user", nil, http.StatusOK, &me)
	if me.ID == userIDOf(t, local) || !me.External || me.Username == local.Spec.Username || me.Email == local.Spec.Email {
		t.Fatalf("an unverified email signed in as %+v; the local user is %d", me, userIDOf(t, local))
	}

	// Verified: it is the same person, linked to the local account.
	m.QueueUser(&mockoidc.MockUser{Subject: "sub-real-" + local.Name, Email: local.Spec.Email, EmailVerified: true, PreferredUsername: "whatever"})
	b2 := e.browser(t)
	b2.base = base
	ssoSignIn(t, b2, "")
	b2.must("GET", "/api/user", nil, http.StatusOK, &me)
	if me.ID != userIDOf(t, local) {
		t.Fatalf("a verified email signed in as %+v, want the local user %d", me, userIDOf(t, local))
	}
	linked := &bastionv1.User{}
	if err := e.K8s.Get(t.Context(), clientKeyOf(local), linked); err != nil {
		t.Fatal(err)
	}
	if linked.Annotations[apiserver.AnnotationOIDCIdentity] != "mock|sub-real-"+local.Name {
		t.Fatalf("link annotation = %q", linked.Annotations[apiserver.AnnotationOIDCIdentity])
	}
}

func TestOIDC_passwordSignInCanBeTurnedOff(t *testing.T) {
	e := startEnv(t)
	_, base := ssoServer(t, e, true)
	user, pw := e.newUser(t, "nopw", false)
	b := e.browser(t)
	b.base = base
	var opts struct {
		LoginWithPassword bool `json:"login_with_password"`
	}
	b.must("GET", "/api/auth/login", nil, http.StatusOK, &opts)
	if opts.LoginWithPassword {
		t.Fatal("login_with_password is true with password sign-in off")
	}
	code, data := b.call("POST", "/api/auth/login", map[string]string{"auth": user.Spec.Username, "password": pw})
	if code != http.StatusForbidden || !strings.Contains(errorOf(t, data), "turned off") {
		t.Fatalf("password sign-in when off = %d %s", code, data)
	}
	if code, _ := b.call("GET", "/api/auth/oidc/nope/login", nil); code != http.StatusNotFound {
		t.Fatalf("unknown provider = %d", code)
	}
}

func TestOIDC_badCallbackGoesBackToSignInWithTheReason(t *testing.T) {
	e := startEnv(t)
	_, base := ssoServer(t, e, false)
	b := e.browser(t)
	b.base = base
	b.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, _ := http.NewRequest("GET", base+"/api/auth/oidc/mock/redirect?state=forged&code=x", nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || loc.Path != "/auth/login" || loc.Query().Get("error") == "" {
		t.Fatalf("forged callback = %d to %v, want a redirect to /auth/login?error=…", resp.StatusCode, loc)
	}
	if code, _ := b.call("GET", "/api/user", nil); code != http.StatusUnauthorized {
		t.Fatalf("a forged callback signed someone in: %d", code)
	}
}
