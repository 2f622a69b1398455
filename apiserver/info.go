package apiserver

import "net/http"

// info is the body of GET /api/info (api-contract.md, "info").
type info struct {
	Version         string         `json:"version"`
	Ansible         string         `json:"ansible"`
	WebHost         string         `json:"web_host"`
	UseRemoteRunner bool           `json:"use_remote_runner"`
	AuthMethods     map[string]any `json:"auth_methods"`
}

// ping answers liveness checks of Semaphore clients with "pong".
func (s *Server) ping(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("pong"))
}

// info reports the version and how this server is reached.
func (s *Server) info(w http.ResponseWriter, _ *http.Request) {
	respond(w, http.StatusOK, info{
		Version: s.opts.Version,
		WebHost: s.opts.PublicURL,
		// Tasks never run inside the manager: they run as Jobs (or, in
		// `bastion dev`, as local runner processes), which is what Semaphore
		// calls a remote runner.
		UseRemoteRunner: true,
		AuthMethods:     map[string]any{},
	})
}
