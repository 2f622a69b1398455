package controllers

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
)

// SecretWatches follows Secrets (metadata only) namespace by namespace:
// keys for the Key controller and the API's list cache, and any Secret a
// resource refers to for the resource reconcilers.
//
// The manager's cache is not used for them: a cache of Secrets is one
// cluster-wide watch, and that needs the right to list every Secret of the
// cluster. The manager holds that right only in the namespaces it owns
// (internal/nsaccess), so it watches those one by one: the Project
// controller starts a namespace's watch once it has granted the namespace,
// and stops it when the project goes. Only metadata is listed: no Secret's
// data ever reaches the process through a watch.
//
// SecretWatches is a manager runnable that does not need leader election:
// the API server of every replica listens to it, while only the leader's
// controllers do.
type SecretWatches struct {
	client metadata.Interface

	mu        sync.Mutex
	ctx       context.Context // set by Start; nil before
	watching  map[string]*keyWatch
	listeners []func(*metav1.PartialObjectMetadata)
}

type keyWatch struct {
	informer toolscache.SharedIndexInformer
	stop     chan struct{} // nil until started
}

// NewSecretWatches makes the watches' metadata client from cfg.
func NewSecretWatches(cfg *rest.Config) (*SecretWatches, error) {
	c, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &SecretWatches{client: c, watching: map[string]*keyWatch{}}, nil
}

// Start runs the watches asked for so far and those asked for later, until
// ctx ends.
func (w *SecretWatches) Start(ctx context.Context) error {
	w.mu.Lock()
	w.ctx = ctx
	for _, kw := range w.watching {
		w.run(kw)
	}
	w.mu.Unlock()

	<-ctx.Done()
	w.mu.Lock()
	defer w.mu.Unlock()
	for ns, kw := range w.watching {
		close(kw.stop)
		delete(w.watching, ns)
	}
	return nil
}

// NeedLeaderElection is false: every replica's API server needs the keys.
func (w *SecretWatches) NeedLeaderElection() bool { return false }

// Watch starts following the Secrets of namespace ns; watching twice is
// one watch.
func (w *SecretWatches) Watch(ns string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.watching[ns]; ok {
		return
	}
	informer := metadatainformer.NewFilteredMetadataInformer(w.client, corev1.SchemeGroupVersion.WithResource("secrets"), ns, 0,
		toolscache.Indexers{}, nil).Informer()
	_, _ = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: w.notify,
		UpdateFunc: func(old, obj any) {
			// Listeners care about a Secret's existence and labels (an id, the
			// key label); data changes are none of theirs.
			if o, ok := old.(*metav1.PartialObjectMetadata); ok {
				if n, ok := obj.(*metav1.PartialObjectMetadata); ok && labels.Equals(o.Labels, n.Labels) {
					return
				}
			}
			w.notify(obj)
		},
		DeleteFunc: func(obj any) {
			if gone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = gone.Obj
			}
			w.notify(obj)
		},
	})
	kw := &keyWatch{informer: informer}
	w.watching[ns] = kw
	if w.ctx != nil {
		w.run(kw)
	}
}

// Unwatch stops following namespace ns.
func (w *SecretWatches) Unwatch(ns string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if kw, ok := w.watching[ns]; ok {
		if kw.stop != nil {
			close(kw.stop)
		}
		delete(w.watching, ns)
	}
}

// Watching reports whether namespace ns is followed.
func (w *SecretWatches) Watching(ns string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.watching[ns]
	return ok
}

// Cached is the metadata of Secret ns/name as namespace ns's watch last
// saw it; false when the namespace is not watched, its watch has not
// listed yet, or the Secret is not (yet) in it. The answer may be a moment
// old: a caller that must not act on a Secret that was just deleted, or
// miss one that was just made, reads the apiserver on false (see
// TaskReconciler.getInput).
func (w *SecretWatches) Cached(ns, name string) (*metav1.PartialObjectMetadata, bool) {
	secret, found, _ := w.Lookup(ns, name)
	return secret, found
}

// Lookup is Cached, and also says whether the namespace's watch has listed
// (synced): only then does "not found" mean "not there a moment ago".
func (w *SecretWatches) Lookup(ns, name string) (secret *metav1.PartialObjectMetadata, found, synced bool) {
	w.mu.Lock()
	kw, ok := w.watching[ns]
	w.mu.Unlock()
	if !ok || kw.stop == nil || !kw.informer.HasSynced() {
		return nil, false, false
	}
	obj, found, err := kw.informer.GetStore().GetByKey(ns + "/" + name)
	if err != nil {
		return nil, false, false
	}
	if !found {
		return nil, false, true
	}
	secret, ok = obj.(*metav1.PartialObjectMetadata)
	return secret, ok, true
}

// Listen calls f for every Secret already known, then for every Secret
// added, relabelled or deleted in a watched namespace. f must not block.
func (w *SecretWatches) Listen(f func(*metav1.PartialObjectMetadata)) {
	w.mu.Lock()
	w.listeners = append(w.listeners, f)
	var known []any
	for _, kw := range w.watching {
		known = append(known, kw.informer.GetStore().List()...)
	}
	w.mu.Unlock()
	for _, obj := range known {
		if secret, ok := obj.(*metav1.PartialObjectMetadata); ok {
			f(secret)
		}
	}
}

// run starts kw's informer; w.mu is held.
func (w *SecretWatches) run(kw *keyWatch) {
	kw.stop = make(chan struct{})
	go kw.informer.Run(kw.stop)
}

func (w *SecretWatches) notify(obj any) {
	key, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return
	}
	w.mu.Lock()
	listeners := append([]func(*metav1.PartialObjectMetadata){}, w.listeners...)
	w.mu.Unlock()
	for _, f := range listeners {
		f(key)
	}
}
