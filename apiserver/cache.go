package apiserver

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bastion-dev/bastion/internal/cachewait"
)

// cacheWait bounds how long a write waits for the cache to see it.
const cacheWait = 5 * time.Second

func clientKey(obj client.Object) client.ObjectKey { return client.ObjectKeyFromObject(obj) }

// waitCached returns once the cache (which every read is served from) has
// obj at its written resourceVersion or later: the list a client reloads
// after a save then shows the save. If the cache is slower than cacheWait
// the write still stands; the next read catches up.
func (s *Server) waitCached(ctx context.Context, obj client.Object) error {
	return cachewait.Written(ctx, s.opts.Client, obj, cacheWait)
}

// waitGone returns once the cache no longer has obj (or has it marked for
// deletion, which every read treats as gone).
func (s *Server) waitGone(ctx context.Context, obj client.Object) error {
	return cachewait.Gone(ctx, s.opts.Client, obj, cacheWait)
}

// poll returns once done holds, done fails, ctx ends, or cacheWait has
// passed: then the cache lags, and the write stands.
func (s *Server) poll(ctx context.Context, done wait.ConditionWithContextFunc) error {
	return cachewait.Poll(ctx, cacheWait, done)
}
