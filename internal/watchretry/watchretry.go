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
// serve: the reflector sees no failure while the apiserver is away, only
// the end of a watch it had, and its own wait stays at its first steps. A
// few dozen informers asking every couple of seconds during an outage is
// nothing beside what a cluster's nodes ask; client-go's 30 s cap is meant
// for thousands of kubelets. An apiserver that sheds load (429 with
// Retry-After) is given the delay it asks for, up to 30 s, and an outage is
// logged, since the reflector no longer logs each failure.
package watchretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The retries inside a list or a watch: the first after FirstDelay, each
// next one twice as late, never later than MaxDelay, each with up to half as
// much again of jitter so that the informers of several replicas spread. A
// 429 that asks for longer (Retry-After: an apiserver shedding load) gets
// what it asks, up to MaxServerDelay.
const (
	FirstDelay     = 200 * time.Millisecond
	MaxDelay       = 2 * time.Second
	MaxServerDelay = 30 * time.Second
)

// remindEvery is how often a retry that goes on is logged again.
const remindEvery = time.Minute

// NewInformer is controller-runtime's cache.Options.NewInformer: the shared
// informer it makes by default, over lists and watches that retry while the
// kube-apiserver is away.
func NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	return toolscache.NewSharedIndexInformer(Wrap(lw, fmt.Sprintf("%T", obj)), obj, resync, indexers)
}

// Wrap returns lw whose ListWithContext and WatchWithContext, the calls the
// reflector makes, retry transient failures until they succeed, fail
// otherwise, or their context ends. what names the listed kind in the log.
func Wrap(lw toolscache.ListerWatcher, what string) toolscache.ListerWatcher {
	return &retrying{ListerWatcher: lw, ctx: toolscache.ToListerWatcherWithContext(lw), sleep: sleep,
		log: ctrl.Log.WithName("cache").WithValues("kind", what)}
}

// retrying keeps the context-free List and Watch of the ListerWatcher it
// wraps as they are (the reflector does not call them).
type retrying struct {
	toolscache.ListerWatcher
	ctx   toolscache.ListerWatcherWithContext
	sleep func(context.Context, time.Duration) bool
	log   logr.Logger
}

func (r *retrying) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return retry(ctx, r, "list", func() (runtime.Object, error) { return r.ctx.ListWithContext(ctx, opts) })
}

func (r *retrying) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return retry(ctx, r, "watch", func() (watch.Interface, error) { return r.ctx.WatchWithContext(ctx, opts) })
}

// IsWatchListSemanticsUnSupported passes on what the wrapped ListerWatcher
// says, which the reflector asks before it streams its initial list.
func (r *retrying) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(r.ListerWatcher)
}

// retry makes call until it succeeds or fails for good. An outage is
// logged when it begins, once a minute while it lasts, and when it ends,
// since the reflector, which would have logged each failure, sees none.
func retry[T any](ctx context.Context, r *retrying, verb string, call func() (T, error)) (T, error) {
	delay := FirstDelay
	var began, said time.Time
	for {
		v, err := call()
		if err == nil || !Transient(err) || ctx.Err() != nil {
			if err == nil && !began.IsZero() {
				r.log.Info("the kube-apiserver answers again", "call", verb, "after", time.Since(began).Round(time.Millisecond).String())
			}
			return v, err
		}
		now := time.Now()
		if began.IsZero() {
			began = now
		}
		if said.IsZero() || now.Sub(said) >= remindEvery {
			said = now
			r.log.Info("the kube-apiserver does not answer; retrying within seconds", "call", verb, "for", now.Sub(began).Round(time.Second).String(), "error", err.Error())
		}
		wait := delay
		if s, ok := apierrors.SuggestsClientDelay(err); ok && apierrors.IsTooManyRequests(err) {
			wait = max(wait, min(time.Duration(s)*time.Second, MaxServerDelay))
		}
		if !r.sleep(ctx, wait) {
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
// reached, or is up but not serving yet: refused or reset connections, an
// answer cut short, 429 (its storage is still initializing after a start,
// or it sheds load) and 503. Anything else, a 403 or an expired
// resourceVersion, goes back to the reflector at once, which knows what to
// do with it. (A watch cut short is no error here: client-go gives the
// reflector an empty watch, which it opens again at once, or after one
// step of its own backoff when the watch lasted under a second.)
func Transient(err error) bool {
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || utilnet.IsProbableEOF(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err)
}
