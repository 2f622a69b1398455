package apiserver

import (
	"context"
	"net/http"
	"sort"

	"github.com/go-chi/chi/v5"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// templateRoutes serves /project/{id}/templates. Members read; writes
// need manageProjectResources.
func (s *Server) templateRoutes() chi.Router {
	r := chi.NewRouter()
	r.Get("/", s.listTemplates)
	r.With(require(permManageProjectResources)).Post("/", s.createTemplate)
	r.Route("/{template_id}", func(r chi.Router) {
		r.Use(s.loadEntity("template_id", "template", func() client.ObjectList { return &bastionv1.TemplateList{} }))
		r.Get("/", s.getTemplate)
		r.Get("/refs", s.templateRefs)
		r.Get("/tasks", s.templateTasks)
		r.Get("/tasks/last", s.templateLastTasks)
		r.Get("/schedules", s.templateSchedules)
		r.With(require(permManageProjectResources)).Put("/", s.updateTemplate)
		r.With(require(permManageProjectResources)).Delete("/", s.deleteTemplate)
	})
	return r
}

func templateOf(r *http.Request) *bastionv1.Template {
	return entity[*bastionv1.Template](r, "template_id")
}

// listTemplates answers every template of the project, by name, each with
// its last task and task count, computed for all templates in one pass.
func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request) {
	s.respondList(w, r, "templates", func() (any, error) {
		return s.renderTemplates(r.Context(), projectOf(r), func(*bastionv1.Template) bool { return true })
	})
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
			out = append(out, render.template(t))
		}
	}
	return out, nil
}

func (s *Server) getTemplate(w http.ResponseWriter, r *http.Request) {
	v, err := s.newTaskView(r.Context(), projectOf(r))
	if err != nil {
		failErr(w, r, err)
		return
	}
	respond(w, http.StatusOK, s.newTemplateRender(v).template(templateOf(r)))
}

func (s *Server) createTemplate(w http.ResponseWriter, r *http.Request) {
	var req templateRequest
	if !decode(w, r, &req) {
		return
	}
	if err := req.validate(); err != nil {
		failErr(w, r, err)
		return
	}
	a := projectOf(r)
	spec, err := s.templateSpec(r.Context(), a, &req, "")
	if err != nil {
		failErr(w, r, err)
		return
	}
	t := &bastionv1.Template{Spec: spec}
	id, err := s.createObject(r.Context(), a, t, ids.CounterTemplate, spec.DisplayName)
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.listsChanged(a)
	s.objectEvent(r, "template", id, spec.DisplayName, "created")
	v, err := s.newTaskView(r.Context(), a)
	if err != nil {
		failErr(w, r, err)
		return
	}
	respond(w, http.StatusCreated, s.newTemplateRender(v).template(t))
}

func (s *Server) updateTemplate(w http.ResponseWriter, r *http.Request) {
	var req templateRequest
	if !decode(w, r, &req) {
		return
	}
	if err := bodyID(r, "template_id", req.ID); err != nil {
		failErr(w, r, err)
		return
	}
	if err := req.validate(); err != nil {
		failErr(w, r, err)
		return
	}
	t := templateOf(r)
	spec, err := s.templateSpec(r.Context(), projectOf(r), &req, t.Name)
	if err != nil {
		failErr(w, r, err)
		return
	}
	err = s.updateObject(r.Context(), t, func() error {
		spec.KeepLast = t.Spec.KeepLast // not part of the API: kubectl's to set
		t.Spec = spec
		return nil
	})
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.listsChanged(projectOf(r))
	s.objectEvent(r, "template", idOf(t), spec.DisplayName, "updated")
	w.WriteHeader(http.StatusNoContent)
}

// deleteTemplate refuses while a deploy template builds on it or an
// integration starts it; otherwise it deletes the template, whose
// reconciler deletes its schedules, tasks and stored tasks first
// (controllers/cascade.go), as it does for kubectl.
func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request) {
	t := templateOf(r)
	if s.refuseIfReferenced(w, r, refTemplate, t.Name, t.Spec.DisplayName) {
		return
	}
	if err := s.deleteObject(r.Context(), t); err != nil {
		failErr(w, r, err)
		return
	}
	if s.tasks != nil {
		// The informer says so too; this makes the next read see it.
		s.tasks.forgetTemplate(t.Namespace, t.Name)
	}
	s.listsChanged(projectOf(r))
	s.objectEvent(r, "template", idOf(t), t.Spec.DisplayName, "deleted")
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) templateRefs(w http.ResponseWriter, r *http.Request) {
	s.respondRefs(w, r, refTemplate, templateOf(r).Name)
}
