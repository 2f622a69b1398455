package apiserver

import (
	"net/http"
	"strings"
	"testing"
	"time"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// The record of deliveries on its own, with a clock the test moves: keys
// are refused for 24 hours and then accepted again; a released claim
// frees its keys; the record never holds more than its cap, the oldest
// going first.
func TestReplayGuard_remembersForADayWithinItsCap(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := newReplayGuard(func() time.Time { return now }, 4)

	if !g.claim([]string{"a/id", "a/body"}) {
		t.Fatal("a first delivery was refused")
	}
	if g.claim([]string{"a/id", "other/body"}) || g.claim([]string{"new/id", "a/body"}) {
		t.Fatal("a delivery sharing a key with one of the last 24 hours was accepted")
	}
	now = now.Add(deliveryMemory - time.Second)
	if g.claim([]string{"a/id"}) {
		t.Fatal("a delivery was accepted again within 24 hours")
	}
	now = now.Add(time.Second)
	if !g.claim([]string{"a/id", "a/body"}) {
		t.Fatal("a delivery was still refused after 24 hours")
	}

	if !g.claim([]string{"b/id"}) {
		t.Fatal("b refused")
	}
	g.release([]string{"b/id"})
	if !g.claim([]string{"b/id"}) {
		t.Fatal("a released delivery was refused")
	}

	// Cap 4: a/id, a/body and b are held; c pushes out the oldest.
	now = now.Add(time.Minute)
	if !g.claim([]string{"c/id", "c/body"}) {
		t.Fatal("c refused")
	}
	if n := g.size(); n != 4 {
		t.Fatalf("the record holds %d keys, over its cap of 4", n)
	}
	if !g.claim([]string{"a/id"}) || g.claim([]string{"c/id"}) {
		t.Fatal("the oldest keys were not the ones forgotten")
	}

	// Everything expires; the order list is let go.
	now = now.Add(deliveryMemory)
	if !g.claim(nil) || !g.claim([]string{"z"}) || g.size() != 1 || len(g.order) != 1 {
		t.Fatalf("after a day the record holds %d keys and %d entries, want 1 and 1", g.size(), len(g.order))
	}
}

// TestReplayGuard_aDeliveryKeyIsSmallWhateverTheHeader: the guard keeps
// "two keys of about 150 bytes per delivery, so some 15 MB at most", even
// when X-GitHub-Delivery is 500 KB (a header may be up to 1 MB): whoever
// holds the integration's secret (a leaked one, a compromised CI) cannot
// make the manager keep gigabytes by sending signed deliveries with huge
// ids. The id is kept as its SHA-256.
func TestReplayGuard_aDeliveryKeyIsSmallWhateverTheHeader(t *testing.T) {
	in := &bastionv1.Integration{Spec: bastionv1.IntegrationSpec{AuthMethod: bastionv1.AuthGitHub}}
	in.UID = "0b7c1e2a-uid"
	h := http.Header{}
	h.Set(deliveryHeader, strings.Repeat("a", 500_000))
	for _, k := range deliveryKeys(in, webhookRequest{header: h, body: []byte(`{}`)}) {
		if len(k) > 200 {
			t.Errorf("a delivery key is %d bytes (%.20q…): the guard's memory follows the sender's header, not its 15 MB bound", len(k), k)
		}
	}
}
