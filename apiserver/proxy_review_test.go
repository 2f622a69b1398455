package apiserver

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"
)

// Review of issue #19 (sign-in): the per-address limit keys an IPv6 client
// by its full 128-bit address. Anyone with an ordinary IPv6 connection
// holds a /64 (2^64 addresses), so picking a new source address per guess
// never meets the 20-failures limit: one host guesses as fast as bcrypt
// lets it, across every account. Limiting IPv6 per /64 (as fail2ban,
// nginx's limit_req setups and most WAFs advise) closes it.
func TestLoginLimiter_review_oneIPv6SlashSixtyFourIsOneAddress(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLoginLimiter(AuthOptions{Now: func() time.Time { return now }}.withDefaults())
	trust := proxyTrust(nil)
	for i := range 25 {
		r := httptest.NewRequest("POST", "/api/auth/login", nil)
		r.RemoteAddr = fmt.Sprintf("[2001:db8:1:2::%x]:40000", i+1)
		l.failed(fmt.Sprintf("account-%d", i), trust.clientAddress(r))
	}
	r := httptest.NewRequest("POST", "/api/auth/login", nil)
	r.RemoteAddr = "[2001:db8:1:2::ffff]:40000"
	if wait, what := l.blocked("account-next", trust.clientAddress(r)); wait <= 0 || what != "address" {
		t.Fatalf("after 25 failures from one IPv6 /64, its next address may guess at once (%s %q): the per-address limit never holds an IPv6 host", wait, what)
	}
}

// Review of issue #19 (sign-in): a trusted proxy that writes the client's
// port into X-Forwarded-For ("198.51.100.4:5555", "[2001:db8::1]:443";
// Azure's gateways do) makes every hop unparsable, so every client counts
// as the proxy itself: 20 failures by anyone then block everyone's
// sign-in, the owner's included, for the rest of the window.
func TestProxyTrust_review_forwardedForWithAPortIsStillTheClient(t *testing.T) {
	trusted, err := ParseTrustedProxies("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ xff, want string }{
		{"198.51.100.4:5555", "198.51.100.4"},
		{"[2001:db8::1]:443", "2001:db8::1"},
	} {
		r := httptest.NewRequest("POST", "/api/auth/login", nil)
		r.RemoteAddr = "10.1.2.3:80"
		r.Header.Set("X-Forwarded-For", c.xff)
		if got := proxyTrust(trusted).clientAddress(r); got != c.want {
			t.Errorf("X-Forwarded-For %q from a trusted proxy: client %s, want %s (every client shares the proxy's bucket)", c.xff, got, c.want)
		}
	}
}

// Review of issue #19 (sign-in): docs/install.md tells operators to set
// trustedProxies to the pod network (10.244.0.0/16) for an in-cluster
// ingress. Task pods live in that network too and reach the manager's port
// (runners report to /api/runner on it; the chart's NetworkPolicy closes
// only the metrics port). So a playbook sends X-Forwarded-For with a new
// address per guess: the per-address limit never triggers, and each
// address is a "fresh" non-guesser that the account delay lets through at
// once, 256 times per account per window, then one guess per 30 s. The
// test makes 100 guesses at one account from one task pod, as configured
// in the docs, and expects the limiter to hold it back well before that.
func TestSignIn_review_aTaskPodInsideTheDocumentedTrustedRangeCannotPickItsBucket(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLoginLimiter(AuthOptions{Now: func() time.Time { return now }}.withDefaults())
	trusted, err := ParseTrustedProxies("10.244.0.0/16") // docs/install.md's example
	if err != nil {
		t.Fatal(err)
	}
	let := 0
	for i := range 100 {
		r := httptest.NewRequest("POST", "/api/auth/login", nil)
		r.RemoteAddr = "10.244.3.7:51000" // a task pod
		r.Header.Set("X-Forwarded-For", fmt.Sprintf("203.0.%d.%d", i/250, i%250+1))
		addr := proxyTrust(trusted).clientAddress(r)
		if wait, _ := l.blocked("admin", addr); wait > 0 {
			continue
		}
		let++
		l.failed("admin", addr)
	}
	if let > 20 {
		t.Fatalf("a task pod made %d of 100 guesses at the admin account at once: inside the documented trusted range it picks a fresh bucket per guess", let)
	}
}
