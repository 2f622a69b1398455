package apiserver

import (
	"net/http"
	"net/url"
)

// crossOriginProtection refuses state-changing browser requests that come
// from another origin: the CSRF defence of every /api call.
//
// The check is the same-origin one (Sec-Fetch-Site, else Origin against
// Host), not a custom header: Semaphore clients written before Bastion do
// not send one, and scripts and the Terraform provider send neither header,
// so they pass, while a page on another site cannot make a signed-in
// browser POST here. The session cookie is also SameSite=Lax, which stops
// cross-site POSTs from carrying it in the first place; this check is the
// second wall. The public URL counts as this origin, for proxies that
// rewrite Host.
func (s *Server) crossOriginProtection(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	if u, err := url.Parse(s.opts.PublicURL); err == nil && u.Scheme != "" && u.Host != "" {
		_ = cop.AddTrustedOrigin(u.Scheme + "://" + u.Host)
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusForbidden, "cross-origin request refused: "+r.Method+" "+r.URL.Path+" must come from this site")
	}))
	return cop.Handler(next)
}
