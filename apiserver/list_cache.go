package apiserver

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// listCache keeps the encoded answers of a project's template and task
// lists until something they show changes. Consoles poll these lists and
// a project may hold thousands of templates: encoding a megabyte of JSON
// for every poll would cost more than everything else a request does.
//
// Each project namespace has a generation, raised on every change the
// manager's cache sees to what the lists show (templates, the objects
// they name, schedules, integrations, key Secrets; tasks through the task
// index, once the index has applied the change), and a global one for
// users (their names appear in task lists). An answer is reused only
// while both generations are the ones it was rendered at, read before
// rendering, so a change during a render can never be hidden. The API's
// own writes raise the generation too, before they answer, so a client
// reading its write never gets the answer from before it.
type listCache struct {
	mu      sync.Mutex
	global  uint64
	gens    map[string]uint64
	answers map[string]map[string]cachedAnswer // namespace → key
	renders singleflight.Group
}

type cachedAnswer struct {
	gen, global uint64
	body        []byte
	// gzipped is body compressed, made when a client first accepts it.
	gzipped []byte
}

// maxAnswersPerProject bounds the cache: a project's lists are a few
// routes times a few limits.
const maxAnswersPerProject = 32

func newListCache() *listCache {
	return &listCache{gens: map[string]uint64{}, answers: map[string]map[string]cachedAnswer{}}
}

// changed raises a project's generation and drops its answers.
func (c *listCache) changed(ns string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gens[ns]++
	delete(c.answers, ns)
}

// changedEverywhere raises the global generation (a user changed).
func (c *listCache) changedEverywhere() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.global++
	c.answers = map[string]map[string]cachedAnswer{}
}

func (c *listCache) version(ns string) (gen, global uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gens[ns], c.global
}

func (c *listCache) get(ns, key string, gen, global uint64) (cachedAnswer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.answers[ns][key]
	return a, ok && a.gen == gen && a.global == global
}

func (c *listCache) put(ns, key string, a cachedAnswer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens[ns] != a.gen || c.global != a.global {
		return // already outdated
	}
	answers := c.answers[ns]
	if answers == nil || len(answers) >= maxAnswersPerProject {
		answers = map[string]cachedAnswer{}
		c.answers[ns] = answers
	}
	answers[key] = a
}

// KeyEvents tells of Secrets, which the manager's cache does not hold
// (controllers.SecretWatches): Watch follows a namespace, and Listen hears
// of every Secret added, relabelled or deleted in the followed ones.
type KeyEvents interface {
	Watch(namespace string)
	Listen(func(*metav1.PartialObjectMetadata))
}

// watch raises generations on the changes of the kinds the lists show.
// Tasks are not watched here: the task index raises the generation after
// it applied a change, so no answer is rendered from an index that has
// not seen it yet.
func (c *listCache) watch(ctx context.Context, informers cache.Informers, keys KeyEvents) error {
	perProject := []client.Object{&bastionv1.Template{}, &bastionv1.Inventory{}, &bastionv1.Repository{}, &bastionv1.Environment{},
		&bastionv1.View{}, &bastionv1.Schedule{}, &bastionv1.Integration{}}
	for _, obj := range perProject {
		if err := c.on(ctx, informers, obj, func(o metav1.Object) { c.changed(o.GetNamespace()) }); err != nil {
			return err
		}
	}
	if keys != nil {
		keys.Listen(func(secret *metav1.PartialObjectMetadata) {
			if secret.Labels[bastionv1.LabelKeyType] != "" { // task inputs and environment secrets come and go
				c.changed(secret.Namespace)
			}
		})
	}
	return c.on(ctx, informers, &bastionv1.User{}, func(metav1.Object) { c.changedEverywhere() })
}

func (c *listCache) on(ctx context.Context, informers cache.Informers, obj client.Object, fn func(metav1.Object)) error {
	informer, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	handle := func(o any) {
		if tomb, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
			o = tomb.Obj
		}
		if m, err := meta.Accessor(o); err == nil {
			fn(m)
		}
	}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: handle, UpdateFunc: func(_, o any) { handle(o) }, DeleteFunc: handle,
	})
	return err
}

// respondList answers a list from the cache, or renders, encodes and
// keeps it. key names the route and everything in the request that
// changes the answer.
func (s *Server) respondList(w http.ResponseWriter, r *http.Request, key string, render func() (any, error)) {
	if s.lists == nil {
		v, err := render()
		if err != nil {
			failErr(w, r, err)
			return
		}
		respond(w, http.StatusOK, v)
		return
	}
	ns := projectOf(r).namespace()
	if s.opts.Keys != nil {
		// Every replica's lists follow the keys of the projects they
		// answer for (the leader's Project controller follows them all).
		s.opts.Keys.Watch(ns)
	}
	// A pruned task another replica deleted: no watch tells of it.
	s.tasks.checkHistory(r.Context(), ns, projectOf(r).id)
	gen, global := s.lists.version(ns)
	answer, ok := s.lists.get(ns, key, gen, global)
	if !ok || !s.tasks.fresh(ns) {
		encode := func() (any, error) {
			v, err := render()
			if err != nil {
				return nil, err
			}
			body, err := json.Marshal(v)
			return cachedAnswer{gen: gen, global: global, body: append(body, '\n')}, err
		}
		// Clients that poll the same list after a change wait for one
		// render instead of each making their own.
		v, err, shared := s.lists.renders.Do(fmt.Sprintf("%s\x00%s\x00%d\x00%d", ns, key, gen, global), encode)
		if err != nil && shared && r.Context().Err() == nil {
			v, err = encode() // the request that rendered went away; not this one
		}
		if err != nil {
			failErr(w, r, err)
			return
		}
		answer = v.(cachedAnswer)
	}
	body := answer.body
	if acceptsGzip(r) {
		if answer.gzipped == nil {
			answer.gzipped = gzipped(answer.body)
		}
		body = answer.gzipped
		w.Header().Set("Content-Encoding", "gzip")
	}
	s.lists.put(ns, key, answer)
	h := w.Header()
	h.Set("Vary", "Accept-Encoding")
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// acceptsGzip: the client takes a gzip-compressed answer. A template list
// of a large project is a megabyte of JSON that compresses tenfold.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.ReplaceAll(params, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

func gzipped(body []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	_, _ = zw.Write(body)
	_ = zw.Close()
	return buf.Bytes()
}

// listsChanged drops the project's cached lists after a write of this
// API, which must show in the next read even before the cache's watch
// reports it.
func (s *Server) listsChanged(a *projectAccess) {
	if s.lists != nil {
		s.lists.changed(a.namespace())
	}
}

func (s *Server) watchLists(ctx context.Context, informers cache.Informers, keys KeyEvents) error {
	if err := s.tasks.watch(ctx, informers); err != nil {
		return err
	}
	return s.lists.watch(ctx, informers, keys)
}
