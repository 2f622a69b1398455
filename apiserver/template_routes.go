package apiserver

import "github.com/go-chi/chi/v5"

// templateRoutes is not built yet (issue #6); its routes answer 404.
func (s *Server) templateRoutes() chi.Router { return chi.NewRouter() }
