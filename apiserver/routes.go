package apiserver

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// apiRoutes is the /api route tree. It reads like spec §7, and grows with
// it: one Routes() per resource, mounted here.
func (s *Server) apiRoutes() chi.Router {
	r := chi.NewRouter()

	r.Get("/ping", s.ping)
	r.Get("/info", s.info)
	if s.opts.Client != nil && s.opts.Reader != nil && s.opts.Store != nil {
		// Runners authenticate with their task's token, not a session:
		// this route stays outside sign-in and CSRF checks (issue #5).
		r.Mount("/runner", newRunnerEvents(s.opts).routes())
	}
	if s.opts.Hub != nil && s.opts.WSAuth != nil {
		r.Method(http.MethodGet, "/ws", WSHandler(s.opts.Hub, s.opts.WSAuth, s.opts.WS))
	}

	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, "not found: "+r.Method+" "+r.URL.Path)
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path)
	})
	return r
}
