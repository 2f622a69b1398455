package apiserver_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/apiserver"
)

// TestPasswordChange_endsTheUsersAPITokens: a token made before a
// password change stops working, whether the password changed through the
// API or through `bastion user change-by-login` (the users package, which
// cannot reach the token store); the browser that changed it stays signed
// in.
func TestPasswordChange_endsTheUsersAPITokens(t *testing.T) {
	e := startEnv(t)
	user, password := e.newUser(t, "tokpw", false)
	b := e.signIn(t, user.Spec.Username, password)
	script := e.tokenScript(t, b)
	b.must("POST", fmt.Sprintf("/api/users/%d/password", userIDOf(t, user)), map[string]string{"password": "n3w-" + password}, http.StatusNoContent, nil)
	if code, data := script.call("GET", "/api/user", nil); code != http.StatusUnauthorized {
		t.Fatalf("a token after the password change = %d %s, want 401", code, data)
	}
	var left []any
	b.must("GET", "/api/user/tokens", nil, http.StatusOK, &left)
	if len(left) != 0 {
		t.Fatalf("tokens left after the password change: %v", left)
	}

	// The command line changes it too.
	script = e.tokenScript(t, b)
	if err := e.Users.SetPassword(t.Context(), user, "cl1-"+password); err != nil {
		t.Fatal(err)
	}
	if msg := eventuallyStatus(t, script, "GET", "/api/user", http.StatusUnauthorized); !strings.Contains(msg, "password change") {
		t.Fatalf("a token after a password change on the command line is refused with %q, want the reason", msg)
	}
}

// tokenScript makes an API token as b's user and returns a client that
// sends it, as a script would; the token is proven to work.
func (e *apiEnv) tokenScript(t *testing.T, b *browser) *browser {
	t.Helper()
	var tok struct {
		ID string `json:"id"`
	}
	b.must("POST", "/api/user/tokens", nil, http.StatusCreated, &tok)
	script := e.browser(t)
	script.base = b.base
	script.header.Set("Authorization", "Bearer "+tok.ID)
	script.must("GET", "/api/user", nil, http.StatusOK, nil)
	return script
}

// signInAt returns a browser signed in as login at another server base.
func (e *apiEnv) signInAt(t *testing.T, base, login, password string) *browser {
	t.Helper()
	b := e.browser(t)
	b.base = base
	b.must("POST", "/api/auth/login", map[string]string{"auth": login, "password": password}, http.StatusNoContent, nil)
	return b
}

// eventuallyStatus waits up to 5 s for a call to answer want, and
// returns the answer's error message.
func eventuallyStatus(t *testing.T, b *browser, method, path string, want int) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, data := b.call(method, path, nil)
		if code == want {
			return errorOf(t, data)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s = %d %s after 5 s, want %d", method, path, code, data, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestUsers_noLoginNamesTwoUsers: a username may not be another user's
// email, nor an email another's username, through the API (create and
// update, by an admin or by the user); a User applied with kubectl that
// does it is marked not Ready, and the login both answer to signs in
// neither.
func TestUsers_noLoginNamesTwoUsers(t *testing.T) {
	e := startEnv(t)
	victim, victimPassword := e.newUser(t, "clashvictim", false)
	root, rootPassword := e.newUser(t, "clashroot", true)
	a := e.signIn(t, root.Spec.Username, rootPassword)

	for _, body := range []map[string]any{
		{"username": victim.Spec.Email, "name": "X", "email": "x1@example.test", "password": "pw-123456"},
		{"username": "clash-new-" + victim.Name, "name": "X", "email": strings.ToUpper(victim.Spec.Username), "password": "pw-123456"},
	} {
		code, data := a.call("POST", "/api/users", body)
		if code != http.StatusBadRequest || !strings.Contains(errorOf(t, data), "another user's") {
			t.Fatalf("creating %v = %d %s, want 400 naming the clash", body, code, data)
		}
	}

	self, selfPassword := e.newUser(t, "clashself", false)
	s := e.signIn(t, self.Spec.Username, selfPassword)
	path := fmt.Sprintf("/api/users/%d", userIDOf(t, self))
	for _, change := range []map[string]any{
		{"username": self.Spec.Username, "name": self.Spec.Name, "email": victim.Spec.Username},
		{"username": victim.Spec.Email, "name": self.Spec.Name, "email": self.Spec.Email},
	} {
		for _, who := range []*browser{s, a} {
			code, data := who.call("PUT", path, change)
			if code != http.StatusBadRequest || !strings.Contains(errorOf(t, data), "another user's") {
				t.Fatalf("updating to %v = %d %s, want 400 naming the clash", change, code, data)
			}
		}
	}
	var me apiUser
	s.must("GET", path, nil, http.StatusOK, &me)
	if me.Username != self.Spec.Username || me.Email != self.Spec.Email {
		t.Fatalf("a refused update changed the user: %+v", me)
	}

	// kubectl: the controller says so, and sign-in refuses the login.
	sneaky := &bastionv1.User{ObjectMeta: metav1.ObjectMeta{Name: "sneaky-" + victim.Name},
		Spec: bastionv1.UserSpec{Username: victim.Spec.Email, Name: "Sneaky", Email: "sneaky-" + victim.Spec.Email}}
	if err := e.K8s.Create(t.Context(), sneaky); err != nil {
		t.Fatal(err)
	}
	if err := e.Users.SetPassword(t.Context(), sneaky, victimPassword+"-sneaky"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := &bastionv1.User{}
		if err := e.K8s.Get(t.Context(), clientKeyOf(sneaky), got); err != nil {
			t.Fatal(err)
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, bastionv1.ConditionReady)
		if cond != nil && cond.Reason == bastionv1.ReasonLoginConflict && strings.Contains(cond.Message, "another user's email") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the clashing User's Ready = %+v, want False LoginConflict", cond)
		}
		time.Sleep(50 * time.Millisecond)
	}
	fresh := limitServer(t, e)
	for _, try := range []struct{ login, password string }{
		{victim.Spec.Email, victimPassword},
		{victim.Spec.Email, victimPassword + "-sneaky"},
	} {
		if got := signInFrom(t, fresh, "", try.login, try.password); got.code != http.StatusUnauthorized {
			t.Fatalf("signing in with the login two users answer to = %+v, want 401", got)
		}
	}
	if got := signInFrom(t, fresh, "", victim.Spec.Username, victimPassword); got.code != http.StatusNoContent {
		t.Fatalf("the victim's own username = %+v, want 204", got)
	}
}

// wsConnect opens /api/ws at base with b's session and the given Origin.
func wsConnect(t *testing.T, base string, b *browser, origin string, extra http.Header) (*websocket.Conn, int, error) {
	t.Helper()
	header := http.Header{}
	u, _ := url.Parse(b.base)
	for _, c := range b.c.Jar.Cookies(u) {
		header.Add("Cookie", c.Name+"="+c.Value)
	}
	if origin != "" {
		header.Set("Origin", origin)
	}
	for k, v := range extra {
		header[k] = v
	}
	conn, resp, err := websocket.DefaultDialer.DialContext(t.Context(), "ws"+strings.TrimPrefix(base, "http")+"/api/ws", header)
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	if conn != nil {
		t.Cleanup(func() { conn.Close() })
	}
	return conn, status, err
}

// closedWithin reads until the server closes conn, and insists that it
// does so with a policy-violation close frame within limit.
func closedWithin(t *testing.T, conn *websocket.Conn, limit time.Duration, what string) string {
	t.Helper()
	start := time.Now()
	_ = conn.SetReadDeadline(start.Add(limit))
	for {
		_, _, err := conn.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation {
			t.Fatalf("%s: the socket was not closed by the server within %s: %v", what, limit, err)
		}
		return ce.Text
	}
}

// TestWS_socketsCloseWhenTheirCredentialEnds: signing out, a password
// change, deleting the user and taking admin away each close that user's
// open websocket within 5 seconds, as deleting an API token closes the
// socket a script opened with it; another user's socket stays open.
func TestWS_socketsCloseWhenTheirCredentialEnds(t *testing.T) {
	e := startEnv(t)
	root, rootPassword := e.newUser(t, "wsroot", true)
	a := e.signIn(t, root.Spec.Username, rootPassword)
	open := func(b *browser) *websocket.Conn {
		conn, status, err := wsConnect(t, e.URL, b, e.URL, nil)
		if err != nil {
			t.Fatalf("opening the websocket: %v (%d)", err, status)
		}
		return conn
	}
	bystander, bystanderPassword := e.newUser(t, "wsbystander", false)
	calm := open(e.signIn(t, bystander.Spec.Username, bystanderPassword))

	cases := []struct {
		name   string
		admin  bool
		action func(b *browser, u *bastionv1.User)
		reason string
	}{
		{"sign-out", false, func(b *browser, _ *bastionv1.User) {
			b.must("POST", "/api/auth/logout", nil, http.StatusNoContent, nil)
		}, "signed out"},
		{"password change", false, func(_ *browser, u *bastionv1.User) {
			a.must("POST", fmt.Sprintf("/api/users/%d/password", userIDOf(t, u)), map[string]string{"password": "changed-by-admin"}, http.StatusNoContent, nil)
		}, "signed out"},
		{"user deleted", false, func(_ *browser, u *bastionv1.User) {
			a.must("DELETE", fmt.Sprintf("/api/users/%d", userIDOf(t, u)), nil, http.StatusNoContent, nil)
		}, "signed out|no longer exists"},
		{"admin taken away", true, func(_ *browser, u *bastionv1.User) {
			a.must("PUT", fmt.Sprintf("/api/users/%d", userIDOf(t, u)), map[string]any{
				"username": u.Spec.Username, "name": u.Spec.Name, "email": u.Spec.Email, "admin": false}, http.StatusNoContent, nil)
		}, "administrator rights were removed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, password := e.newUser(t, "wsend", c.admin)
			b := e.signIn(t, u.Spec.Username, password)
			conn := open(b)
			start := time.Now()
			c.action(b, u)
			reason := closedWithin(t, conn, 5*time.Second, c.name)
			if !containsAny(reason, strings.Split(c.reason, "|")) {
				t.Fatalf("closed after %s with %q, want it to say %q", time.Since(start), reason, c.reason)
			}
		})
	}
	// A script's socket, opened with an API token, ends with its token.
	t.Run("token deleted", func(t *testing.T) {
		u, password := e.newUser(t, "wstoken", false)
		b := e.signIn(t, u.Spec.Username, password)
		script := e.tokenScript(t, b)
		conn, status, err := wsConnect(t, e.URL, script, "", script.header)
		if err != nil {
			t.Fatalf("opening the websocket with a token: %v (%d)", err, status)
		}
		token := strings.TrimPrefix(script.header.Get("Authorization"), "Bearer ")
		b.must("DELETE", "/api/user/tokens/"+token, nil, http.StatusNoContent, nil)
		if reason := closedWithin(t, conn, 5*time.Second, "token deleted"); !strings.Contains(reason, "token") {
			t.Fatalf("closed with %q, want it to name the token", reason)
		}
	})
	// The bystander's socket is untouched.
	_ = calm.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, _, err := calm.ReadMessage(); err == nil || !isTimeout(err) {
		t.Fatalf("another user's socket ended: %v", err)
	}
}

func containsAny(s string, parts []string) bool {
	for _, p := range parts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}

// hostRewritingProxy is a reverse proxy like a plain nginx proxy_pass: it
// sends the backend's own host as Host, and X-Forwarded-For/Host/Proto.
func hostRewritingProxy(t *testing.T, srv *httptest.Server, backend func() string) {
	t.Helper()
	srv.Config.Handler = &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		target, _ := url.Parse(backend())
		pr.SetURL(target) // rewrites Host to the backend's
		pr.SetXForwarded()
	}}
	srv.Start()
	t.Cleanup(srv.Close)
}

// TestWS_originBehindAProxyThatRewritesHost: behind a proxy that rewrites
// Host, the console's websocket (Origin: the proxy's URL) is refused with
// 403 until the external URL is set, or the proxy is trusted to pass
// X-Forwarded-Host; a forged X-Forwarded-Host from a peer that is not a
// trusted proxy is still refused.
func TestWS_originBehindAProxyThatRewritesHost(t *testing.T) {
	e := startEnv(t)
	user, password := e.newUser(t, "wsproxy", false)
	for _, c := range []struct {
		name   string
		change func(proxyURL string, o *apiserver.Options)
		want   int
	}{
		{"no setting", func(string, *apiserver.Options) {}, http.StatusForbidden},
		{"external URL", func(proxyURL string, o *apiserver.Options) { o.PublicURL = proxyURL }, http.StatusSwitchingProtocols},
		{"trusted proxy", func(_ string, o *apiserver.Options) {
			o.TrustedProxies, _ = apiserver.ParseTrustedProxies("127.0.0.1/32,::1/128")
		}, http.StatusSwitchingProtocols},
	} {
		t.Run(c.name, func(t *testing.T) {
			var backend string
			proxy := httptest.NewUnstartedServer(nil)
			proxyURL := "http://" + proxy.Listener.Addr().String()
			backend = e.serve(t, func(_ string, o *apiserver.Options) { c.change(proxyURL, o) })
			hostRewritingProxy(t, proxy, func() string { return backend })
			b := e.signInAt(t, proxyURL, user.Spec.Username, password)
			conn, status, err := wsConnect(t, proxyURL, b, proxyURL, nil)
			if status != c.want {
				t.Fatalf("the console's websocket through the proxy = %d (%v), want %d", status, err, c.want)
			}
			if conn != nil {
				conn.Close()
			}
		})
	}

	// Straight to a server that trusts no proxy: a forged X-Forwarded-Host
	// naming the attacker's page does not make its Origin ours.
	b := e.signIn(t, user.Spec.Username, password)
	_, status, _ := wsConnect(t, e.URL, b, "https://evil.example", http.Header{"X-Forwarded-Host": {"evil.example"}})
	if status != http.StatusForbidden {
		t.Fatalf("a forged X-Forwarded-Host from an untrusted peer = %d, want 403", status)
	}
}
