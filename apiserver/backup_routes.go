package apiserver

import "net/http"

func (s *Server) backupProject(w http.ResponseWriter, r *http.Request) {
	fail(w, http.StatusNotImplemented, "backup is not built yet")
}

func (s *Server) restoreProject(w http.ResponseWriter, r *http.Request) {
	fail(w, http.StatusNotImplemented, "restore is not built yet")
}
