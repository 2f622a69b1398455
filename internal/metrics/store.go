package metrics

import (
	"context"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

// InstrumentStore wraps s so that every call is observed in StoreLatency,
// labelled with its operation's name. StreamLines and StderrSeqs are timed
// as a whole: that includes the caller's writes, which is what a slow
// download costs the store's connection. WatchLines is not timed: it
// lasts as long as the process.
func InstrumentStore(s store.Store) store.Store {
	return store.Around(s, func(ctx context.Context, op string) (context.Context, func()) {
		start := time.Now()
		return ctx, func() { StoreLatency.WithLabelValues(op).Observe(time.Since(start).Seconds()) }
	})
}
