package apiserver

import (
	"encoding/json"

	"github.com/go-chi/chi/v5"
)

// What the OpenAPI tests of package apiserver_test reach inside.

// APIRoutes is the /api route tree a server with opts serves, with the
// routes extra adds (a route nobody documented, in the tests).
func APIRoutes(opts Options, extra func(chi.Router)) chi.Routes {
	s := &Server{opts: opts}
	r := s.apiRoutes()
	if extra != nil {
		extra(r)
	}
	return r
}

// OpenAPIProblems are the routes of r without documentation and the
// documentation of no route of r.
func OpenAPIProblems(r chi.Routes) []string { return openAPIProblems(r) }

// OpenAPIDocument is the document of r, as served.
func OpenAPIDocument(r chi.Routes) ([]byte, error) { return json.Marshal(buildOpenAPI(r, "test")) }
