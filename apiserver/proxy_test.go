package apiserver

import (
	"net/http/httptest"
	"testing"
)

func TestProxyTrust_clientAddressIsTheRightMostUntrustedHop(t *testing.T) {
	trusted, err := ParseTrustedProxies("10.0.0.0/8, 192.168.1.7 ::1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ peer, xff, want string }{
		{"203.0.113.5:1234", "1.2.3.4", "203.0.113.5"},                        // untrusted peer: header ignored
		{"10.1.2.3:80", "", "10.1.2.3"},                                       // trusted peer, no header
		{"10.1.2.3:80", "198.51.100.4", "198.51.100.4"},                       // one proxy
		{"10.1.2.3:80", "6.6.6.6, 198.51.100.4", "198.51.100.4"},              // client-forged hop on the left
		{"10.1.2.3:80", "6.6.6.6, 198.51.100.4, 192.168.1.7", "198.51.100.4"}, // two proxies of ours
		{"10.1.2.3:80", "junk, 10.4.4.4", "10.4.4.4"},                         // garbage left of our proxies
		{"[::1]:80", "::ffff:198.51.100.9", "198.51.100.9"},                   // IPv6 peer, mapped client
		{"10.1.2.3:80", "10.9.9.9", "10.9.9.9"},                               // every hop ours: the left-most
	} {
		r := httptest.NewRequest("POST", "/api/auth/login", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := proxyTrust(trusted).clientAddress(r); got != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q: client %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
	if _, err := ParseTrustedProxies("10.0.0.0/8,nonsense"); err == nil {
		t.Fatal("a trusted proxy that is no address was accepted")
	}
}

func TestOriginPolicy_namesOfThisServer(t *testing.T) {
	trusted, _ := ParseTrustedProxies("10.0.0.0/8")
	o := newOriginPolicy("https://bastion.example.com", trusted)
	for _, c := range []struct {
		peer, host, origin, fwdHost string
		ok                          bool
	}{
		{"203.0.113.5:1", "internal:3000", "", "", true},                                  // a script
		{"203.0.113.5:1", "internal:3000", "http://internal:3000", "", true},              // Host
		{"203.0.113.5:1", "internal:3000", "https://bastion.example.com", "", true},       // external URL
		{"203.0.113.5:1", "internal:3000", "https://evil.example", "", false},             // another site
		{"203.0.113.5:1", "internal:3000", "https://evil.example", "evil.example", false}, // forged, untrusted peer
		{"10.0.0.2:1", "internal:3000", "https://alias.example", "alias.example", true},   // trusted proxy's host
		{"10.0.0.2:1", "internal:3000", "https://evil.example", "alias.example", false},   // not the forwarded host
		{"203.0.113.5:1", "internal:3000", "null", "", false},                             // sandboxed page
	} {
		r := httptest.NewRequest("GET", "/api/ws", nil)
		r.RemoteAddr, r.Host = c.peer, c.host
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.fwdHost != "" {
			r.Header.Set("X-Forwarded-Host", c.fwdHost)
		}
		if got := o.allows(r); got != c.ok {
			t.Errorf("%+v: allowed %v, want %v", c, got, c.ok)
		}
	}
}

// TestProxyTrust_forwardedForWithAPortIsStillTheClient: a trusted proxy
// may write the client's port into X-Forwarded-For ("198.51.100.4:5555",
// "[2001:db8::1]:443"; Azure's gateways do). The entry is still the client:
// were it unparsable, every client would count as the proxy itself, and 20
// failures by anyone would block everyone's sign-in for the window.
func TestProxyTrust_forwardedForWithAPortIsStillTheClient(t *testing.T) {
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
