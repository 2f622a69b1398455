package apiserver

import (
	"context"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// cacheWait bounds how long a write waits for the cache to see it.
const cacheWait = 5 * time.Second

func clientKey(obj client.Object) client.ObjectKey { return client.ObjectKeyFromObject(obj) }

// waitCached returns once the cache (which every read is served from) has
// obj at its written resourceVersion or later: the list a client reloads
// after a save then shows the save. If the cache is slower than cacheWait
// the write still stands; the next read catches up.
func (s *Server) waitCached(ctx context.Context, obj client.Object) error {
	want, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return nil // not a number: nothing to compare; do not wait
	}
	probe := obj.DeepCopyObject().(client.Object)
	return s.poll(ctx, func(ctx context.Context) (bool, error) {
		if err := s.opts.Client.Get(ctx, clientKey(obj), probe); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		have, err := strconv.ParseUint(probe.GetResourceVersion(), 10, 64)
		return err != nil || have >= want, nil
	})
}

// waitGone returns once the cache no longer has obj (or has it marked for
// deletion, which every read treats as gone).
func (s *Server) waitGone(ctx context.Context, obj client.Object) error {
	probe := obj.DeepCopyObject().(client.Object)
	return s.poll(ctx, func(ctx context.Context) (bool, error) {
		err := s.opts.Client.Get(ctx, clientKey(obj), probe)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && !probe.GetDeletionTimestamp().IsZero(), client.IgnoreNotFound(err)
	})
}

// The looks of poll: the first at once, then after firstLook, each wait
// twice the last up to everyLook. The cache usually has a write a
// millisecond or two after the apiserver answered it (the watch event),
// so the first looks come close together: with one look every 10 ms, a
// create waited 10 ms whenever the first look came too early, and that
// was a fifth of a template create (issue #22, P3). Each look is a read
// of the cache in memory, so looking often costs little.
const (
	firstLook = 250 * time.Microsecond
	everyLook = 10 * time.Millisecond
)

// poll returns once done holds, done fails, ctx ends, or cacheWait has
// passed: then the cache lags, and the write stands.
func (s *Server) poll(ctx context.Context, done wait.ConditionWithContextFunc) error {
	waitCtx, cancel := context.WithTimeout(ctx, cacheWait)
	defer cancel()
	for delay := firstLook; ; delay = min(2*delay, everyLook) {
		if ok, err := done(waitCtx); ok || err != nil {
			return err
		}
		timer := time.NewTimer(delay)
		select {
		case <-waitCtx.Done():
			timer.Stop()
			return ctx.Err() // nil when only cacheWait passed
		case <-timer.C:
		}
	}
}
