package apiserver

import (
	"fmt"
	"net/http/httptest"
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
		if a, b, _ := l.tracked(); a > maxTracked || b > maxTracked {
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

// TestLoginLimiter_oneIPv6SlashSixtyFourIsOneAddress: anyone with an
// ordinary IPv6 connection holds a /64 (2^64 addresses), so the per-address
// limit counts an IPv6 client by its /64: picking a new source address per
// guess does not escape the 20-failures limit.
func TestLoginLimiter_oneIPv6SlashSixtyFourIsOneAddress(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLoginLimiter(AuthOptions{Now: func() time.Time { return now }}.withDefaults())
	trust := proxyTrust(nil)
	for i := range 25 {
		r := httptest.NewRequest("POST", "/api/auth/login", nil)
		r.RemoteAddr = fmt.Sprintf("[2001:db8:1:2::%x]:40000", i+1)
		l.failed(fmt.Sprintf("account-%d", i), trust.clientAddress(r))
	}
	r := httptest.NewRequest("POST", "/api/auth/login", nil)
	r.RemoteAddr = "[2001:db8:1:2::ffff]:40000"
	if wait, what := l.blocked("account-next", trust.clientAddress(r)); wait <= 0 || what != "address" {
		t.Fatalf("after 25 failures from one IPv6 /64, its next address may guess at once (%s %q): the per-address limit never holds an IPv6 host", wait, what)
	}
}

// TestLoginLimiter_aNeighbourBehindTheSameAddressCannotLockTheOwnerOut: an
// address is shared (an office, a carrier-grade NAT, every client of an
// unlisted proxy). Whoever shares it with the owner and fails 20 sign-ins
// at other accounts blocks the address, but not for the account that
// signed in from it before: the owner still gets in. Made-up accounts stay
// blocked from there, and the neighbour guessing at the owner's account
// from the shared address meets the account delay like any guesser.
func TestLoginLimiter_aNeighbourBehindTheSameAddressCannotLockTheOwnerOut(t *testing.T) {
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
	if wait, what := l.blocked("no-such-user-20", office); wait <= 0 || what != "address" {
		t.Fatalf("another account from the blocked address may try at once (%s %q): the address block is gone", wait, what)
	}
	// The neighbour turns to the owner's account: three free guesses, then
	// the delay, from the owner's own address too.
	for range 3 {
		if wait, what := l.blocked("owner", office); wait > 0 {
			t.Fatalf("a free guess at the owner's account waits %s (%s)", wait, what)
		}
		l.failed("owner", office)
	}
	if wait, what := l.blocked("owner", office); wait <= 0 || what != "account" {
		t.Fatalf("after 3 failures at the owner's account from its known address, the next try goes at once (%s %q): the known address is a free pass for guessers", wait, what)
	}
}

// TestLoginLimiter_knownAddressesStayBounded: every successful sign-in is
// remembered as a known account-address pair; a host that knows one
// password and signs in from ever new addresses (or accounts) keeps at
// most maxTracked of them.
func TestLoginLimiter_knownAddressesStayBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLoginLimiter(AuthOptions{Now: func() time.Time { return now }}.withDefaults())
	for i := range 3 * maxTracked {
		l.succeeded("owner", fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
		if _, _, known := l.tracked(); known > maxTracked {
			t.Fatalf("after %d sign-ins the limiter remembers %d known addresses, over %d", i+1, known, maxTracked)
		}
	}
}

// TestLoginLimiter_everySpellingOfAnUnknownLoginSharesOneDelay: a login
// that names nobody is keyed case-folded as FindByLogin compares emails,
// so its spellings ("ſ" for "s", the Kelvin sign for "k", upper case) share one delay, exactly as a
// real account's do: the delay tells nothing about whether it exists.
func TestLoginLimiter_everySpellingOfAnUnknownLoginSharesOneDelay(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLoginLimiter(AuthOptions{Now: func() time.Time { return now }}.withDefaults())
	const addr = "192.0.2.9"
	for range 3 {
		l.failed(signInAccount(nil, "kiss@example.com"), addr)
	}
	for _, login := range []string{"kiss@example.com", "KISS@EXAMPLE.COM", "\u212Ai\u017f\u017f@example.com"} {
		if wait, what := l.blocked(signInAccount(nil, login), addr); wait <= 0 || what != "account" {
			t.Errorf("after 3 failures, %q may try at once (%s %q): another spelling is a fresh budget", login, wait, what)
		}
	}
}
