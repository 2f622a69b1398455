// Package watchretry keeps the manager's caches close behind the
// kube-apiserver when it comes back from a restart.
//
// client-go's reflector waits between attempts to list and watch, and the
// wait doubles with every attempt that fails, up to 30 s with a jitter that
// can double it, until two minutes pass without one. A kube-apiserver that
// restarts a few times within a minute (a control plane upgrade, an etcd
// failover) leaves the reflectors asleep for up to a minute after it is
// back: the manager's caches stay old, so ended tasks read as running, new
// tasks wait unreconciled, and every write through /api waits the full
// five seconds for its cache (measured: tasks seen ended 26 to 90 s late
// after three restarts, docs/reliability.md).
//
// The shared informer gives no way to set the reflector's backoff. So the
// lists and watches its reflector asks for retry inside the call, at short
// capped intervals, while the kube-apiserver is unreachable or not ready to
// serve: the reflector sees one failure per outage, not one per attempt, and
// its own wait stays at its first steps. A handful of informers asking every
// couple of seconds during an outage is nothing beside what a cluster's
// nodes ask; client-go's 30 s cap is meant for thousands of kubelets.
package watchretry

import (
	"context"
	"errors"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// The retries inside a list or a watch: the first after FirstDelay, each
// next one twice as late, never later than MaxDelay, each with up to half as
// much again of jitter so that the informers of several replicas spread.
const (
	FirstDelay = 200 * time.Millisecond
	MaxDelay   = 2 * time.Second
)

// NewInformer is controller-runtime's cache.Options.NewInformer: the shared
// informer it makes by default, over lists and watches that retry while the
// kube-apiserver is away.
func NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	return toolscache.NewSharedIndexInformer(Wrap(lw), obj, resync, indexers)
}

// Wrap returns lw whose ListWithContext and WatchWithContext, the calls the
// reflector makes, retry transient failures until they succeed, fail
// otherwise, or their context ends.
func Wrap(lw toolscache.ListerWatcher) toolscache.ListerWatcher {
	return &retrying{ListerWatcher: lw, ctx: toolscache.ToListerWatcherWithContext(lw), sleep: sleep}
}

// retrying keeps the context-free List and Watch of the ListerWatcher it
// wraps as they are (the reflector does not call them).
type retrying struct {
	toolscache.ListerWatcher
	ctx   toolscache.ListerWatcherWithContext
	sleep func(context.Context, time.Duration) bool
}

func (r *retrying) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return retry(ctx, r.sleep, func() (runtime.Object, error) { return r.ctx.ListWithContext(ctx, opts) })
}

func (r *retrying) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return retry(ctx, r.sleep, func() (watch.Interface, error) { return r.ctx.WatchWithContext(ctx, opts) })
}

func retry[T any](ctx context.Context, sleep func(context.Context, time.Duration) bool, call func() (T, error)) (T, error) {
	delay := FirstDelay
	for {
		v, err := call()
		if err == nil || !Transient(err) || ctx.Err() != nil {
			return v, err
		}
		wait := delay
		if s, ok := apierrors.SuggestsClientDelay(err); ok && s > 0 {
			wait = max(wait, time.Duration(s)*time.Second)
		}
		if !sleep(ctx, min(wait, MaxDelay)) {
			return v, err
		}
		delay = min(2*delay, MaxDelay)
	}
}

// sleep waits d and up to half as much again, and reports false if ctx
// ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(wait.Jitter(d, 0.5))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Transient reports whether err says that the kube-apiserver cannot be
// reached, or is up but not serving yet: refused or cut connections, 429
// (its storage is still initializing after a start) and 503. Anything else,
// a 403 or an expired resourceVersion, goes back to the reflector at once,
// which knows what to do with it.
func Transient(err error) bool {
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || utilnet.IsProbableEOF(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err)
}
