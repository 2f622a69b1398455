package apiserver

import (
	"net/http"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// viewTemplates serves GET /views/{view_id}/templates: the templates whose
// view is this one, in the same shape and order as the template list.
func (s *Server) viewTemplates(w http.ResponseWriter, r *http.Request) {
	view := entity[*bastionv1.View](r, "view_id")
	out, err := s.renderTemplates(r.Context(), projectOf(r), func(t *bastionv1.Template) bool {
		return named(view.Name, t.Spec.ViewRef)
	})
	if err != nil {
		failErr(w, r, err)
		return
	}
	respond(w, http.StatusOK, out)
}
