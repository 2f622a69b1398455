package apiserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/bastion-dev/bastion/apiserver"
)

func TestSecurityHeaders_onTheConsoleAndTheAPI(t *testing.T) {
	e := startEnv(t)
	for _, path := range []string{"/", "/project/1/history", "/api/info", "/api/user", "/api/nope"} {
		resp, err := http.Get(e.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: Content-Security-Policy %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(strings.SplitN(strings.SplitN(csp, "script-src", 2)[1], ";", 2)[0], "unsafe") {
			t.Errorf("GET %s: scripts may run inline or eval: %q", path, csp)
		}
		for name, want := range map[string]string{
			"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin",
		} {
			if got := h.Get(name); got != want {
				t.Errorf("GET %s: %s = %q, want %q", path, name, got, want)
			}
		}
	}
}

func TestSignIn_cookiesAreSecureWhenThePublicURLIsHTTPS(t *testing.T) {
	e := startEnv(t)
	user, password := e.newUser(t, "secure", false)
	url := e.serve(t, func(_ string, o *apiserver.Options) { o.PublicURL = "https://bastion.example.test" })
	req, _ := http.NewRequest("POST", url+"/api/auth/login", strings.NewReader(`{"auth":"`+user.Spec.Username+`","password":"`+password+`"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || len(resp.Cookies()) != 2 {
		t.Fatalf("sign-in = %d with cookies %v", resp.StatusCode, resp.Cookies())
	}
	for _, c := range resp.Cookies() {
		if !c.Secure || c.Path != "/" || c.SameSite != http.SameSiteLaxMode {
			t.Errorf("cookie %s = %+v, want Secure, Path=/, SameSite=Lax behind an https public URL", c.Name, c)
		}
		if c.Name == "bastion_session" && !c.HttpOnly {
			t.Errorf("the session cookie is readable by scripts: %+v", c)
		}
	}
	// Signing out clears both, with the same flags.
	req, _ = http.NewRequest("POST", url+"/api/auth/logout", nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if !c.Secure || c.MaxAge >= 0 {
			t.Errorf("logout cookie %s = %+v, want Secure and expired", c.Name, c)
		}
	}
}

func TestSessions_deletingAUserEndsTheirSessionsAndTokens(t *testing.T) {
	e := startEnv(t)
	root, rootPassword := e.newUser(t, "deleter", true)
	admin := e.signIn(t, root.Spec.Username, rootPassword)
	user, password := e.newUser(t, "deleted", false)
	session := e.signIn(t, user.Spec.Username, password)
	script := e.tokenScript(t, session)

	admin.must("DELETE", "/api/users/"+itoa(userIDOf(t, user)), nil, http.StatusNoContent, nil)
	for name, b := range map[string]*browser{"session": session, "token": script} {
		if code, data := b.call("GET", "/api/user", nil); code != http.StatusUnauthorized {
			t.Errorf("the deleted user's %s = %d %s, want 401", name, code, data)
		}
		if code, _ := b.call("POST", "/api/user/tokens", nil); code != http.StatusUnauthorized {
			t.Errorf("the deleted user's %s still makes tokens: %d", name, code)
		}
	}
	// A new user given the same login does not inherit them.
	again, err := e.Users.Create(t.Context(), user.Spec, "another-password")
	if err != nil {
		t.Fatal(err)
	}
	_ = again
	if code, _ := session.call("GET", "/api/user", nil); code != http.StatusUnauthorized {
		t.Fatalf("the old session signs in as the new user of the same login: %d", code)
	}
	if code, _ := script.call("GET", "/api/user", nil); code != http.StatusUnauthorized {
		t.Fatalf("the old token signs in as the new user of the same login: %d", code)
	}
}
