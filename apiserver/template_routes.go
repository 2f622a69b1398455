package apiserver

import (
	"context"
	"net/http"
	"sort"

	"github.com/go-chi/chi/v5"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/kinds"
)

// templateResource serves /project/{id}/templates. Members read; writes
// need manageProjectResources. A template's schedules and tasks go with it
// (its controller removes them, stored output included).
var templateResource = &resource[*bastionv1.Template, templateRequest, templateJSON]{
	kind: kinds.Template, path: "/templates", param: "template_id",
	toJSON: (*Server).toTemplateJSON, answerCreated: true,
	listAll: func(s *Server, r *http.Request) (any, error) {
		return s.renderTemplates(r.Context(), projectOf(r), func(*bastionv1.Template) bool { return true })
	},
	listKey: "templates",
	build:   buildTemplate,
	afterWrite: func(s *Server, r *http.Request) {
		s.listsChanged(projectOf(r))
	},
	afterDelete: func(s *Server, _ *http.Request, t *bastionv1.Template) {
		if s.tasks != nil {
			// The informer says so too; this makes the next read see it.
			s.tasks.forgetTemplate(t.Namespace, t.Name)
		}
	},
	refs: referencedBy(kinds.Template),
	extend: func(s *Server, _, template chi.Router, _ func(http.Handler) http.Handler) {
		template.Get("/tasks", s.templateTasks)
		template.Get("/tasks/last", s.templateLastTasks)
		template.Get("/schedules", s.templateSchedules)
		template.Get("/durations", s.templateDurations)
	},
}

func templateOf(r *http.Request) *bastionv1.Template {
	return entity[*bastionv1.Template](r, "template_id")
}

// renderTemplates answers the project's templates that keep accepts, in
// the api-contract shape, sorted by name.
func (s *Server) renderTemplates(ctx context.Context, a *projectAccess, keep func(*bastionv1.Template) bool) ([]templateJSON, error) {
	v, err := s.newTaskView(ctx, a)
	if err != nil {
		return nil, err
	}
	templates, err := v.allTemplates()
	if err != nil {
		return nil, err
	}
	sort.Slice(templates, func(i, j int) bool {
		a, b := templates[i], templates[j]
		if a.Spec.DisplayName != b.Spec.DisplayName {
			return a.Spec.DisplayName < b.Spec.DisplayName
		}
		return idOf(a) < idOf(b)
	})
	render := s.newTemplateRender(v)
	out := make([]templateJSON, 0, len(templates))
	for _, t := range templates {
		if keep(t) {
			item := render.template(t)
			s.markManaged(&item, t)
			out = append(out, item)
		}
	}
	return out, nil
}

// toTemplateJSON renders one template with its last task and task count.
func (s *Server) toTemplateJSON(r *http.Request, t *bastionv1.Template) (templateJSON, error) {
	v, err := s.newTaskView(r.Context(), projectOf(r))
	if err != nil {
		return templateJSON{}, err
	}
	return s.newTemplateRender(v).template(t), nil
}

// buildTemplate checks a request (docs/features.md §5 and the task-variable rules) and
// maps its ids to references; keepLast is not part of the API, and stays
// what kubectl set, as require_approval and the task pod settings do when
// the request leaves them out.
func buildTemplate(s *Server, r *http.Request, req *templateRequest, old *bastionv1.Template) (func(*bastionv1.Template) error, error) {
	if err := req.validate(); err != nil {
		return nil, err
	}
	spec, err := s.templateSpec(r.Context(), projectOf(r), req, old.Name)
	return func(t *bastionv1.Template) error {
		spec.KeepLast = t.Spec.KeepLast
		if req.RequireApproval == nil {
			spec.RequireApproval = t.Spec.RequireApproval
		}
		if req.TaskPods == nil {
			spec.TaskPods = t.Spec.TaskPods
		}
		t.Spec = spec
		return nil
	}, err
}
