package apiserver_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/apiserver"
	"github.com/bastion-dev/bastion/internal/ids"
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
	return ssoFlow(t, b, "/api/auth/oidc/mock/login?"+query, nil)
}

// ssoFlow follows a single sign-on flow that starts at path until it
// lands on a console page, and returns that page. beforeCallback, when
// set, runs just before the browser comes back to the callback.
func ssoFlow(t *testing.T, b *browser, path string, beforeCallback func()) *url.URL {
	t.Helper()
	var landed *url.URL
	b.c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		landed = req.URL
		if !strings.HasPrefix(req.URL.Path, "/api/") && req.URL.Host == strings.TrimPrefix(b.base, "http://") {
			return http.ErrUseLastResponse // the console page: stop here
		}
		if strings.HasSuffix(req.URL.Path, "/redirect") && beforeCallback != nil {
			beforeCallback()
		}
		return nil
	}
	defer func() { b.c.CheckRedirect = nil }()
	if code, data := b.call("GET", path, nil); code != http.StatusFound {
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

// TestOIDC_neverTakesOverAPasswordUserOrAnAdmin: a provider identity
// whose verified email is that of a user with a password, or of an admin,
// signs no one in and links nothing: whoever controls that identity at the
// provider must not become the account here. An unverified email never
// links. Only an external user made ahead (kubectl), not an admin, is
// linked by its email.
func TestOIDC_neverTakesOverAPasswordUserOrAnAdmin(t *testing.T) {
	e := startEnv(t)
	m, base := ssoServer(t, e, false)
	local, _ := e.newUser(t, "localsso", false)
	boss, _ := e.newUser(t, "bosssso", true)

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

	// Verified, but the account has a password, or is an admin: refused,
	// with the way to link it.
	for _, victim := range []*bastionv1.User{local, boss} {
		m.QueueUser(&mockoidc.MockUser{Subject: "sub-real-" + victim.Name, Email: victim.Spec.Email, EmailVerified: true, PreferredUsername: "whatever"})
		b2 := e.browser(t)
		b2.base = base
		landed := ssoSignIn(t, b2, "")
		if landed.Path != "/auth/login" || !strings.Contains(landed.Query().Get("error"), "sign in to it with its password, then link") {
			t.Fatalf("a verified email of %s landed at %v, want the sign-in page saying to link from the account", victim.Spec.Username, landed)
		}
		if code, _ := b2.call("GET", "/api/user", nil); code != http.StatusUnauthorized {
			t.Fatalf("the refused sign-in left a session: GET /api/user = %d", code)
		}
		after := &bastionv1.User{}
		if err := e.K8s.Get(t.Context(), clientKeyOf(victim), after); err != nil {
			t.Fatal(err)
		}
		if link := after.Annotations[apiserver.AnnotationOIDCIdentity]; link != "" {
			t.Fatalf("%s was linked to %q on its own", victim.Spec.Username, link)
		}
	}

	// An external user made ahead, not an admin: linked by verified email.
	n := userSeq.Add(1)
	ahead, err := e.Users.CreateExternal(t.Context(), bastionv1.UserSpec{
		Username: fmt.Sprintf("ahead-%d", n), Name: "Ahead", Email: fmt.Sprintf("ahead-%d@corp.test", n)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitUserID(t, e, ahead)
	m.QueueUser(&mockoidc.MockUser{Subject: "sub-ahead", Email: ahead.Spec.Email, EmailVerified: true, PreferredUsername: "x"})
	b3 := e.browser(t)
	b3.base = base
	ssoSignIn(t, b3, "")
	b3.must("GET", "/api/user", nil, http.StatusOK, &me)
	if me.Username != ahead.Spec.Username {
		t.Fatalf("a verified email of an external user made ahead signed in as %+v", me)
	}
}

// waitUserID waits until the User controller has given u its id.
func waitUserID(t *testing.T, e *apiEnv, u *bastionv1.User) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := e.K8s.Get(t.Context(), clientKeyOf(u), u); err == nil {
			if _, ok := ids.FromLabels(u); ok {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("user %s got no id", u.Name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestOIDC_aSignedInUserLinksTheirIdentity: the owner of a password
// account, signed in, links a provider identity; that identity then signs
// in as them. Linking needs a browser session of this site, one that is
// still signed in at the callback, and an identity nobody else has.
func TestOIDC_aSignedInUserLinksTheirIdentity(t *testing.T) {
	e := startEnv(t)
	m, base := ssoServer(t, e, false)
	local, password := e.newUser(t, "linker", false)
	b := e.signInAt(t, base, local.Spec.Username, password)

	// Refused: not signed in, a token, a page on another site.
	anon := e.browser(t)
	anon.base = base
	if code, _ := anon.call("GET", "/api/auth/oidc/mock/link", nil); code != http.StatusUnauthorized {
		t.Fatalf("linking without a session = %d, want 401", code)
	}
	script := e.tokenScript(t, b)
	if code, data := script.call("GET", "/api/auth/oidc/mock/link", nil); code != http.StatusForbidden {
		t.Fatalf("linking with an API token = %d %s, want 403", code, data)
	}
	b.header.Set("Sec-Fetch-Site", "cross-site")
	if code, data := b.call("GET", "/api/auth/oidc/mock/link", nil); code != http.StatusForbidden {
		t.Fatalf("linking from another site = %d %s, want 403", code, data)
	}
	b.header.Del("Sec-Fetch-Site")

	// The owner links it.
	m.QueueUser(&mockoidc.MockUser{Subject: "sub-link-" + local.Name, Email: "elsewhere@corp.test", EmailVerified: true, PreferredUsername: "x"})
	if landed := ssoFlow(t, b, "/api/auth/oidc/mock/link?next=%2Fsettings", nil); landed.Path != "/" || landed.Query().Get("next") != "/settings" {
		t.Fatalf("after linking the browser went to %v", landed)
	}
	linked := &bastionv1.User{}
	if err := e.K8s.Get(t.Context(), clientKeyOf(local), linked); err != nil {
		t.Fatal(err)
	}
	if got := linked.Annotations[apiserver.AnnotationOIDCIdentity]; got != "mock|sub-link-"+local.Name {
		t.Fatalf("link annotation = %q", got)
	}
	m.QueueUser(&mockoidc.MockUser{Subject: "sub-link-" + local.Name, Email: "elsewhere@corp.test", EmailVerified: true, PreferredUsername: "x"})
	again := e.browser(t)
	again.base = base
	ssoSignIn(t, again, "")
	var me apiUser
	again.must("GET", "/api/user", nil, http.StatusOK, &me)
	if me.ID != userIDOf(t, local) {
		t.Fatalf("the linked identity signed in as %+v, want %d", me, userIDOf(t, local))
	}

	// Another user cannot take the same identity over.
	other, otherPassword := e.newUser(t, "linkthief", false)
	thief := e.signInAt(t, base, other.Spec.Username, otherPassword)
	m.QueueUser(&mockoidc.MockUser{Subject: "sub-link-" + local.Name, Email: "elsewhere@corp.test", EmailVerified: true, PreferredUsername: "x"})
	if landed := ssoFlow(t, thief, "/api/auth/oidc/mock/link", nil); !strings.Contains(landed.Query().Get("error"), "already linked to another user") {
		t.Fatalf("linking an identity linked elsewhere landed at %v, want the refusal", landed)
	}
	// A link whose session signed out before the callback links nothing.
	m.QueueUser(&mockoidc.MockUser{Subject: "sub-late-" + other.Name, Email: "late@corp.test", EmailVerified: true, PreferredUsername: "x"})
	landed := ssoFlow(t, thief, "/api/auth/oidc/mock/link", func() {
		thief.must("POST", "/api/auth/logout", nil, http.StatusNoContent, nil)
	})
	if !strings.Contains(landed.Query().Get("error"), "sign in again") {
		t.Fatalf("a link after sign-out landed at %v, want the refusal", landed)
	}
	after := &bastionv1.User{}
	if err := e.K8s.Get(t.Context(), clientKeyOf(other), after); err != nil {
		t.Fatal(err)
	}
	if got := after.Annotations[apiserver.AnnotationOIDCIdentity]; got != "" {
		t.Fatalf("the refused links left %q on %s", got, other.Spec.Username)
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
