package apiserver

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/go-chi/chi/v5"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// viewJSON is a view, a tab of the template list (api-contract.md).
type viewJSON struct {
	ID        int64  `json:"id"`
	ProjectID int64  `json:"project_id"`
	Title     string `json:"title"`
	Position  int32  `json:"position"`
}

func toViewJSON(a *projectAccess, v *bastionv1.View) viewJSON {
	return viewJSON{ID: idOf(v), ProjectID: a.id, Title: v.Spec.Title, Position: v.Spec.Position}
}

// viewRoutes serves /project/{id}/views. Members read; writes need
// manageProjectResources.
func (s *Server) viewRoutes() chi.Router {
	r := chi.NewRouter()
	r.Get("/", s.listViews)
	r.With(require(permManageProjectResources)).Post("/", s.createView)
	r.With(require(permManageProjectResources)).Post("/positions", s.setViewPositions)
	r.Route("/{view_id}", func(r chi.Router) {
		r.Use(s.loadEntity("view_id", "view", func() client.ObjectList { return &bastionv1.ViewList{} }))
		r.Get("/", s.getView)
		r.Get("/templates", s.viewTemplates)
		r.With(require(permManageProjectResources)).Put("/", s.updateView)
		r.With(require(permManageProjectResources)).Delete("/", s.deleteView)
	})
	return r
}

// viewRequest is the body of POST /views and PUT /views/{view_id}.
type viewRequest struct {
	ID       int64  `json:"id"`
	Title    string `json:"title"`
	Position int32  `json:"position"`
}

// spec validates the request by spec §5 ("Title is required").
func (req viewRequest) spec() (bastionv1.ViewSpec, error) {
	title := strings.TrimSpace(req.Title)
	if title == "" {
		return bastionv1.ViewSpec{}, badRequest("Title is required")
	}
	if req.Position < 0 {
		return bastionv1.ViewSpec{}, badRequest("Must be 0 or greater")
	}
	return bastionv1.ViewSpec{Title: title, Position: req.Position}, nil
}

func (s *Server) listViews(w http.ResponseWriter, r *http.Request) {
	a := projectOf(r)
	list := &bastionv1.ViewList{}
	if err := s.opts.Client.List(r.Context(), list, inNS(a.namespace())); err != nil {
		failErr(w, r, err)
		return
	}
	out := addressable(list.Items, func(v *bastionv1.View) viewJSON { return toViewJSON(a, v) })
	sortByPosition(out)
	respond(w, http.StatusOK, out)
}

// sortByPosition orders views as the tabs show them: position, then id.
func sortByPosition(views []viewJSON) {
	sort.Slice(views, func(i, j int) bool {
		if views[i].Position != views[j].Position {
			return views[i].Position < views[j].Position
		}
		return views[i].ID < views[j].ID
	})
}

func (s *Server) getView(w http.ResponseWriter, r *http.Request) {
	respond(w, http.StatusOK, toViewJSON(projectOf(r), entity[*bastionv1.View](r, "view_id")))
}

func (s *Server) createView(w http.ResponseWriter, r *http.Request) {
	var req viewRequest
	if !decode(w, r, &req) {
		return
	}
	spec, err := req.spec()
	if err != nil {
		failErr(w, r, err)
		return
	}
	a := projectOf(r)
	view := &bastionv1.View{Spec: spec}
	id, err := s.createObject(r.Context(), a, view, ids.CounterView, spec.Title)
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.objectEvent(r, "view", id, spec.Title, "created")
	respond(w, http.StatusCreated, toViewJSON(a, view))
}

func (s *Server) updateView(w http.ResponseWriter, r *http.Request) {
	var req viewRequest
	if !decode(w, r, &req) {
		return
	}
	if err := bodyID(r, "view_id", req.ID); err != nil {
		failErr(w, r, err)
		return
	}
	spec, err := req.spec()
	if err != nil {
		failErr(w, r, err)
		return
	}
	view := entity[*bastionv1.View](r, "view_id")
	if err := s.updateObject(r.Context(), view, func() error { view.Spec = spec; return nil }); err != nil {
		failErr(w, r, err)
		return
	}
	s.objectEvent(r, "view", idOf(view), spec.Title, "updated")
	w.WriteHeader(http.StatusNoContent)
}

// deleteView deletes the view; its reconciler first moves its templates
// to no view (controllers/cascade.go).
func (s *Server) deleteView(w http.ResponseWriter, r *http.Request) {
	view := entity[*bastionv1.View](r, "view_id")
	if err := s.deleteObject(r.Context(), view); err != nil {
		failErr(w, r, err)
		return
	}
	s.objectEvent(r, "view", idOf(view), view.Spec.Title, "deleted")
	w.WriteHeader(http.StatusNoContent)
}

// setViewPositions serves POST /views/positions {"<view_id>": position}.
// Every id is checked before anything is written: an unknown id or a
// negative position is a 400 and no view moves.
func (s *Server) setViewPositions(w http.ResponseWriter, r *http.Request) {
	var req map[string]int32
	if !decode(w, r, &req) {
		return
	}
	a := projectOf(r)
	views := make(map[*bastionv1.View]int32, len(req))
	for key, position := range req {
		id, ok := ids.Parse(key)
		if !ok {
			fail(w, http.StatusBadRequest, fmt.Sprintf("invalid view id %q: must be a positive integer", key))
			return
		}
		if position < 0 {
			fail(w, http.StatusBadRequest, "Must be 0 or greater")
			return
		}
		obj, err := s.objectByID(r.Context(), a.namespace(), id, &bastionv1.ViewList{}, "view")
		if err != nil {
			if _, missing := err.(*statusError); missing {
				err = invalidf("view %d does not exist in this project", id)
			}
			failErr(w, r, err)
			return
		}
		views[obj.(*bastionv1.View)] = position
	}
	for view, position := range views {
		if view.Spec.Position == position {
			continue
		}
		if err := s.updateObject(r.Context(), view, func() error { view.Spec.Position = position; return nil }); err != nil {
			failErr(w, r, err)
			return
		}
		s.objectEvent(r, "view", idOf(view), view.Spec.Title, "moved")
	}
	w.WriteHeader(http.StatusNoContent)
}
