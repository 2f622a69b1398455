package apiserver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// A signed GitHub delivery runs once. GitHub names each delivery
// (X-GitHub-Delivery, a GUID, kept on a redelivery) but signs only the
// body, so whoever captured one could send it again, or send its body
// under a new delivery id, and the signature would still hold. An
// integration with GitHub auth therefore refuses, for 24 hours, a request
// whose delivery id or body it has already run, and answers "replay".
//
// Where: in this process's memory, not the store. A restart forgets (a
// delivery captured before it could run once more within the day), and
// replicas do not share it; a shared record is another issue's work. The
// memory is bounded: at most maxDeliveries entries, the oldest going first.
//
// When: a delivery is claimed only after its signature is verified, so an
// unsigned forgery carrying a real delivery's id cannot spend that id;
// and the claim is given back when the delivery starts nothing (a
// matcher said no, the template is gone, the store failed), so that
// GitHub's redelivery of a delivery that never ran still runs.

const (
	// deliveryMemory is how long a delivery id or body is remembered.
	deliveryMemory = 24 * time.Hour
	// maxDeliveries bounds the memory: two keys of about 150 bytes per
	// delivery, so some 15 MB at most; past it the oldest are forgotten
	// first (and logged), which at 50,000 deliveries a day never happens.
	maxDeliveries = 100_000
)

// deliveryHeader names a GitHub delivery.
const deliveryHeader = "X-GitHub-Delivery"

// replayGuard remembers keys for deliveryMemory, in arrival order.
type replayGuard struct {
	mu    sync.Mutex
	now   func() time.Time
	max   int
	seen  map[string]time.Time
	order []seenKey // oldest first; entries forgotten since are skipped
}

type seenKey struct {
	key string
	at  time.Time
}

func newReplayGuard(now func() time.Time, max int) *replayGuard {
	return &replayGuard{now: now, max: max, seen: map[string]time.Time{}}
}

// claim records keys unless one of them was recorded in the last
// deliveryMemory; it reports whether it recorded them. No keys: true.
func (g *replayGuard) claim(keys []string) bool {
	if len(keys) == 0 {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.expire(now)
	for _, k := range keys {
		if _, ok := g.seen[k]; ok {
			return false
		}
	}
	for _, k := range keys {
		if len(g.seen) >= g.max {
			logAPI().Info("the record of GitHub deliveries is full; the oldest is forgotten before its 24 hours", "max", g.max)
			g.evict()
		}
		g.seen[k] = now
		g.order = append(g.order, seenKey{k, now})
	}
	if len(g.order) > 2*g.max {
		g.compact() // released keys' entries piled up
	}
	return true
}

// release forgets keys a claim recorded (the delivery started nothing).
func (g *replayGuard) release(keys []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range keys {
		delete(g.seen, k)
	}
}

// size is how many keys are remembered.
func (g *replayGuard) size() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.seen)
}

// The helpers below run with mu held.

// expire forgets what is older than deliveryMemory.
func (g *replayGuard) expire(now time.Time) {
	for len(g.order) > 0 && now.Sub(g.order[0].at) >= deliveryMemory {
		g.pop()
	}
	if len(g.order) == 0 {
		g.order = nil // let the array go
	}
}

// evict forgets the oldest remembered key.
func (g *replayGuard) evict() {
	for len(g.order) > 0 && !g.pop() {
	}
}

// pop takes order's first entry and forgets its key, unless the key was
// released (and perhaps claimed again: its newer entry comes later). It
// reports whether it forgot a key.
func (g *replayGuard) pop() bool {
	first := g.order[0]
	g.order = g.order[1:]
	if at, ok := g.seen[first.key]; ok && at.Equal(first.at) {
		delete(g.seen, first.key)
		return true
	}
	return false
}

// compact drops the entries of released keys from order.
func (g *replayGuard) compact() {
	live := make([]seenKey, 0, len(g.seen))
	for _, e := range g.order {
		if at, ok := g.seen[e.key]; ok && at.Equal(e.at) {
			live = append(live, e)
		}
	}
	g.order = live
}

// deliveryKeys are what a GitHub delivery to in is remembered by: the
// digests of its delivery id and of its body. Other auth methods: none.
func deliveryKeys(in *bastionv1.Integration, req webhookRequest) []string {
	if in.Spec.AuthMethod != bastionv1.AuthGitHub {
		return nil
	}
	body := sha256.Sum256(req.body)
	keys := []string{string(in.UID) + "/body/" + hex.EncodeToString(body[:])}
	if id := req.header.Get(deliveryHeader); id != "" {
		// A digest, so that a key is small whatever the header's size
		// (up to net/http's 1 MB): the guard's memory bound holds.
		digest := sha256.Sum256([]byte(id))
		keys = append(keys, string(in.UID)+"/id/"+hex.EncodeToString(digest[:]))
	}
	return keys
}

// replayReason says why a delivery was refused as a replay.
func replayReason(req webhookRequest) string {
	id := req.header.Get(deliveryHeader)
	if id == "" || len(id) > 64 {
		return "replay: this delivery was already received in the last 24 hours"
	}
	return fmt.Sprintf("replay: delivery %q was already received in the last 24 hours", id)
}
