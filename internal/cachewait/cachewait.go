// Package cachewait waits for a controller-runtime cache to catch up with
// a write: reads are served from the cache, which has a write a
// millisecond or two after the apiserver answered it (its watch event).
// Both doors wait: the API, so that the list a client reloads after a
// save shows the save, and the reconcilers, so that a reconcile queued
// meanwhile does not work from the copy before their own write.
package cachewait

import (
	"context"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Written returns once cache has obj at its written resourceVersion or
// later, or bound has passed: then the cache lags, and the write stands.
// An object the cache does not have yet is waited for (a create).
func Written(ctx context.Context, cache client.Reader, obj client.Object, bound time.Duration) error {
	return written(ctx, cache, obj, bound, false)
}

// Updated is Written for an update of an object the cache had: one it no
// longer has was deleted meanwhile, and is not waited for.
func Updated(ctx context.Context, cache client.Reader, obj client.Object, bound time.Duration) error {
	return written(ctx, cache, obj, bound, true)
}

func written(ctx context.Context, cache client.Reader, obj client.Object, bound time.Duration, goneIsDone bool) error {
	want, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return nil // not a number: nothing to compare; do not wait
	}
	probe := obj.DeepCopyObject().(client.Object)
	return Poll(ctx, bound, func(ctx context.Context) (bool, error) {
		if err := cache.Get(ctx, client.ObjectKeyFromObject(obj), probe); err != nil {
			if apierrors.IsNotFound(err) {
				return goneIsDone, nil
			}
			return false, err
		}
		have, err := strconv.ParseUint(probe.GetResourceVersion(), 10, 64)
		return err != nil || have >= want, nil
	})
}

// Gone returns once cache no longer has obj (or has it marked for
// deletion, which every read treats as gone), or bound has passed.
func Gone(ctx context.Context, cache client.Reader, obj client.Object, bound time.Duration) error {
	probe := obj.DeepCopyObject().(client.Object)
	return Poll(ctx, bound, func(ctx context.Context) (bool, error) {
		err := cache.Get(ctx, client.ObjectKeyFromObject(obj), probe)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && !probe.GetDeletionTimestamp().IsZero(), client.IgnoreNotFound(err)
	})
}

// The looks of Poll: the first at once, then after firstLook, each wait
// twice the last up to everyLook. With one look every 10 ms, a create
// waited 10 ms whenever the first look came too early, and that was a
// fifth of a template create (issue #22, P3). Each look is a read of the
// cache in memory, so looking often costs little.
const (
	firstLook = 250 * time.Microsecond
	everyLook = 10 * time.Millisecond
)

// Poll returns once done holds, done fails, ctx ends (its error), or bound
// has passed (nil).
func Poll(ctx context.Context, bound time.Duration, done wait.ConditionWithContextFunc) error {
	waitCtx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for delay := firstLook; ; delay = min(2*delay, everyLook) {
		if ok, err := done(waitCtx); ok || err != nil {
			return err
		}
		timer := time.NewTimer(delay)
		select {
		case <-waitCtx.Done():
			timer.Stop()
			return ctx.Err() // nil when only the bound passed
		case <-timer.C:
		}
	}
}
