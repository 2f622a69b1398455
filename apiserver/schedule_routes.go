package apiserver

import (
	"context"
	"net/http"
	"sort"
	"strings"

	"github.com/go-chi/chi/v5"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/cron"
	"github.com/bastion-dev/bastion/internal/ids"
)

// scheduleJSON is a schedule (api-contract.md). repository_id is set when
// the schedule runs only on a new commit, as in Semaphore, where a
// schedule with a repository checks that repository's branch head first;
// null otherwise.
type scheduleJSON struct {
	ID           int64  `json:"id"`
	ProjectID    int64  `json:"project_id"`
	TemplateID   int64  `json:"template_id"`
	CronFormat   string `json:"cron_format"`
	Name         string `json:"name"`
	Active       bool   `json:"active"`
	RepositoryID *int64 `json:"repository_id"`
}

// scheduleListItem is a schedule in the project-level list, which adds
// its template's name.
type scheduleListItem struct {
	scheduleJSON
	TplName string `json:"tpl_name"`
}

func (s *Server) toScheduleJSON(ctx context.Context, a *projectAccess, sch *bastionv1.Schedule) (scheduleJSON, *bastionv1.Template) {
	ns := a.namespace()
	template := &bastionv1.Template{}
	out := scheduleJSON{
		ID: idOf(sch), ProjectID: a.id, TemplateID: s.refID(ctx, ns, &sch.Spec.TemplateRef, template),
		CronFormat: sch.Spec.CronFormat, Name: sch.Spec.DisplayName, Active: sch.Spec.Active,
	}
	if sch.Spec.RunOnlyOnNewCommit {
		repo := sch.Spec.RepositoryRef
		if repo == nil && out.TemplateID != 0 {
			repo = &template.Spec.RepositoryRef // the one the controller checks
		}
		out.RepositoryID = nullable(s.refID(ctx, ns, repo, &bastionv1.Repository{}))
	}
	return out, template
}

// scheduleRoutes serves /project/{id}/schedules. Members read and validate;
// writes need manageProjectResources.
func (s *Server) scheduleRoutes() chi.Router {
	r := chi.NewRouter()
	r.Get("/", s.listSchedules)
	r.Post("/validate", s.validateCron)
	r.With(require(permManageProjectResources)).Post("/", s.createSchedule)
	r.Route("/{schedule_id}", func(r chi.Router) {
		r.Use(s.loadEntity("schedule_id", "schedule", func() client.ObjectList { return &bastionv1.ScheduleList{} }))
		r.Get("/", s.getSchedule)
		r.With(require(permManageProjectResources)).Put("/", s.updateSchedule)
		r.With(require(permManageProjectResources)).Put("/active", s.setScheduleActive)
		r.With(require(permManageProjectResources)).Delete("/", s.deleteSchedule)
	})
	return r
}

// scheduleRequest is the body of POST /schedules and PUT /schedules/{id}.
type scheduleRequest struct {
	ID         int64  `json:"id"`
	TemplateID int64  `json:"template_id"`
	CronFormat string `json:"cron_format"`
	Name       string `json:"name"`
	// Active absent keeps the schedule as it is (a new one is active).
	Active       *bool  `json:"active"`
	RepositoryID *int64 `json:"repository_id"`
}

// spec validates the request and maps its ids to references. active is
// the value when the request leaves it out.
func (s *Server) scheduleSpec(ctx context.Context, a *projectAccess, req scheduleRequest, active bool) (bastionv1.ScheduleSpec, error) {
	if req.TemplateID == 0 {
		return bastionv1.ScheduleSpec{}, badRequest("Template is required")
	}
	template, err := s.refTo(ctx, a, req.TemplateID, &bastionv1.TemplateList{}, "template_id")
	if err != nil {
		return bastionv1.ScheduleSpec{}, err
	}
	format := strings.TrimSpace(req.CronFormat)
	if err := cron.Validate(format); err != nil {
		return bastionv1.ScheduleSpec{}, badRequest(err.Error())
	}
	if req.Active != nil {
		active = *req.Active
	}
	spec := bastionv1.ScheduleSpec{
		DisplayName: strings.TrimSpace(req.Name), TemplateRef: *template, CronFormat: format, Active: active,
	}
	if req.RepositoryID != nil && *req.RepositoryID != 0 {
		repo, err := s.refTo(ctx, a, *req.RepositoryID, &bastionv1.RepositoryList{}, "repository_id")
		if err != nil {
			return bastionv1.ScheduleSpec{}, err
		}
		spec.RepositoryRef, spec.RunOnlyOnNewCommit = repo, true
	}
	return spec, nil
}

// cronRequest is the body of POST /schedules/validate.
type cronRequest struct {
	CronFormat string `json:"cron_format"`
}

// activeRequest is the body of PUT /schedules/{id}/active.
type activeRequest struct {
	Active *bool `json:"active"`
}

// validateCron serves POST /schedules/validate: 200 with an empty body when
// the cron format parses, else 400 with the parser's "Cron: ..." message.
func (s *Server) validateCron(w http.ResponseWriter, r *http.Request) {
	var req cronRequest
	if !decode(w, r, &req) {
		return
	}
	if err := cron.Validate(strings.TrimSpace(req.CronFormat)); err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request) {
	a := projectOf(r)
	list := &bastionv1.ScheduleList{}
	if err := s.opts.Client.List(r.Context(), list, inNS(a.namespace())); err != nil {
		failErr(w, r, err)
		return
	}
	out := addressable(list.Items, func(sch *bastionv1.Schedule) scheduleListItem {
		item, template := s.toScheduleJSON(r.Context(), a, sch)
		return scheduleListItem{scheduleJSON: item, TplName: template.Spec.DisplayName}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	respond(w, http.StatusOK, out)
}

func (s *Server) getSchedule(w http.ResponseWriter, r *http.Request) {
	out, _ := s.toScheduleJSON(r.Context(), projectOf(r), entity[*bastionv1.Schedule](r, "schedule_id"))
	respond(w, http.StatusOK, out)
}

func (s *Server) createSchedule(w http.ResponseWriter, r *http.Request) {
	var req scheduleRequest
	if !decode(w, r, &req) {
		return
	}
	a := projectOf(r)
	spec, err := s.scheduleSpec(r.Context(), a, req, true)
	if err != nil {
		failErr(w, r, err)
		return
	}
	sch := &bastionv1.Schedule{Spec: spec}
	id, err := s.createObject(r.Context(), a, sch, ids.CounterSchedule, spec.DisplayName)
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.objectEvent(r, "schedule", id, scheduleName(sch), "created")
	out, _ := s.toScheduleJSON(r.Context(), a, sch)
	respond(w, http.StatusCreated, out)
}

func (s *Server) updateSchedule(w http.ResponseWriter, r *http.Request) {
	var req scheduleRequest
	if !decode(w, r, &req) {
		return
	}
	if err := bodyID(r, "schedule_id", req.ID); err != nil {
		failErr(w, r, err)
		return
	}
	sch := entity[*bastionv1.Schedule](r, "schedule_id")
	spec, err := s.scheduleSpec(r.Context(), projectOf(r), req, sch.Spec.Active)
	if err != nil {
		failErr(w, r, err)
		return
	}
	if err := s.updateObject(r.Context(), sch, func() error { sch.Spec = spec; return nil }); err != nil {
		failErr(w, r, err)
		return
	}
	s.objectEvent(r, "schedule", idOf(sch), scheduleName(sch), "updated")
	w.WriteHeader(http.StatusNoContent)
}

// setScheduleActive serves PUT /schedules/{id}/active {active}.
func (s *Server) setScheduleActive(w http.ResponseWriter, r *http.Request) {
	var req activeRequest
	if !decode(w, r, &req) {
		return
	}
	if req.Active == nil {
		fail(w, http.StatusBadRequest, "active is required")
		return
	}
	sch := entity[*bastionv1.Schedule](r, "schedule_id")
	if err := s.updateObject(r.Context(), sch, func() error { sch.Spec.Active = *req.Active; return nil }); err != nil {
		failErr(w, r, err)
		return
	}
	verb := "deactivated"
	if *req.Active {
		verb = "activated"
	}
	s.objectEvent(r, "schedule", idOf(sch), scheduleName(sch), verb)
	w.WriteHeader(http.StatusNoContent)
}

// deleteSchedule deletes the schedule. Its tasks stay: they are history.
func (s *Server) deleteSchedule(w http.ResponseWriter, r *http.Request) {
	sch := entity[*bastionv1.Schedule](r, "schedule_id")
	if err := s.deleteObject(r.Context(), sch); err != nil {
		failErr(w, r, err)
		return
	}
	s.objectEvent(r, "schedule", idOf(sch), scheduleName(sch), "deleted")
	w.WriteHeader(http.StatusNoContent)
}
