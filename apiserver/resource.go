package apiserver

import (
	"cmp"
	"context"
	"net/http"
	"reflect"
	"slices"

	"github.com/go-chi/chi/v5"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/kinds"
)

// resource is one project resource kind as the API shows it: the kind's
// descriptor (internal/kinds: type, counter, display name, references),
// its place in the route tree, its JSON (requests Q, answers A) and the
// hooks for what is its own. Every kind's list, get, create, update,
// delete and refs are the handlers below; a kind's file holds only its
// JSON mapping and its rules.
type resource[T client.Object, Q, A any] struct {
	kind kinds.Kind[T]
	// path is where the kind is mounted under /project/{project_id};
	// param the path parameter of one object ("inventory_id").
	path, param string
	// writers guards every write; nil is manageProjectResources.
	writers func(http.Handler) http.Handler
	// listOptions narrow the list (keys: Secrets with a key type).
	listOptions []client.ListOption
	// order sorts the list; nil is by display name, ignoring case, then id.
	order func(a, b T) int

	// toJSON renders an object in answers.
	toJSON func(s *Server, r *http.Request, obj T) (A, error)
	// listItem renders an object in the list, when that differs from
	// toJSON; listSample is a value of what it renders (for the API's
	// description).
	listItem   func(s *Server, r *http.Request, obj T) (any, error)
	listSample any
	// listAll, when set, renders the whole list at once (templates: one
	// pass over the project's tasks for every template's last task).
	listAll func(s *Server, r *http.Request) (any, error)
	// listKey, when set, answers the list through the list cache under that key.
	listKey string

	// build checks a request (docs/features.md §5) and returns the change it makes: to
	// a new object on create, to the latest stored version on update. old
	// is the object as loaded (a new, nameless one on create).
	build func(s *Server, r *http.Request, req *Q, old T) (func(T) error, error)
	// create and update replace the default writes (build, then
	// createObject or updateObject) for kinds that write more than their
	// object (an environment's Secret, a key's change of type).
	create func(s *Server, r *http.Request, req *Q) (T, error)
	update func(s *Server, r *http.Request, req *Q, obj T) error
	// answerCreated: create answers 201 with the object; else 204.
	answerCreated bool

	// refs answers GET …/{id}/refs; nil: the kind has no such route.
	// refsSample is a value of its answer when that is not a refsJSON.
	refs       func(s *Server, r *http.Request, obj T) (any, error)
	refsSample any
	// afterWrite runs after every create, update and delete.
	afterWrite func(s *Server, r *http.Request)
	// afterDelete runs once the object is gone.
	afterDelete func(s *Server, r *http.Request, obj T)
	// extend adds the kind's own routes to the collection and to an object
	// (whose entity is loaded), with writers as the write guard.
	extend func(s *Server, collection, item chi.Router, writers func(http.Handler) http.Handler)
}

// resourceRoutes is a resource with its type parameters erased, for the
// route tree and the OpenAPI document.
type resourceRoutes interface {
	mountPath() string
	routes(s *Server) chi.Router
	// jsonTypes are the Go types of its JSON, for the OpenAPI document.
	jsonTypes() resourceJSONTypes
	kindName() string
}

// resourceJSONTypes are the Go types of a resource's JSON.
type resourceJSONTypes struct {
	// Param is the path parameter of one object ("inventory_id").
	Param string
	// Request is the body of POST and PUT; Answer the object in GET and,
	// when Created is 201, in POST's answer (else POST answers 204).
	Request, Answer reflect.Type
	Created         int
	// ListItem is an item of GET's list.
	ListItem reflect.Type
	// Refs is GET …/{id}/refs's answer; nil when there is no such route.
	Refs reflect.Type
}

// projectResources are the resources under /project/{project_id}.
func projectResources() []resourceRoutes {
	return []resourceRoutes{keyResource, repositoryResource, inventoryResource, environmentResource,
		templateResource, viewResource, scheduleResource, integrationResource}
}

func (d *resource[T, Q, A]) mountPath() string { return d.path }
func (d *resource[T, Q, A]) kindName() string  { return d.kind.Name }
func (d *resource[T, Q, A]) jsonTypes() resourceJSONTypes {
	out := resourceJSONTypes{Param: d.param, Request: reflect.TypeFor[Q](), Answer: reflect.TypeFor[A](),
		Created: http.StatusNoContent, ListItem: reflect.TypeFor[A]()}
	if d.answerCreated {
		out.Created = http.StatusCreated
	}
	if d.listSample != nil {
		out.ListItem = reflect.TypeOf(d.listSample)
	}
	if d.refs != nil {
		out.Refs = reflect.TypeFor[refsJSON]()
		if d.refsSample != nil {
			out.Refs = reflect.TypeOf(d.refsSample)
		}
	}
	return out
}

func (d *resource[T, Q, A]) routes(s *Server) chi.Router {
	allowed := d.writers
	if allowed == nil {
		allowed = require(permManageProjectResources)
	}
	// Every write, its own routes' included, is refused on an object that
	// a GitOps tool manages (docs/gitops.md), once the permission passed.
	unmanaged := s.unmanagedWrites(d.param, d.kind.Name)
	writers := func(next http.Handler) http.Handler { return allowed(unmanaged(next)) }
	r := chi.NewRouter()
	r.Get("/", d.serveList(s))
	r.With(writers).Post("/", d.serveCreate(s))
	r.Route("/{"+d.param+"}", func(item chi.Router) {
		item.Use(s.loadEntity(d.param, d.kind.Name, d.kind.NewList))
		item.Get("/", d.serveGet(s))
		if d.refs != nil {
			item.Get("/refs", d.serveRefs(s))
		}
		item.With(writers).Put("/", d.serveUpdate(s))
		item.With(writers).Delete("/", d.serveDelete(s))
		if d.extend != nil {
			d.extend(s, r, item, writers)
		}
	})
	return r
}

func (d *resource[T, Q, A]) entity(r *http.Request) T { return entity[T](r, d.param) }

// serveList answers the project's addressable objects of the kind: not
// being deleted, and numbered (one made with kubectl gets its id from its
// controller a moment later).
func (d *resource[T, Q, A]) serveList(s *Server) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		render := func() (any, error) { return d.renderList(s, r) }
		if d.listAll != nil {
			render = func() (any, error) { return d.listAll(s, r) }
		}
		if d.listKey != "" {
			s.respondList(w, r, d.listKey, render)
			return
		}
		out, err := render()
		answer(w, r, http.StatusOK, out, err)
	}
}

func (d *resource[T, Q, A]) renderList(s *Server, r *http.Request) (any, error) {
	list := d.kind.NewList()
	opts := append([]client.ListOption{inNS(projectOf(r).namespace())}, d.listOptions...)
	if err := s.opts.Client.List(r.Context(), list, opts...); err != nil {
		return nil, err
	}
	var items []T
	err := meta.EachListItem(list, func(o runtime.Object) error {
		if obj := o.(T); obj.GetDeletionTimestamp().IsZero() && idOf(obj) != 0 {
			items = append(items, obj)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	order := d.order
	if order == nil {
		order = d.byName
	}
	slices.SortStableFunc(items, order)
	render := d.listItem
	if render == nil {
		render = func(s *Server, r *http.Request, obj T) (any, error) {
			out, err := d.toJSON(s, r, obj)
			return &out, err
		}
	}
	out := make([]any, 0, len(items))
	for _, obj := range items {
		item, err := render(s, r, obj)
		if err != nil {
			return nil, err
		}
		s.markManaged(item, obj)
		out = append(out, item)
	}
	return out, nil
}

// byName orders a list as the console shows it: by name, ignoring case,
// then by id so that equal names keep a stable order.
func (d *resource[T, Q, A]) byName(a, b T) int {
	return compareByName(d.kind.Display(a), idOf(a), d.kind.Display(b), idOf(b))
}

func byID[T client.Object](a, b T) int { return cmp.Compare(idOf(a), idOf(b)) }

func (d *resource[T, Q, A]) serveGet(s *Server) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := d.render(s, r, d.entity(r))
		answer(w, r, http.StatusOK, out, err)
	}
}

// render is toJSON with who manages the object (managed_by): every kind's
// answers go through here (lists through renderList, templates' through
// renderTemplates).
func (d *resource[T, Q, A]) render(s *Server, r *http.Request, obj T) (*A, error) {
	out, err := d.toJSON(s, r, obj)
	if err != nil {
		return nil, err
	}
	s.markManaged(&out, obj)
	return &out, nil
}

func (d *resource[T, Q, A]) serveRefs(s *Server) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := d.refs(s, r, d.entity(r))
		answer(w, r, http.StatusOK, out, err)
	}
}

// referencedBy is the refs hook of the kinds others refer to: who does,
// from the controllers' reference index.
func referencedBy[T client.Object](kind kinds.Kind[T]) func(*Server, *http.Request, T) (any, error) {
	return func(s *Server, r *http.Request, obj T) (any, error) {
		refs, _, err := s.referencesTo(r.Context(), projectOf(r).namespace(), kind.Self, obj.GetName())
		return refs, err
	}
}

func (d *resource[T, Q, A]) serveCreate(s *Server) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Q
		if !decode(w, r, &req) {
			return
		}
		create := d.create
		if create == nil {
			create = d.createObject
		}
		obj, err := create(s, r, &req)
		if err != nil {
			failErr(w, r, err)
			return
		}
		d.written(s, r, obj, "created")
		if !d.answerCreated {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		out, err := d.render(s, r, obj)
		answer(w, r, http.StatusCreated, out, err)
	}
}

// answer responds v with status, or the error err.
func answer(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	if err != nil {
		failErr(w, r, err)
		return
	}
	respond(w, status, v)
}

// createObject is the default create: build on a new object, which gets
// its id and a name from its display name.
func (d *resource[T, Q, A]) createObject(s *Server, r *http.Request, req *Q) (T, error) {
	obj := d.kind.New()
	if d.kind.Cascades {
		// As its reconciler would add it, one write later.
		controllerutil.AddFinalizer(obj, bastionv1.CascadeFinalizer)
	}
	change, err := d.build(s, r, req, obj)
	if err == nil {
		err = change(obj)
	}
	if err == nil {
		_, err = s.createObject(r.Context(), projectOf(r), obj, d.kind.Name, d.kind.Display(obj))
	}
	return obj, err
}

func (d *resource[T, Q, A]) serveUpdate(s *Server) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Q
		if !decode(w, r, &req) {
			return
		}
		if err := bodyID(r, d.param, requestID(&req)); err != nil {
			failErr(w, r, err)
			return
		}
		obj := d.entity(r)
		update := d.update
		if update == nil {
			update = d.updateObject
		}
		if err := update(s, r, &req, obj); err != nil {
			failErr(w, r, err)
			return
		}
		d.written(s, r, obj, "updated")
		w.WriteHeader(http.StatusNoContent)
	}
}

// updateObject is the default update: build, applied to the latest
// stored version.
func (d *resource[T, Q, A]) updateObject(s *Server, r *http.Request, req *Q, obj T) error {
	change, err := d.build(s, r, req, obj)
	if err != nil {
		return err
	}
	return s.updateObject(r.Context(), obj, func() error { return change(obj) })
}

// requestID is the id a request body names (every request type has its
// object's id as ID; api-contract.md: 400 when it is not the URL's).
func requestID(req any) int64 {
	v := reflect.ValueOf(req).Elem()
	if v.Kind() != reflect.Struct {
		return 0
	}
	if f := v.FieldByName("ID"); f.IsValid() && f.CanInt() {
		return f.Int()
	}
	return 0
}

// serveDelete refuses while other objects need this one (400 with inUse),
// else deletes it and answers once the cache no longer has it. What goes
// with the object (a template's schedules and tasks, an integration's
// aliases, a view's place in templates) is its controller's to remove.
func (d *resource[T, Q, A]) serveDelete(s *Server) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		obj := d.entity(r)
		if d.kind.Self.Noun != "" && s.refuseIfReferenced(w, r, d.kind.Self, obj.GetName(), d.kind.Display(obj)) {
			return
		}
		if err := s.deleteObject(r.Context(), obj); err != nil {
			failErr(w, r, err)
			return
		}
		if d.afterDelete != nil {
			d.afterDelete(s, r, obj)
		}
		d.written(s, r, obj, "deleted")
		w.WriteHeader(http.StatusNoContent)
	}
}

// written records the change and runs afterWrite.
func (d *resource[T, Q, A]) written(s *Server, r *http.Request, obj T, verb string) {
	if d.afterWrite != nil {
		d.afterWrite(s, r)
	}
	s.objectEvent(r, d.kind.Name, idOf(obj), d.kind.Display(obj), verb)
}

// refItem is one referring object.
type refItem struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// refsJSON answers GET …/{id}/refs (api-contract.md, "refs"); integrations
// are ours: a webhook that starts a template or uses a key refers to it too.
type refsJSON struct {
	Templates    []refItem `json:"templates"`
	Inventories  []refItem `json:"inventories"`
	Repositories []refItem `json:"repositories"`
	Schedules    []refItem `json:"schedules"`
	Integrations []refItem `json:"integrations"`
}

// buckets are refsJSON's lists by the kind of object they list.
func (refs *refsJSON) buckets() map[string]*[]refItem {
	return map[string]*[]refItem{
		kinds.Template.Name: &refs.Templates, kinds.Inventory.Name: &refs.Inventories,
		kinds.Repository.Name: &refs.Repositories, kinds.Schedule.Name: &refs.Schedules,
		kinds.Integration.Name: &refs.Integrations,
	}
}

// referencesTo lists the objects of the project that refer to the object
// of target called name, from the reference index, and whether any of
// them forbids its deletion (kinds.Needs). A schedule is its template's
// and an alias its integration's: they do not block.
func (s *Server) referencesTo(ctx context.Context, ns string, target kinds.Target, name string) (refsJSON, bool, error) {
	out := refsJSON{Templates: []refItem{}, Inventories: []refItem{}, Repositories: []refItem{}, Schedules: []refItem{}, Integrations: []refItem{}}
	referrers, err := kinds.Referring(ctx, s.opts.Client, ns, target, name)
	if err != nil {
		return out, false, err
	}
	buckets := out.buckets()
	blocking := false
	for _, ref := range referrers {
		blocking = blocking || ref.Blocks()
		if bucket := buckets[ref.Kind.KindName()]; bucket != nil {
			*bucket = append(*bucket, refItem{idOf(ref.Object), ref.Kind.DisplayOf(ref.Object)})
		}
	}
	return out, blocking, nil
}

// inUseBody is the in-use delete answer (api-contract.md).
type inUseBody struct {
	Error string `json:"error"`
	InUse bool   `json:"inUse"`
}

// refuseIfReferenced answers 400 with inUse and returns true when the
// object of target called name is still needed; nothing is deleted.
func (s *Server) refuseIfReferenced(w http.ResponseWriter, r *http.Request, target kinds.Target, name, display string) bool {
	_, blocking, err := s.referencesTo(r.Context(), projectOf(r).namespace(), target, name)
	if err != nil {
		failErr(w, r, err)
		return true
	}
	if !blocking {
		return false
	}
	respond(w, http.StatusBadRequest, inUseBody{
		Error: "The " + target.Noun + " " + display + " is in use by other resources; see its references", InUse: true,
	})
	return true
}
