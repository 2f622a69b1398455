package apiserver

import (
	"net/http"
	"strings"
	"testing"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// Review of issue #19 (webhooks): the replay guard promises "two keys of
// about 150 bytes per delivery, so some 15 MB at most", but the delivery
// id key holds X-GitHub-Delivery as sent, and a header may be up to 1 MB
// (net/http's default MaxHeaderBytes). Whoever holds the integration's
// secret (a leaked one, a compromised CI) sends 100,000 signed deliveries
// with 500 KB ids and the manager keeps some 50 GB. GitHub's ids are GUIDs:
// a key could hold a digest of the id, or refuse an id over 64 bytes.
func TestReplayGuard_review_aDeliveryKeyIsSmallWhateverTheHeader(t *testing.T) {
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
