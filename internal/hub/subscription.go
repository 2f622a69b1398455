package hub

import (
	"sync"
	"sync/atomic"
)

// Subscription is one subscriber's bounded queue. Its consumer waits on
// Ready, then takes everything queued at once with Take.
type Subscription struct {
	filter func(projectID int64) bool
	limit  int

	// closed mirrors err != nil, so Publish skips a closed subscription
	// without taking its lock.
	closed atomic.Bool
	ready  chan struct{} // capacity 1: "something happened since the last Take"
	done   chan struct{}

	mu    sync.Mutex // guards queue and err; held for an append or a swap
	queue []Message
	err   error
}

// Ready receives when messages were queued or the subscription closed
// since the last Take. It can fire with nothing to take.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Done is closed when the subscription closes; Err says why.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err is nil while the subscription is open, then the reason it closed: a
// *SlowError, ErrUnsubscribed or ErrClosed.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Take returns every queued message, in order, and the subscription's
// error once it is closed (queued messages are then dropped: after an
// overflow they have a gap behind them). spare is the slice Take returned
// last time, handed back so the two swap without allocating; the caller
// must be done with its messages.
func (s *Subscription) Take(spare []Message) ([]Message, error) {
	clear(spare) // let the frames of delivered messages be collected
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	taken := s.queue
	s.queue = spare[:0]
	return taken, nil
}

// push queues m, or closes the subscription if its queue is full. It never
// waits for the consumer.
func (s *Subscription) push(m Message) {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	if len(s.queue) >= s.limit {
		s.closeLocked(&SlowError{Behind: len(s.queue)})
		s.mu.Unlock()
		return
	}
	s.queue = append(s.queue, m)
	s.mu.Unlock()
	s.signal()
}

func (s *Subscription) close(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.closeLocked(err)
	}
}

func (s *Subscription) closeLocked(err error) {
	s.err = err
	s.queue = nil
	s.closed.Store(true)
	close(s.done)
	s.signal()
}

// signal never blocks: a pending signal already covers this message.
func (s *Subscription) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}
