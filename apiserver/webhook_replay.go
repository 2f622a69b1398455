package apiserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/store"
)

// A signed GitHub delivery runs once. GitHub names each delivery
// (X-GitHub-Delivery, a GUID, kept on a redelivery) but signs only the
// body, so whoever captured one could send it again, or send its body
// under a new delivery id, and the signature would still hold. An
// integration with GitHub auth therefore refuses, for 24 hours, a request
// whose delivery id or body it has already run, and answers "replay".
//
// Where: in the store (store.Shared), so that every replica refuses a
// delivery any of them ran, and a restart forgets nothing. A claim is one
// transaction that inserts the keys under a unique key: of two replicas
// receiving the same delivery at once, exactly one runs it. Expired keys
// are deleted by the next claim. The table holds the deliveries of one
// day that started a task (a claim that started nothing is given back),
// so it grows no faster than the Tasks do. If the store fails, the
// delivery fails with 500 and runs nothing (fail closed): GitHub shows
// the failure and can redeliver it.
//
// When: a delivery is claimed only after its signature is verified, so an
// unsigned forgery carrying a real delivery's id cannot spend that id;
// and the claim is given back when the delivery starts nothing (a
// matcher said no, the template is gone, the store failed), so that
// GitHub's redelivery of a delivery that never ran still runs.
//
// Other senders: a request that carries an Idempotency-Key header (the
// IETF httpapi draft; GitLab sends one that stays the same across its
// retries of one event) runs once per key and integration for 24 hours,
// whatever the integration's auth method, with the same claim. Its body is
// not remembered: without a signature over it, two equal bodies may well
// be two deliveries. Without the header nothing is remembered, and a
// sender that retries after a 503 (the task may have started) may run the
// task twice; GitHub's and these retries cannot.

// deliveryMemory is how long a delivery id or body is remembered.
const deliveryMemory = 24 * time.Hour

// deliveryHeader names a GitHub delivery; idempotencyHeader any sender's
// delivery, the same on each of its retries.
const (
	deliveryHeader    = "X-GitHub-Delivery"
	idempotencyHeader = "Idempotency-Key"
)

// replayGuard claims deliveries in the store.
type replayGuard struct {
	store store.Shared
	now   func() time.Time
}

// claim records keys unless one of them was recorded in the last
// deliveryMemory; it reports whether it recorded them, and when (what
// release needs). No keys: true.
func (g *replayGuard) claim(ctx context.Context, keys []string) (time.Time, bool, error) {
	if len(keys) == 0 {
		return time.Time{}, true, nil
	}
	now := g.now().UTC().Truncate(time.Microsecond) // as the store keeps it
	ok, err := g.store.ClaimDeliveries(ctx, keys, now, now.Add(-deliveryMemory))
	return now, ok, err
}

// release forgets the keys claimed at at (the delivery started nothing).
// A failure is logged: the delivery is then refused as a replay for a day.
func (g *replayGuard) release(ctx context.Context, keys []string, at time.Time) {
	if len(keys) == 0 {
		return
	}
	if err := g.store.ReleaseDeliveries(context.WithoutCancel(ctx), keys, at); err != nil {
		logAPI().Error(err, "giving back a GitHub delivery that started nothing; its redelivery will be refused as a replay")
	}
}

// deliveryKeys are what a delivery to in is remembered by: for GitHub
// auth, the digests of its delivery id and of its body; for any method,
// the digest of its Idempotency-Key. Keys are digests, so that a key is
// small whatever the header's size (up to net/http's 1 MB): a row stays
// small.
func deliveryKeys(in *bastionv1.Integration, req webhookRequest) []string {
	var keys []string
	digest := func(kind string, b []byte) {
		sum := sha256.Sum256(b)
		keys = append(keys, string(in.UID)+"/"+kind+"/"+hex.EncodeToString(sum[:]))
	}
	if in.Spec.AuthMethod == bastionv1.AuthGitHub {
		digest("body", req.body)
		if id := req.header.Get(deliveryHeader); id != "" {
			digest("id", []byte(id))
		}
	}
	if key := req.header.Get(idempotencyHeader); key != "" {
		digest("idempotency", []byte(key))
	}
	return keys
}

// replayReason says why a delivery was refused as a replay.
func replayReason(req webhookRequest) string {
	if id := req.header.Get(deliveryHeader); id != "" && len(id) <= 64 {
		return fmt.Sprintf("replay: delivery %q was already received in the last 24 hours", id)
	}
	if key := req.header.Get(idempotencyHeader); key != "" && len(key) <= 64 {
		return fmt.Sprintf("replay: %s %q was already received in the last 24 hours", idempotencyHeader, key)
	}
	return "replay: this delivery was already received in the last 24 hours"
}
