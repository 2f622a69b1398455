package controllers

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// KeyWatches follows key Secrets (metadata only) namespace by namespace,
// for the Key controller and the API's list cache.
//
// The manager's cache is not used for them: a cache of Secrets is one
// cluster-wide watch, and that needs the right to list every Secret of the
// cluster. The manager holds that right only in the namespaces it owns
// (internal/nsaccess), so it watches those one by one: the Project
// controller starts a namespace's watch once it has granted the namespace,
// and stops it when the project goes. Only Secrets labelled as keys are
// listed, so no other Secret's name even reaches the process.
//
// KeyWatches is a manager runnable that does not need leader election: the
// API server of every replica listens to it, while only the leader's Key
// controller does.
type KeyWatches struct {
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

// NewKeyWatches makes the watches' metadata client from cfg.
func NewKeyWatches(cfg *rest.Config) (*KeyWatches, error) {
	c, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &KeyWatches{client: c, watching: map[string]*keyWatch{}}, nil
}

// Start runs the watches asked for so far and those asked for later, until
// ctx ends.
func (w *KeyWatches) Start(ctx context.Context) error {
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
func (w *KeyWatches) NeedLeaderElection() bool { return false }

// Watch starts following the keys of namespace ns; watching twice is one
// watch.
func (w *KeyWatches) Watch(ns string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.watching[ns]; ok {
		return
	}
	onlyKeys, _ := labels.NewRequirement(bastionv1.LabelKeyType, selection.Exists, nil)
	informer := metadatainformer.NewFilteredMetadataInformer(w.client, corev1.SchemeGroupVersion.WithResource("secrets"), ns, 0,
		toolscache.Indexers{}, func(o *metav1.ListOptions) { o.LabelSelector = onlyKeys.String() }).Informer()
	_, _ = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: w.notify,
		UpdateFunc: func(old, obj any) {
			// An id comes from labels; data changes are none of ours, and a
			// resync brings nothing new.
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
func (w *KeyWatches) Unwatch(ns string) {
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
func (w *KeyWatches) Watching(ns string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.watching[ns]
	return ok
}

// Listen calls f for every key already known, then for every key added,
// relabelled or deleted in a watched namespace. f must not block.
func (w *KeyWatches) Listen(f func(*metav1.PartialObjectMetadata)) {
	w.mu.Lock()
	w.listeners = append(w.listeners, f)
	var known []any
	for _, kw := range w.watching {
		known = append(known, kw.informer.GetStore().List()...)
	}
	w.mu.Unlock()
	for _, obj := range known {
		if key, ok := obj.(*metav1.PartialObjectMetadata); ok {
			f(key)
		}
	}
}

// run starts kw's informer; w.mu is held.
func (w *KeyWatches) run(kw *keyWatch) {
	kw.stop = make(chan struct{})
	go kw.informer.Run(kw.stop)
}

func (w *KeyWatches) notify(obj any) {
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
