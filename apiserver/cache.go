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

func (s *Server) poll(ctx context.Context, done wait.ConditionWithContextFunc) error {
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, cacheWait, true, done)
	if wait.Interrupted(err) && ctx.Err() == nil {
		return nil // the cache lags; the write stands
	}
	return err
}
