// Package hub fans live task events ("update" and "log" messages) out to
// the websocket clients of /api/ws. It owns the delivery policy: a
// publisher never waits for a subscriber, each subscriber has a bounded
// queue, and a subscriber that falls behind is closed with a reason (its
// client re-reads /output on reconnect) instead of slowing anyone down.
package hub

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

var (
	// ErrUnsubscribed closes a subscription given back with Unsubscribe.
	ErrUnsubscribed = errors.New("unsubscribed")
	// ErrClosed closes every subscription when the hub shuts down.
	ErrClosed = errors.New("the server is shutting down")
)

// SlowError closes a subscription whose queue overflowed. Messages were
// lost, so the client must read the task output again.
type SlowError struct {
	Behind int // messages queued and not taken when the next one arrived
}

func (e *SlowError) Error() string {
	return fmt.Sprintf("too slow: %d messages behind; re-read /output", e.Behind)
}

// All is the filter of a subscriber who may see every project (an admin).
func All(int64) bool { return true }

// Hub is the fan-out. The zero value is not usable; use New.
type Hub struct {
	// mu serialises Subscribe, Unsubscribe and Close. Publish never takes
	// it: it reads an immutable snapshot of the subscribers, replaced
	// (copy on write) when one joins or leaves, which is rare next to
	// publishing.
	mu     sync.Mutex
	subs   atomic.Pointer[[]*Subscription]
	closed bool
}

// New returns an empty hub.
func New() *Hub {
	h := &Hub{}
	h.subs.Store(&[]*Subscription{})
	return h
}

// Publish hands m to every open subscription whose filter allows
// m.ProjectID. It never blocks on a subscriber: a full queue closes that
// subscription. Messages published one after another (by one goroutine, or
// otherwise ordered) reach each subscriber in that order.
func (h *Hub) Publish(m Message) {
	for _, s := range *h.subs.Load() {
		if s.closed.Load() || !s.filter(m.ProjectID) {
			continue
		}
		s.push(m)
	}
}

// Subscribe adds a subscriber that receives the messages of the projects
// filter allows, with room for buffer messages not yet taken. The filter
// runs on the publisher's goroutine for every message, so it must be cheap
// and must not block. A nil filter sees no project: visibility is denied by
// default; pass All for a subscriber who may see everything.
func (h *Hub) Subscribe(filter func(projectID int64) bool, buffer int) *Subscription {
	if filter == nil {
		filter = func(int64) bool { return false }
	}
	s := &Subscription{
		filter: filter,
		limit:  max(buffer, 1),
		ready:  make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.close(ErrClosed)
		return s
	}
	h.replace(func(sub *Subscription) bool { return true }, s)
	return s
}

// Unsubscribe closes s and removes it from the hub. Call it once the
// subscriber is done, whatever closed it.
func (h *Hub) Unsubscribe(s *Subscription) {
	s.close(ErrUnsubscribed)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.replace(func(sub *Subscription) bool { return sub != s })
}

// Close closes every subscription with ErrClosed; later subscriptions
// start closed. The websocket handler turns this into a "going away" close.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, s := range *h.subs.Load() {
		s.close(ErrClosed)
	}
	h.subs.Store(&[]*Subscription{})
}

// Len is the number of subscriptions still open.
func (h *Hub) Len() int {
	n := 0
	for _, s := range *h.subs.Load() {
		if !s.closed.Load() {
			n++
		}
	}
	return n
}

// replace stores a new snapshot: the subscriptions that are open and kept,
// plus added. Subscriptions closed by an overflow are pruned here rather
// than by Publish, so a publisher never takes h.mu. Callers hold h.mu.
func (h *Hub) replace(keep func(*Subscription) bool, added ...*Subscription) {
	old := *h.subs.Load()
	next := make([]*Subscription, 0, len(old)+len(added))
	for _, s := range old {
		if keep(s) && !s.closed.Load() {
			next = append(next, s)
		}
	}
	next = append(next, added...)
	h.subs.Store(&next)
}
