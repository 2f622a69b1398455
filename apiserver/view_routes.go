package apiserver

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/kinds"
)

// viewJSON is a view, a tab of the template list (api-contract.md).
type viewJSON struct {
	ID        int64  `json:"id"`
	ProjectID int64  `json:"project_id"`
	Title     string `json:"title"`
	Position  int32  `json:"position"`
	managedJSON
}

func toViewJSON(a *projectAccess, v *bastionv1.View) viewJSON {
	return viewJSON{ID: idOf(v), ProjectID: a.id, Title: v.Spec.Title, Position: v.Spec.Position}
}

// viewResource serves /project/{id}/views. Members read; writes need
// manageProjectResources. Views are listed as the tabs show them, by
// position then id. A view's templates leave it when it goes (its
// controller clears their viewRef).
var viewResource = &resource[*bastionv1.View, viewRequest, viewJSON]{
	kind: kinds.View, path: "/views", param: "view_id",
	order: func(a, b *bastionv1.View) int {
		return cmp.Or(cmp.Compare(a.Spec.Position, b.Spec.Position), byID(a, b))
	},
	toJSON: func(_ *Server, r *http.Request, v *bastionv1.View) (viewJSON, error) {
		return toViewJSON(projectOf(r), v), nil
	},
	answerCreated: true,
	build: func(_ *Server, _ *http.Request, req *viewRequest, _ *bastionv1.View) (func(*bastionv1.View) error, error) {
		spec, err := req.spec()
		return func(v *bastionv1.View) error { v.Spec = spec; return nil }, err
	},
	extend: func(s *Server, views, view chi.Router, writers func(http.Handler) http.Handler) {
		views.With(writers).Post("/positions", s.setViewPositions)
		view.Get("/templates", s.viewTemplates)
	},
}

// viewRequest is the body of POST /views and PUT /views/{view_id}.
type viewRequest struct {
	ID       int64  `json:"id"`
	Title    string `json:"title"`
	Position int32  `json:"position"`
}

// spec validates the request by docs/features.md §5 ("Title is required").
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

// setViewPositions serves POST /views/positions {"<view_id>": position}.
// Every id is checked before anything is written: an unknown id or a
// negative position is a 400 and no view moves; so is moving a view that a
// GitOps tool manages (its position is its Git's), a 409. A managed view
// sent at the position it has is no change and passes: the console sends
// every tab's position after a drag.
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
		view := obj.(*bastionv1.View)
		if view.Spec.Position != position {
			if err := s.refuseManaged(kinds.View.Name, view); err != nil {
				failErr(w, r, err)
				return
			}
		}
		views[view] = position
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
