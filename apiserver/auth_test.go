package apiserver_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestSignIn_withUsernameOrEmailSetsBothCookies(t *testing.T) {
	e := startEnv(t)
	user, password := e.newUser(t, "signin", false)
	for _, login := range []string{user.Spec.Username, user.Spec.Email, strings.ToUpper(user.Spec.Email)} {
		b := e.signIn(t, login, password)
		u, _ := url.Parse(e.URL)
		cookies := map[string]*http.Cookie{}
		for _, c := range b.c.Jar.Cookies(u) {
			cookies[c.Name] = c
		}
		if cookies["semaphore"] == nil || cookies["bastion_session"] == nil {
			t.Fatalf("sign-in with %q set cookies %v, want semaphore and bastion_session", login, cookies)
		}
		var me struct {
			ID       int64  `json:"id"`
			Username string `json:"username"`
		}
		b.must("GET", "/api/user", nil, http.StatusOK, &me)
		if me.Username != user.Spec.Username || me.ID != userIDOf(t, user) {
			t.Fatalf("/api/user after sign-in with %q = %+v", login, me)
		}
	}
}

func TestSignIn_cookieFlags(t *testing.T) {
	e := startEnv(t)
	user, password := e.newUser(t, "flags", false)
	b := e.browser(t)
	req, _ := http.NewRequest("POST", e.URL+"/api/auth/login", strings.NewReader(`{"auth":"`+user.Spec.Username+`","password":"`+password+`"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_ = b
	var session, marker *http.Cookie
	for _, c := range resp.Cookies() {
		switch c.Name {
		case "bastion_session":
			session = c
		case "semaphore":
			marker = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Path != "/" {
		t.Fatalf("session cookie = %+v, want HttpOnly, SameSite=Lax, Path=/", session)
	}
	if marker == nil || marker.HttpOnly {
		t.Fatalf("marker cookie = %+v, want one readable by scripts", marker)
	}
	if strings.Contains(marker.Value, session.Value) || len(session.Value) < 64 {
		t.Fatalf("marker %q must carry no secret; session secret %q must be 256 bits", marker.Value, session.Value)
	}
}

func TestSignIn_wrongPasswordUnknownUserAndMissingFields(t *testing.T) {
	e := startEnv(t)
	user, _ := e.newUser(t, "wrong", false)
	b := e.browser(t)
	for _, tc := range []struct {
		body map[string]string
		code int
		msg  string
	}{
		{map[string]string{"auth": user.Spec.Username, "password": "not-it"}, 401, "Incorrect login or password"},
		{map[string]string{"auth": "nobody-here", "password": "x"}, 401, "Incorrect login or password"},
		{map[string]string{"auth": "", "password": "x"}, 400, "Username is required"},
		{map[string]string{"auth": user.Spec.Username, "password": ""}, 400, "Password is required"},
	} {
		code, data := b.call("POST", "/api/auth/login", tc.body)
		if code != tc.code || errorOf(t, data) != tc.msg {
			t.Errorf("login %v = %d %s, want %d %q", tc.body, code, data, tc.code, tc.msg)
		}
	}
	if code, _ := b.call("GET", "/api/user", nil); code != http.StatusUnauthorized {
		t.Fatalf("after failed sign-ins /api/user = %d, want 401", code)
	}
}

func TestSignIn_logoutEndsTheSessionOnTheServer(t *testing.T) {
	e := startEnv(t)
	user, password := e.newUser(t, "logout", false)
	b := e.signIn(t, user.Spec.Username, password)
	u, _ := url.Parse(e.URL)
	var stolen string
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "bastion_session" {
			stolen = c.Value
		}
	}
	b.must("POST", "/api/auth/logout", nil, http.StatusNoContent, nil)
	if code, _ := b.call("GET", "/api/user", nil); code != http.StatusUnauthorized {
		t.Fatalf("after logout /api/user = %d, want 401", code)
	}
	// A copy of the old cookie (kept by an attacker, or another tab) is
	// refused too: the server forgot the session.
	replay := e.browser(t)
	replay.c.Jar.SetCookies(u, []*http.Cookie{{Name: "bastion_session", Value: stolen, Path: "/"}})
	if code, data := replay.call("GET", "/api/user", nil); code != http.StatusUnauthorized {
		t.Fatalf("the old session cookie after logout = %d %s, want 401", code, data)
	}
}

func TestSignIn_passwordChangeEndsOtherSessionsButKeepsThisOne(t *testing.T) {
	e := startEnv(t)
	user, password := e.newUser(t, "pwchange", false)
	here := e.signIn(t, user.Spec.Username, password)
	elsewhere := e.signIn(t, user.Spec.Username, password)
	id := userIDOf(t, user)
	here.must("POST", "/api/users/"+itoa(id)+"/password", map[string]string{"password": "a-new-one-123"}, http.StatusNoContent, nil)
	if code, _ := here.call("GET", "/api/user", nil); code != http.StatusOK {
		t.Fatalf("the session that changed the password = %d, want it kept", code)
	}
	if code, _ := elsewhere.call("GET", "/api/user", nil); code != http.StatusUnauthorized {
		t.Fatalf("another session after the password change = %d, want 401", code)
	}
	if code, _ := e.browser(t).call("POST", "/api/auth/login", map[string]string{"auth": user.Spec.Username, "password": password}); code != http.StatusUnauthorized {
		t.Fatalf("the old password still signs in: %d", code)
	}
	e.signIn(t, user.Spec.Username, "a-new-one-123")
}

func TestSignIn_sessionExpires(t *testing.T) {
	e := startEnv(t)
	user, password := e.newUser(t, "expiry", false)
	b := e.signIn(t, user.Spec.Username, password)
	e.Clock.Advance(7*24*time.Hour + time.Minute)
	defer e.Clock.Advance(-(7*24*time.Hour + time.Minute))
	code, data := b.call("GET", "/api/user", nil)
	if code != http.StatusUnauthorized || !strings.Contains(errorOf(t, data), "expired") {
		t.Fatalf("a session after its lifetime = %d %s, want 401 saying it expired", code, data)
	}
}

func TestSignIn_rateLimitedPerAccountAndPerAddress(t *testing.T) {
	e := startEnv(t)
	user, password := e.newUser(t, "limited", false)
	b := e.browser(t)
	for i := 0; i < 3; i++ {
		if code, _ := b.call("POST", "/api/auth/login", map[string]string{"auth": user.Spec.Username, "password": "guess"}); code != 401 {
			t.Fatalf("guess %d = %d, want 401", i, code)
		}
	}
	// The fourth try from the guessing address is refused before the
	// password is looked at, even the right one, and the answer says when
	// to come back (TestSignIn_accountBackoffGrowsButNeverLocksTheOwnerOut
	// has the delays and the owner's ways in).
	code, data := b.call("POST", "/api/auth/login", map[string]string{"auth": user.Spec.Username, "password": password})
	if code != http.StatusTooManyRequests || !strings.Contains(errorOf(t, data), "account") || !strings.Contains(errorOf(t, data), "try again in") {
		t.Fatalf("sign-in after 3 failures = %d %s, want 429 naming the account and the wait", code, data)
	}
	// After the window the right password works again.
	e.Clock.Advance(16 * time.Minute)
	e.signIn(t, user.Spec.Username, password)

	// Per address: 20 failures over many accounts block the address.
	for i := 0; i < 20; i++ {
		_, _ = b.call("POST", "/api/auth/login", map[string]string{"auth": "spray-" + itoa(int64(i)), "password": "guess"})
	}
	other, otherPassword := e.newUser(t, "sprayed", false)
	code, data = b.call("POST", "/api/auth/login", map[string]string{"auth": other.Spec.Username, "password": otherPassword})
	if code != http.StatusTooManyRequests || !strings.Contains(errorOf(t, data), "address") {
		t.Fatalf("sign-in from an address after 20 failures = %d %s, want 429 naming the address", code, data)
	}
	e.Clock.Advance(16 * time.Minute)
}

func TestSignIn_crossOriginPostsAreRefused(t *testing.T) {
	e := startEnv(t)
	user, password := e.newUser(t, "csrf", true)
	b := e.signIn(t, user.Spec.Username, password)
	b.header.Set("Origin", "https://evil.example")
	b.header.Set("Sec-Fetch-Site", "cross-site")
	code, data := b.call("POST", "/api/projects", map[string]string{"name": "forged"})
	if code != http.StatusForbidden || !strings.Contains(errorOf(t, data), "cross-origin") {
		t.Fatalf("a cross-site POST = %d %s, want 403", code, data)
	}
	// Reads are not state-changing and stay allowed; same-origin writes too.
	if code, _ := b.call("GET", "/api/projects", nil); code != http.StatusOK {
		t.Fatalf("a cross-site GET = %d", code)
	}
	b.header.Set("Origin", e.URL)
	b.header.Set("Sec-Fetch-Site", "same-origin")
	b.must("POST", "/api/projects", map[string]string{"name": "same origin"}, http.StatusCreated, nil)
}

func TestTokens_bearerWorksAndExpiresOnDelete(t *testing.T) {
	e := startEnv(t)
	user, password := e.newUser(t, "tokens", false)
	b := e.signIn(t, user.Spec.Username, password)
	var tok struct {
		ID      string `json:"id"`
		Expired bool   `json:"expired"`
		UserID  int64  `json:"user_id"`
	}
	b.must("POST", "/api/user/tokens", nil, http.StatusCreated, &tok)
	if len(tok.ID) < 32 || tok.Expired || tok.UserID != userIDOf(t, user) {
		t.Fatalf("new token = %+v", tok)
	}
	script := e.browser(t)
	script.header.Set("Authorization", "Bearer "+tok.ID)
	var me struct{ Username string }
	script.must("GET", "/api/user", nil, http.StatusOK, &me)
	if me.Username != user.Spec.Username {
		t.Fatalf("bearer /api/user = %+v", me)
	}
	var list []struct {
		ID      string `json:"id"`
		Expired bool   `json:"expired"`
	}
	b.must("GET", "/api/user/tokens", nil, http.StatusOK, &list)
	if len(list) != 1 || !strings.HasPrefix(tok.ID, list[0].ID) || list[0].ID == tok.ID {
		t.Fatalf("token list = %+v; want one entry naming the token without revealing it", list)
	}
	b.must("DELETE", "/api/user/tokens/"+list[0].ID, nil, http.StatusNoContent, nil)
	if code, data := script.call("GET", "/api/user", nil); code != http.StatusUnauthorized || !strings.Contains(errorOf(t, data), "expired") {
		t.Fatalf("an expired token = %d %s, want 401", code, data)
	}
	b.must("GET", "/api/user/tokens", nil, http.StatusOK, &list)
	if len(list) != 1 || !list[0].Expired {
		t.Fatalf("token list after delete = %+v, want it marked expired", list)
	}
	// Another user cannot expire it, and a made-up token is refused.
	if code, _ := b.call("DELETE", "/api/user/tokens/zzzzzzzz", nil); code != http.StatusNotFound {
		t.Fatalf("deleting an unknown token = %d", code)
	}
	script.header.Set("Authorization", "Bearer "+strings.Repeat("0", 64))
	if code, _ := script.call("GET", "/api/user", nil); code != http.StatusUnauthorized {
		t.Fatalf("a made-up token = %d", code)
	}
}

func TestSignIn_optionsListProvidersAndPasswordFlag(t *testing.T) {
	e := startEnv(t)
	var opts struct {
		OIDCProviders     []any `json:"oidc_providers"`
		LoginWithPassword bool  `json:"login_with_password"`
	}
	e.browser(t).must("GET", "/api/auth/login", nil, http.StatusOK, &opts)
	if !opts.LoginWithPassword || opts.OIDCProviders == nil {
		t.Fatalf("sign-in options = %+v", opts)
	}
}
