package apiserver

import (
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bastion-dev/bastion/internal/gitops"
)

// managedJSON is embedded in every project resource's JSON, an alias's, a
// project's and a user's: who manages the object from outside Bastion
// ("Flux", "Argo CD", docs/gitops.md), which makes it read-only here;
// absent when nobody does or when Options.EditManagedObjects lets them be
// edited.
type managedJSON struct {
	ManagedBy string `json:"managed_by,omitempty"`
}

func (m *managedJSON) setManagedBy(name string) { m.ManagedBy = name }

// managedMarker is a JSON with a managedJSON.
type managedMarker interface{ setManagedBy(string) }

// managerOf is who keeps obj in step from outside, when that makes it
// read-only: false when nobody does or the setting turns it off.
func (s *Server) managerOf(obj client.Object) (gitops.Manager, bool) {
	if s.opts.EditManagedObjects {
		return gitops.Manager{}, false
	}
	return gitops.Of(obj)
}

// markManaged fills the managed_by of out, a pointer to an answer's JSON,
// from obj.
func (s *Server) markManaged(out any, obj client.Object) {
	marker, ok := out.(managedMarker)
	if !ok {
		return
	}
	if m, managed := s.managerOf(obj); managed {
		marker.setManagedBy(m.Name)
	}
}

// refuseManaged is the error of an edit or delete of obj, a noun
// ("template"), when a GitOps tool manages it: 409, as other refusals
// because of an object's state, with where to change it instead.
func (s *Server) refuseManaged(noun string, obj client.Object) error {
	if m, managed := s.managerOf(obj); managed {
		return conflict(m.Refusal(noun))
	}
	return nil
}

// unmanagedWrites guards every write to one object of a kind, after the
// permission check: the object loadEntity put in the context under param
// must not be managed from outside. Writes to the collection (no object
// loaded) pass: a new object is Bastion's. Reads pass too, so that a group
// of routes can take the guard whole (an integration's aliases).
func (s *Server) unmanagedWrites(param, noun string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				next.ServeHTTP(w, r)
				return
			}
			if obj, ok := r.Context().Value(entityKey(param)).(client.Object); ok {
				if err := s.refuseManaged(noun, obj); err != nil {
					failErr(w, r, err)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}
