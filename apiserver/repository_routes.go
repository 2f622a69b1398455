package apiserver

import "github.com/go-chi/chi/v5"

// repositoryRoutes is not built yet (issue #6); its routes answer 404.
func (s *Server) repositoryRoutes() chi.Router { return chi.NewRouter() }
