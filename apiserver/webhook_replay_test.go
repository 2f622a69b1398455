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
	for _, k := range deliveryKeys(in, webhookRequest{header: h, body: []byte(`{}`)}) {
		if len(k) > 200 {
			t.Errorf("a delivery key is %d bytes (%.20q…): a row's size follows the sender's header", len(k), k)
		}
	}
}
