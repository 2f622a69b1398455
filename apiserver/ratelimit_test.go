package apiserver

import (
	"fmt"
	"testing"
	"time"
)

// TestLoginLimiter_memoryStaysBoundedUnderAFloodOfNamesAndAddresses sends
// 50,000 failed sign-ins, each to a new account from a new address, all
// within one window: the limiter keeps at most maxTracked of each, and
// still slows down the address guessing at one account.
func TestLoginLimiter_memoryStaysBoundedUnderAFloodOfNamesAndAddresses(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLoginLimiter(AuthOptions{Now: func() time.Time { return now }}.withDefaults())
	for i := range 50000 {
		l.failed(fmt.Sprintf("random-%d", i), fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
		if a, b := l.tracked(); a > maxTracked || b > maxTracked {
			t.Fatalf("after %d failures the limiter holds %d accounts and %d addresses, over %d", i+1, a, b, maxTracked)
		}
	}
	for range 5 {
		l.failed("target", "192.0.2.1")
	}
	if wait, what := l.blocked("TARGET", "192.0.2.1"); wait <= 0 || what != "account" {
		t.Fatalf("after 5 failures on a full limiter the guessing address may try again at once: %s %q", wait, what)
	}
}
