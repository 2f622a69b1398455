package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestAttack_signIn runs the sign-in attacks of issue #19 (items 7, 8 and
// 13) against the real `bastion dev`, which sits behind a reverse proxy
// that rewrites Host, as a plain nginx proxy_pass does, with
// --external-url naming the proxy and no --trusted-proxies.
func TestAttack_signIn(t *testing.T) {
	t.Parallel()
	proxy := httptest.NewUnstartedServer(nil)
	proxyURL := "http://" + proxy.Listener.Addr().String()
	dev := startDev(t, t.TempDir(), "--external-url", proxyURL)
	dev.waitReady()
	backend, _ := url.Parse(dev.url)
	proxy.Config.Handler = &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(backend) // Host becomes the backend's, as with proxy_pass
		pr.SetXForwarded()
	}}
	proxy.Start()
	t.Cleanup(proxy.Close)

	admin := signedIn(t, dev.url, "admin", dev.bannerValue("password"))
	newUser := func(login string) string {
		password := "pw-" + login + "-0123"
		admin.must("POST", "/api/users", map[string]any{
			"username": login, "name": login, "email": login + "@example.test", "password": password,
		}, http.StatusCreated, nil)
		return password
	}

	t.Run("a token dies with a password change", func(t *testing.T) {
		password := newUser("tokenvictim")
		user := signedIn(t, dev.url, "tokenvictim", password)
		var me struct {
			ID int64 `json:"id"`
		}
		user.must("GET", "/api/user", nil, http.StatusOK, &me)
		var tok struct {
			ID string `json:"id"`
		}
		user.must("POST", "/api/user/tokens", nil, http.StatusCreated, &tok)
		stolen := func() int {
			req, _ := http.NewRequestWithContext(t.Context(), "GET", dev.url+"/api/projects", nil)
			req.Header.Set("Authorization", "Bearer "+tok.ID)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if code := stolen(); code != http.StatusOK {
			t.Fatalf("the token before the change = %d", code)
		}
		user.must("POST", fmt.Sprintf("/api/users/%d/password", me.ID), map[string]string{"password": "a-new-one-4567"}, http.StatusNoContent, nil)
		if code := stolen(); code != http.StatusUnauthorized {
			t.Fatalf("the stolen token after the owner changed the password = %d, want 401", code)
		}
		user.must("GET", "/api/user", nil, http.StatusOK, nil) // the browser that changed it stays in
	})

	t.Run("a socket closes when its session signs out", func(t *testing.T) {
		password := newUser("wsvictim")
		user := signedIn(t, dev.url, "wsvictim", password)
		conn := user.websocket()
		user.must("POST", "/api/auth/logout", nil, http.StatusNoContent, nil)
		start := time.Now()
		_ = conn.SetReadDeadline(start.Add(5 * time.Second))
		for {
			_, _, err := conn.ReadMessage()
			if err == nil {
				continue
			}
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation {
				t.Fatalf("the signed-out session's socket was not closed within 5 s: %v", err)
			}
			break
		}
	})

	t.Run("the websocket works through a proxy that rewrites Host", func(t *testing.T) {
		password := newUser("proxied")
		user := signedIn(t, proxyURL, "proxied", password)
		conn := user.websocket() // Origin: the proxy's URL
		conn.Close()

		// A forged X-Forwarded-Host does not make another site's page ours.
		header := http.Header{"Origin": {"https://evil.example"}, "X-Forwarded-Host": {"evil.example"}}
		for _, c := range user.c.Jar.Cookies(mustURL(t, proxyURL)) {
			header.Add("Cookie", c.Name+"="+c.Value)
		}
		_, resp, err := websocket.DefaultDialer.DialContext(t.Context(), "ws"+strings.TrimPrefix(dev.url, "http")+"/api/ws", header)
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a forged X-Forwarded-Host from an untrusted peer: %v %v, want 403", err, resp)
		}
	})

	// Last: it blocks this address for the rest of the window.
	t.Run("a spoofed X-Forwarded-For does not buy fresh guesses", func(t *testing.T) {
		password := newUser("xffvictim")
		try := func(xff, login, password string) (int, string) {
			body, _ := json.Marshal(map[string]string{"auth": login, "password": password})
			req, _ := http.NewRequestWithContext(t.Context(), "POST", dev.url+"/api/auth/login", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Forwarded-For", xff)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
			return resp.StatusCode, string(data)
		}
		// 20 guesses, each at another name and with another forged client
		// address.
		for i := range 20 {
			if code, body := try(fmt.Sprintf("198.51.100.%d", i), fmt.Sprintf("spray-%d", i), "guess"); code != http.StatusUnauthorized {
				t.Fatalf("guess %d = %d %s, want 401", i, code, body)
			}
		}
		// An account nobody guessed at, with its right password and yet
		// another forged address: the address is the peer, and it is spent.
		code, body := try("203.0.113.250", "xffvictim", password)
		if code != http.StatusTooManyRequests || !strings.Contains(body, "address") {
			t.Fatalf("after 20 guesses with forged X-Forwarded-For, a sign-in = %d %s, want 429 for the address", code, body)
		}
	})
}
