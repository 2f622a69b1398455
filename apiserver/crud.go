package apiserver

import (
	"context"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/objname"
	"github.com/bastion-dev/bastion/internal/store"
)

// The shared plumbing of the project resources (docs/features.md §7):
// finding an object by its id, creating one with its id, updating and
// deleting with the read-your-writes wait, mapping references between ids
// and names, and recording the event. resource.go serves every kind with
// these; each kind's file adds only its JSON shape and its
// docs/features.md §5 rules.

// idOf is an object's API id, or 0 before it has one.
func idOf(obj client.Object) int64 {
	id, _ := ids.FromLabels(obj)
	return id
}

// objectByID finds the object of list's kind with id in namespace ns; a
// missing one (or one being deleted) is notFound(what). Keys are Secrets,
// which are not cached: their list goes to the apiserver, which knows no
// id index, so they are selected by label instead, and only Secrets that
// are keys count (no other Secret is addressed by id).
func (s *Server) objectByID(ctx context.Context, ns string, id int64, list client.ObjectList, what string) (client.Object, error) {
	sel := []client.ListOption{client.InNamespace(ns), ids.MatchingID(id)}
	if isSecretList(list) {
		sel = []client.ListOption{client.InNamespace(ns),
			client.MatchingLabels{bastionv1.LabelID: ids.Format(id)}, client.HasLabels{bastionv1.LabelKeyType}}
	}
	if err := s.opts.Client.List(ctx, list, sel...); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		obj, ok := item.(client.Object)
		if ok && obj.GetDeletionTimestamp().IsZero() {
			return obj, nil
		}
	}
	return nil, notFound(what)
}

// createObject gives obj an id from counter and a generated name from its
// display name, creates it in the project's namespace and waits until the
// cache has it. obj is updated in place (name, resourceVersion).
func (s *Server) createObject(ctx context.Context, a *projectAccess, obj client.Object, counter, display string) (int64, error) {
	ns := a.namespace()
	id, err := s.opts.IDs.Next(ctx, ns, counter)
	if err != nil {
		return 0, nothingMade{err}
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[bastionv1.LabelID] = ids.Format(id)
	obj.SetLabels(labels)
	obj.SetNamespace(ns)
	if obj.GetName() == "" {
		obj.SetGenerateName(objname.GenerateName(display, counter))
	}
	if err := s.opts.Client.Create(ctx, obj); err != nil {
		return 0, err
	}
	return id, s.waitCached(ctx, obj)
}

// nothingMade is a createObject failure before its create was sent: the
// object certainly does not exist.
type nothingMade struct{ error }

func (e nothingMade) Unwrap() error { return e.error }

// updateObject applies change to the latest version of obj (read from the
// apiserver), retrying when someone else wrote in between, and waits until
// the cache has the result. change may refuse by returning an error.
func (s *Server) updateObject(ctx context.Context, obj client.Object, change func() error) error {
	key := client.ObjectKeyFromObject(obj)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := s.opts.Reader.Get(ctx, key, obj); err != nil {
			return err
		}
		if err := change(); err != nil {
			return err
		}
		return s.opts.Client.Update(ctx, obj)
	})
	if err != nil {
		return err
	}
	return s.waitCached(ctx, obj)
}

// deleteObject deletes obj and waits until the cache no longer has it at
// all: a kind with a cascade is answered once its reconciler has done it
// and let the object go (controllers/cascade.go).
func (s *Server) deleteObject(ctx context.Context, obj client.Object) error {
	if err := s.opts.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return err
	}
	return s.waitDeleted(ctx, obj)
}

// refTo turns an id from a request into a reference to the object with that
// id; an id that names nothing is a 400 that says which field is wrong.
func (s *Server) refTo(ctx context.Context, a *projectAccess, id int64, list client.ObjectList, field string) (*bastionv1.ObjectRef, error) {
	obj, err := s.objectByID(ctx, a.namespace(), id, list, field)
	if err != nil {
		if _, missing := err.(*statusError); missing {
			return nil, invalidf("%s %d does not exist in this project", field, id)
		}
		return nil, err
	}
	return &bastionv1.ObjectRef{Name: obj.GetName()}, nil
}

// refID is the id of the object a reference names, or 0 when the reference
// is empty or dangling (a reader still gets an answer; the object's Ready
// condition says what is missing).
func (s *Server) refID(ctx context.Context, ns string, ref *bastionv1.ObjectRef, obj client.Object) int64 {
	if ref == nil || ref.Name == "" {
		return 0
	}
	if err := s.opts.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, obj); err != nil {
		return 0
	}
	return idOf(obj)
}

// objectEvent records a change to a project resource.
func (s *Server) objectEvent(r *http.Request, objectType string, id int64, name, verb string) {
	s.event(r, store.Event{ObjectType: objectType, ObjectID: id, ObjectName: name,
		Description: fmt.Sprintf("%s %s %s", capitalize(objectType), name, verb)})
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

type entityKey string

// loadEntity resolves the path parameter param to an object of list's kind
// in the route's project (404 otherwise) and puts it in the context, where
// entity reads it back.
func (s *Server) loadEntity(param, what string, newList func() client.ObjectList) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, ok := pathID(w, r, param)
			if !ok {
				return
			}
			obj, err := s.objectByID(r.Context(), projectOf(r).namespace(), id, newList(), what)
			if err != nil {
				failErr(w, r, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), entityKey(param), obj)))
		})
	}
}

// entity is the object loadEntity put in the context for param.
func entity[T client.Object](r *http.Request, param string) T {
	obj, _ := r.Context().Value(entityKey(param)).(T)
	return obj
}

// bodyID refuses a body whose id differs from the URL's (api-contract.md:
// 400 when the body id ≠ URL id); 0 means the body did not say.
func bodyID(r *http.Request, param string, id int64) error {
	if id == 0 {
		return nil
	}
	if want := chi.URLParam(r, param); want != ids.Format(id) {
		return invalidf("the body's id %d is not the URL's id %s", id, want)
	}
	return nil
}

func isSecretList(list client.ObjectList) bool {
	_, ok := list.(*corev1.SecretList)
	return ok
}

func inNS(ns string) client.InNamespace { return client.InNamespace(ns) }

// named reports a reference to the object called name.
func named(name string, ref *bastionv1.ObjectRef) bool { return ref != nil && ref.Name == name }
