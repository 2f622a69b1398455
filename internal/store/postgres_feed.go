package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The listener of the PostgreSQL line feed. It holds a connection of its
// own, outside the pool: LISTEN belongs to a session, and a pooled
// connection is handed to whoever asks next. When that connection breaks
// (PostgreSQL restarts, a failover, pg_terminate_backend) notifications
// sent meanwhile are lost, so after reconnecting it asks every watcher to
// catch up from the store.
const (
	// feedApplicationName names the listener's session in
	// pg_stat_activity, for operators (and for the test that kills it).
	feedApplicationName = "bastion line feed"
	listenBackoffMin    = 100 * time.Millisecond
	listenBackoffMax    = 5 * time.Second
	// listenCheck is how long the listener waits for a notification
	// before it pings: a connection that died without a word (a network
	// partition) would otherwise keep it waiting for ever.
	listenCheck = 30 * time.Second
)

// listener runs the listening loop of one store, from its first watcher
// to Close.
type listener struct {
	mu      sync.Mutex
	cancel  context.CancelFunc // nil until started
	done    chan struct{}
	stopped bool
}

func (l *listener) start(run func(ctx context.Context)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel != nil || l.stopped {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel, l.done = cancel, make(chan struct{})
	go func() {
		defer close(l.done)
		run(ctx)
	}()
}

// stop ends the loop and waits for it, so a closed store leaves no
// connection behind.
func (l *listener) stop() {
	l.mu.Lock()
	l.stopped = true
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// newOrigin names a store instance in its notifications, so that its own
// listener skips what it has reported already. Not a secret.
func newOrigin() string {
	b := make([]byte, 8)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

func (s *postgresStore) WatchLines(ctx context.Context, fn func(LinesStored)) error {
	if err := s.check(); err != nil {
		return err
	}
	log := logr.FromContextOrDiscard(ctx)
	s.listener.start(func(ctx context.Context) { s.listen(ctx, log) })
	err := s.feed.watch(ctx, fn)
	if errors.Is(err, ErrClosed) {
		return s.check() // the same error, naming the store
	}
	return err
}

// listen keeps a listening connection until ctx ends, reconnecting with a
// growing pause. It logs when the feed is lost and when it is back, not
// every failed try.
func (s *postgresStore) listen(ctx context.Context, log logr.Logger) {
	backoff, failing := listenBackoffMin, false
	for {
		err := s.listenOnce(ctx, func() {
			if failing {
				log.Info("the line feed listens again; followed tasks are read from the store", "store", s.name)
			}
			backoff, failing = listenBackoffMin, false
		})
		s.feed.setLive(false)
		s.own.clear()
		if ctx.Err() != nil {
			return
		}
		if !failing {
			log.Error(err, "the line feed lost its PostgreSQL connection; live output of other replicas waits until it reconnects",
				"store", s.name)
			failing = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}

// listenOnce connects, listens and reports notifications until the
// connection fails or ctx ends. Only once LISTEN holds does the feed turn
// live (its watchers catch up): whatever commits later is notified.
func (s *postgresStore) listenOnce(ctx context.Context, connected func()) error {
	cfg := s.listenTo.Copy()
	cfg.RuntimeParams["application_name"] = feedApplicationName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		closing, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(closing)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+feedChannel+"; LISTEN "+deleteChannel); err != nil {
		return err
	}
	connected()
	// Deletes by other replicas went unheard until now: the lines kept
	// from before are not trusted (recentLines, postgresStore.recent).
	s.tail.reset()
	s.feed.setLive(true)
	for {
		wait, cancel := context.WithTimeout(ctx, listenCheck)
		n, err := conn.WaitForNotification(wait)
		cancel()
		switch {
		case err == nil && n.Channel == deleteChannel:
			if task, origin, ok := parseDelete(n.Payload); ok && origin != s.origin {
				s.tail.deleted(task)
			}
		case err == nil:
			if r, origin, ok := parseNotification(n.Payload); ok {
				if origin == s.origin {
					s.own.take(&r)
				}
				s.feed.publish(r)
			}
		case ctx.Err() != nil:
			return ctx.Err()
		case pgconn.Timeout(err):
			// A deadline leaves the connection usable (pgx's default
			// context handler only sets a read deadline): check it.
			if err := conn.Ping(ctx); err != nil {
				return err
			}
		default:
			return err
		}
	}
}
