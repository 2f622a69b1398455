package apiserver

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// Matchers and extracted values are lists in an Integration's spec, not
// objects of their own, but the /api gives each an id (from the counters
// integration-matcher and integration-value) and routes of its own. Both
// are served by itemRoutes, told by an itemKind how to reach its list.
// Every member reads them; writing them needs what writing the integration
// needs (the write middleware itemRoutes is given).

// itemKind describes one of an integration's lists to itemRoutes.
type itemKind[T any] struct {
	// noun names an item in messages and events.
	noun    string
	counter string
	list    func(*bastionv1.IntegrationSpec) *[]T
	id      func(*T) *int64
	name    func(*T) string
	toJSON  func(integrationID int64, item *T) any
	// newRequest is an empty body to decode into.
	newRequest func() itemRequest[T]
}

// itemRequest is the body of a POST or PUT of an item: the item plus its
// integration_id (docs/features.md §7).
type itemRequest[T any] interface {
	// item validates the body by docs/features.md §5 and returns the item, id unset.
	item() (T, error)
	// ids are the body's own id and integration_id; 0 when absent.
	ids() (id, integrationID int64)
}

// itemRoutes serves …/integrations/{integration_id}/<items>; writes go
// through write first.
func itemRoutes[T any](s *Server, k itemKind[T], write func(http.Handler) http.Handler) chi.Router {
	r := chi.NewRouter()
	r.Get("/", func(w http.ResponseWriter, r *http.Request) {
		in := entity[*bastionv1.Integration](r, "integration_id")
		out := []any{}
		list := *k.list(&in.Spec)
		for i := range list {
			if *k.id(&list[i]) != 0 {
				out = append(out, k.toJSON(idOf(in), &list[i]))
			}
		}
		respond(w, http.StatusOK, out)
	})
	r.With(write).Post("/", func(w http.ResponseWriter, r *http.Request) { addItem(s, k, w, r) })
	r.With(write).Put("/{item_id}", func(w http.ResponseWriter, r *http.Request) { replaceItem(s, k, w, r) })
	r.With(write).Delete("/{item_id}", func(w http.ResponseWriter, r *http.Request) { removeItem(s, k, w, r) })
	return r
}

// readItem decodes and validates a body; ok false has answered.
func readItem[T any](k itemKind[T], w http.ResponseWriter, r *http.Request) (item T, bodyItemID int64, ok bool) {
	req := k.newRequest()
	if !decode(w, r, req) {
		return item, 0, false
	}
	id, integrationID := req.ids()
	if err := bodyID(r, "integration_id", integrationID); err != nil {
		failErr(w, r, err)
		return item, 0, false
	}
	item, err := req.item()
	if err != nil {
		failErr(w, r, err)
		return item, 0, false
	}
	return item, id, true
}

func addItem[T any](s *Server, k itemKind[T], w http.ResponseWriter, r *http.Request) {
	item, _, ok := readItem(k, w, r)
	if !ok {
		return
	}
	in := entity[*bastionv1.Integration](r, "integration_id")
	id, err := s.opts.IDs.Next(r.Context(), in.Namespace, k.counter)
	if err != nil {
		failErr(w, r, err)
		return
	}
	*k.id(&item) = id
	err = s.updateObject(r.Context(), in, func() error {
		list := k.list(&in.Spec)
		*list = append(*list, item)
		return nil
	})
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.integrationEvent(r, in, "%s %s created", k.noun, k.name(&item))
	respond(w, http.StatusCreated, k.toJSON(idOf(in), &item))
}

func replaceItem[T any](s *Server, k itemKind[T], w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "item_id")
	if !ok {
		return
	}
	item, bodyItemID, ok := readItem(k, w, r)
	if !ok {
		return
	}
	if err := bodyID(r, "item_id", bodyItemID); err != nil {
		failErr(w, r, err)
		return
	}
	*k.id(&item) = id
	in := entity[*bastionv1.Integration](r, "integration_id")
	err := s.updateObject(r.Context(), in, func() error {
		list := *k.list(&in.Spec)
		i := itemIndex(k, list, id)
		if i < 0 {
			return notFound(k.noun)
		}
		list[i] = item
		return nil
	})
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.integrationEvent(r, in, "%s %s updated", k.noun, k.name(&item))
	w.WriteHeader(http.StatusNoContent)
}

func removeItem[T any](s *Server, k itemKind[T], w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "item_id")
	if !ok {
		return
	}
	in := entity[*bastionv1.Integration](r, "integration_id")
	var removed T
	err := s.updateObject(r.Context(), in, func() error {
		list := k.list(&in.Spec)
		i := itemIndex(k, *list, id)
		if i < 0 {
			return notFound(k.noun)
		}
		removed = (*list)[i]
		*list = append((*list)[:i], (*list)[i+1:]...)
		return nil
	})
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.integrationEvent(r, in, "%s %s deleted", k.noun, k.name(&removed))
	w.WriteHeader(http.StatusNoContent)
}

func itemIndex[T any](k itemKind[T], list []T, id int64) int {
	for i := range list {
		if *k.id(&list[i]) == id {
			return i
		}
	}
	return -1
}
