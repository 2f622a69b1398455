package apiserver

import "net/http"

// oidcList is the sign-in page's provider buttons.
func (s *Server) oidcList() []oidcProviderJSON {
	return []oidcProviderJSON{}
}

func (s *Server) oidcLogin(w http.ResponseWriter, r *http.Request) {
	fail(w, http.StatusNotFound, "no such sign-in provider")
}

func (s *Server) oidcCallback(w http.ResponseWriter, r *http.Request) {
	fail(w, http.StatusNotFound, "no such sign-in provider")
}
