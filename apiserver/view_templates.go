package apiserver

import (
	"net/http"
	"sort"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// The template list of one view. The full template shape of
// api-contract.md belongs to template_routes.go, built in parallel; until
// it lands here this answers the fields a view tab needs. To switch, make
// viewTemplates answer that converter's list of templatesInView.

// viewTemplateJSON is the part of a template a view's tab shows.
type viewTemplateJSON struct {
	ID          int64                  `json:"id"`
	ProjectID   int64                  `json:"project_id"`
	Name        string                 `json:"name"`
	Description string                 `json:"description"`
	Type        bastionv1.TemplateType `json:"type"`
	App         bastionv1.TemplateApp  `json:"app"`
	Playbook    string                 `json:"playbook"`
	ViewID      int64                  `json:"view_id"`
}

// viewTemplates serves GET /views/{view_id}/templates: the templates whose
// view is this one, by id.
func (s *Server) viewTemplates(w http.ResponseWriter, r *http.Request) {
	a, view := projectOf(r), entity[*bastionv1.View](r, "view_id")
	templates, err := s.templatesInView(r, view.Name)
	if err != nil {
		failErr(w, r, err)
		return
	}
	out := make([]viewTemplateJSON, 0, len(templates))
	for _, t := range templates {
		if idOf(t) == 0 {
			continue // not yet numbered: the API cannot address it
		}
		out = append(out, viewTemplateJSON{
			ID: idOf(t), ProjectID: a.id, Name: t.Spec.DisplayName, Description: t.Spec.Description,
			Type: t.Spec.Type, App: t.Spec.App, Playbook: t.Spec.Playbook, ViewID: idOf(view),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	respond(w, http.StatusOK, out)
}
