package apiserver

import (
	"fmt"
	"testing"
	"time"
)

// Review of issue #19 (sign-in): "never lock its owner out" rests on the
// address as the owner's device, but an address is shared: an office or
// a carrier-grade NAT, or every client of a proxy that is not listed in
// --trusted-proxies. Whoever shares it with the owner fails 20 sign-ins -
// at accounts that need not even exist - and the per-address block, checked
// before the owner's "known address" exemption, shuts the owner out of
// their own account for the rest of the window. (OWASP's device cookie,
// which the limiter cites, is a cookie for this reason.)
func TestLoginLimiter_review_aNeighbourBehindTheSameAddressCannotLockTheOwnerOut(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLoginLimiter(AuthOptions{Now: func() time.Time { return now }}.withDefaults())
	const office = "198.51.100.1"
	l.succeeded("owner", office) // the owner signs in from the office every day
	now = now.Add(time.Hour)
	for i := range 20 {
		l.failed(fmt.Sprintf("no-such-user-%d", i), office) // a colleague, or a script on the guest Wi-Fi
	}
	if wait, what := l.blocked("owner", office); wait > 0 {
		t.Fatalf("the owner, from the address they always sign in from, must wait %s (%s): anyone behind the same address locked them out", wait, what)
	}
}
