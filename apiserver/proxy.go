package apiserver

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// ParseTrustedProxies reads --trusted-proxies: CIDRs or single addresses,
// separated by commas or spaces ("10.0.0.0/8, 192.168.1.7").
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, field := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		if p, err := netip.ParsePrefix(field); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(field)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is neither a CIDR nor an address", field)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// proxyTrust says which peers are reverse proxies whose forwarding headers
// (X-Forwarded-For, X-Forwarded-Host) may be believed. Anyone can send
// those headers; only from a listed proxy do they mean anything.
type proxyTrust []netip.Prefix

func (t proxyTrust) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peer is the TCP peer of r; invalid if RemoteAddr does not parse.
func peer(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// fromTrustedProxy: the request came straight from a listed proxy.
func (t proxyTrust) fromTrustedProxy(r *http.Request) bool {
	p := peer(r)
	return p.IsValid() && t.trusts(p)
}

// clientAddress is the address a request comes from, for the sign-in
// limits. It is the TCP peer, unless the peer is a trusted proxy: then it
// is the right-most address of X-Forwarded-For that is not itself a
// trusted proxy. Addresses left of that one were written by the client
// and could be anything; the right-most untrusted one was written by the
// first proxy we trust, which saw the real peer.
func (t proxyTrust) clientAddress(r *http.Request) string {
	p := peer(r)
	if !p.IsValid() {
		return r.RemoteAddr
	}
	if !t.trusts(p) {
		return p.String()
	}
	hops := forwardedFor(r)
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := parseHop(hops[i])
		if err != nil {
			// Garbage from the client's end of the list: the last address
			// we could trust is the best we know.
			return p.String()
		}
		if p = a.Unmap(); !t.trusts(p) {
			return p.String()
		}
	}
	return p.String() // every hop is a proxy of ours: the left-most one
}

// parseHop reads one X-Forwarded-For entry: an address, or an address
// with a port ("198.51.100.4:5555", "[2001:db8::1]:443"), which some
// proxies (Azure's gateways) write. The port says nothing about who the
// client is; refusing such entries would make every client the proxy.
func parseHop(hop string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(hop); err == nil {
		return a, nil
	}
	if ap, err := netip.ParseAddrPort(hop); err == nil {
		return ap.Addr(), nil
	}
	return netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(hop, "["), "]"))
}

// forwardedFor is every address of every X-Forwarded-For header, in order.
func forwardedFor(r *http.Request) []string {
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		for _, hop := range strings.Split(h, ",") {
			if hop = strings.TrimSpace(hop); hop != "" {
				hops = append(hops, hop)
			}
		}
	}
	return hops
}

// originPolicy decides whether a browser's Origin is this server, for the
// websocket (which CORS does not cover). This server is: the Host the
// request was sent to; the external URL users reach it at (a proxy that
// rewrites Host, like a plain nginx proxy_pass, then still works); and the
// X-Forwarded-Host a trusted proxy passes on.
type originPolicy struct {
	external string // host[:port] of the external URL; "" if none
	proxies  proxyTrust
}

func newOriginPolicy(externalURL string, proxies proxyTrust) originPolicy {
	o := originPolicy{proxies: proxies}
	if u, err := url.Parse(externalURL); err == nil && u.Host != "" {
		o.external = u.Host
	}
	return o
}

// allows accepts a request without Origin (a script, which must still
// authenticate) or whose Origin's host is one of this server's names.
func (o originPolicy) allows(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	for _, name := range o.names(r) {
		if strings.EqualFold(u.Host, name) {
			return true
		}
	}
	return false
}

// names are the hosts this request may call this server by.
func (o originPolicy) names(r *http.Request) []string {
	names := []string{r.Host}
	if o.external != "" {
		names = append(names, o.external)
	}
	if o.proxies.fromTrustedProxy(r) {
		// The first value is the host the client asked the outermost
		// proxy for.
		if fwd, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Host"), ","); strings.TrimSpace(fwd) != "" {
			names = append(names, strings.TrimSpace(fwd))
		}
	}
	return names
}
