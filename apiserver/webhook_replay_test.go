package apiserver

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/store"
)

// The record of deliveries on its own, with a clock the test moves, for
// two replicas over one store: keys are refused for 24 hours by either
// and then accepted again; a released claim frees its keys.
func TestReplayGuard_remembersForADayOnEveryReplica(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st, err := store.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "deliveries.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clock := func() time.Time { return now }
	a, b := &replayGuard{store: st, now: clock}, &replayGuard{store: st, now: clock}
	claim := func(g *replayGuard, keys ...string) bool {
		t.Helper()
		_, ok, err := g.claim(t.Context(), keys)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	if !claim(a, "a/id", "a/body") {
		t.Fatal("a first delivery was refused")
	}
	if claim(b, "a/id", "other/body") || claim(a, "new/id", "a/body") {
		t.Fatal("a delivery sharing a key with one of the last 24 hours was accepted")
	}
	now = now.Add(deliveryMemory - time.Second)
	if claim(b, "a/id") {
		t.Fatal("a delivery was accepted again within 24 hours")
	}
	now = now.Add(time.Second)
	if !claim(b, "a/id", "a/body") {
		t.Fatal("a delivery was still refused after 24 hours")
	}

	at, ok, err := a.claim(t.Context(), []string{"b/id"})
	if !ok || err != nil {
		t.Fatalf("b refused: %v", err)
	}
	a.release(t.Context(), []string{"b/id"}, at)
	if !claim(b, "b/id") {
		t.Fatal("a released delivery was refused")
	}
	if !claim(a) {
		t.Fatal("a delivery with no keys (not GitHub) was refused")
	}
}

// TestReplayGuard_aDeliveryKeyIsSmallWhateverTheHeader: the guard keeps
// two keys of about 150 bytes per delivery, even
// when X-GitHub-Delivery is 500 KB (a header may be up to 1 MB): whoever
// holds the integration's secret (a leaked one, a compromised CI) cannot
// make the store keep gigabytes by sending signed deliveries with huge
// ids. The id is kept as its SHA-256.
func TestReplayGuard_aDeliveryKeyIsSmallWhateverTheHeader(t *testing.T) {
	in := &bastionv1.Integration{Spec: bastionv1.IntegrationSpec{AuthMethod: bastionv1.AuthGitHub}}
	in.UID = "0b7c1e2a-uid"
	h := http.Header{}
	h.Set(deliveryHeader, strings.Repeat("a", 500_000))
	h.Set(idempotencyHeader, strings.Repeat("b", 500_000))
	keys := deliveryKeys(in, webhookRequest{header: h, body: []byte(`{}`)})
	if len(keys) != 3 {
		t.Fatalf("a GitHub delivery with an Idempotency-Key has %d keys, want 3 (body, id, key): %q", len(keys), keys)
	}
	for _, k := range keys {
		if len(k) > 200 {
			t.Errorf("a delivery key is %d bytes (%.20q…): a row's size follows the sender's header", len(k), k)
		}
	}
}

// Other auth methods remember a delivery by its Idempotency-Key only: no
// key, nothing remembered (two equal unsigned bodies may be two
// deliveries); the key is per integration.
func TestReplayGuard_otherSendersAreRememberedByTheirIdempotencyKeyOnly(t *testing.T) {
	token := &bastionv1.Integration{Spec: bastionv1.IntegrationSpec{AuthMethod: bastionv1.AuthToken}}
	token.UID = "uid-token"
	other := token.DeepCopy()
	other.UID = "uid-other"
	h := http.Header{}
	if keys := deliveryKeys(token, webhookRequest{header: h, body: []byte(`{}`)}); len(keys) != 0 {
		t.Fatalf("without an Idempotency-Key: keys %q, want none", keys)
	}
	h.Set(idempotencyHeader, "908a6d9e-45fd-46c8-97e6-c4f350f219dd")
	keys := deliveryKeys(token, webhookRequest{header: h, body: []byte(`{}`)})
	if len(keys) != 1 || !strings.HasPrefix(keys[0], "uid-token/idempotency/") {
		t.Fatalf("with an Idempotency-Key: keys %q, want one, of this integration", keys)
	}
	if again := deliveryKeys(token, webhookRequest{header: h, body: []byte(`{"other":"body"}`)}); len(again) != 1 || again[0] != keys[0] {
		t.Fatalf("the same key with another body: %q, want %q", again, keys)
	}
	if theirs := deliveryKeys(other, webhookRequest{header: h, body: []byte(`{}`)}); theirs[0] == keys[0] {
		t.Fatalf("two integrations share a key: %q", theirs)
	}
	if got := replayReason(webhookRequest{header: h}); got != `replay: Idempotency-Key "908a6d9e-45fd-46c8-97e6-c4f350f219dd" was already received in the last 24 hours` {
		t.Fatalf("replay reason %q", got)
	}
}
