package apiserver

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/bastion-dev/bastion/internal/store"
)

// testLimiter is a limiter over a store of its own (SQLite), on a clock
// the test moves through *now.
func testLimiter(t *testing.T, now *time.Time) (*loginLimiter, store.Store) {
	t.Helper()
	st, err := store.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "limits.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newLoginLimiter(AuthOptions{Now: func() time.Time { return *now }}.withDefaults(), st), st
}

// mustFail records a failed sign-in, whether or not a try would be let
// through: the tests build up counts with it.
func mustFail(t *testing.T, l *loginLimiter, account, addr string) {
	t.Helper()
	now := l.opts.Now()
	a, b := limitKeys(account, addr)
	if err := l.store.SignInFailed(t.Context(), a, b, l.window(now)); err != nil {
		t.Fatal(err)
	}
	l.prune(t.Context(), now)
}

// mustSucceed is a sign-in that try lets through and whose password is
// right.
func mustSucceed(t *testing.T, l *loginLimiter, account, addr string) {
	t.Helper()
	wait, what, triedAt, err := l.try(t.Context(), account, addr)
	if err != nil || wait > 0 {
		t.Fatalf("try(%s, %s) = %s %q %v, want to go ahead", account, addr, wait, what, err)
	}
	if err := l.succeeded(t.Context(), account, addr, triedAt); err != nil {
		t.Fatal(err)
	}
}

func mustCheck(t *testing.T, l *loginLimiter, account, addr string) (time.Duration, string) {
	t.Helper()
	wait, what, err := l.blocked(t.Context(), account, addr)
	if err != nil {
		t.Fatal(err)
	}
	return wait, what
}

// record is what the store holds for an account and an address.
func record(t *testing.T, st store.Store, account, addr string) store.SignInRecord {
	t.Helper()
	a, b := limitKeys(account, addr)
	r, err := st.SignInRecord(t.Context(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLoginLimiter_aFloodOfNamesAndAddressesIsPrunedAfterItsWindow: failed
// sign-ins to ever new accounts from ever new addresses occupy the store
// for one window, then go with the next prune; the account under attack
// meanwhile still makes its guesser wait.
func TestLoginLimiter_aFloodOfNamesAndAddressesIsPrunedAfterItsWindow(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, st := testLimiter(t, &now)
	flood := func(i int) (string, string) {
		return fmt.Sprintf("random-%d", i), fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
	}
	for i := range 200 {
		account, addr := flood(i)
		mustFail(t, l, account, addr)
	}
	for range 5 {
		mustFail(t, l, "target", "192.0.2.1")
	}
	if wait, what := mustCheck(t, l, "TARGET", "192.0.2.1"); wait <= 0 || what != "account" {
		t.Fatalf("after 5 failures amid a flood the guessing address may try again at once: %s %q", wait, what)
	}
	if r := record(t, st, "random-7", "10.0.0.7"); r.AccountFailures != 1 || r.AddressFailures != 1 {
		t.Fatalf("a flooded account's failure is not on record: %+v", r)
	}
	now = now.Add(l.opts.FailureWindow + pruneEvery)
	mustFail(t, l, "someone", "192.0.2.2") // prunes
	for i := range 200 {
		account, addr := flood(i)
		if r := record(t, st, account, addr); r != (store.SignInRecord{}) {
			t.Fatalf("flooded account %d is still on record a window later: %+v", i, r)
		}
	}
}

// TestLoginLimiter_oneIPv6SlashSixtyFourIsOneAddress: anyone with an
// ordinary IPv6 connection holds a /64 (2^64 addresses), so the per-address
// limit counts an IPv6 client by its /64: picking a new source address per
// guess does not escape the 20-failures limit.
func TestLoginLimiter_oneIPv6SlashSixtyFourIsOneAddress(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, _ := testLimiter(t, &now)
	trust := proxyTrust(nil)
	for i := range 25 {
		r := httptest.NewRequest("POST", "/api/auth/login", nil)
		r.RemoteAddr = fmt.Sprintf("[2001:db8:1:2::%x]:40000", i+1)
		mustFail(t, l, fmt.Sprintf("account-%d", i), trust.clientAddress(r))
	}
	r := httptest.NewRequest("POST", "/api/auth/login", nil)
	r.RemoteAddr = "[2001:db8:1:2::ffff]:40000"
	if wait, what := mustCheck(t, l, "account-next", trust.clientAddress(r)); wait <= 0 || what != "address" {
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
	l, _ := testLimiter(t, &now)
	const office = "198.51.100.1"
	mustSucceed(t, l, "owner", office) // the owner signs in from the office every day
	now = now.Add(time.Hour)
	for i := range 20 {
		mustFail(t, l, fmt.Sprintf("no-such-user-%d", i), office) // a colleague, or a script on the guest Wi-Fi
	}
	if wait, what := mustCheck(t, l, "owner", office); wait > 0 {
		t.Fatalf("the owner, from the address they always sign in from, must wait %s (%s): anyone behind the same address locked them out", wait, what)
	}
	if wait, what := mustCheck(t, l, "no-such-user-20", office); wait <= 0 || what != "address" {
		t.Fatalf("another account from the blocked address may try at once (%s %q): the address block is gone", wait, what)
	}
	// The neighbour turns to the owner's account: three free guesses, then
	// the delay, from the owner's own address too.
	for range 3 {
		if wait, what := mustCheck(t, l, "owner", office); wait > 0 {
			t.Fatalf("a free guess at the owner's account waits %s (%s)", wait, what)
		}
		mustFail(t, l, "owner", office)
	}
	if wait, what := mustCheck(t, l, "owner", office); wait <= 0 || what != "account" {
		t.Fatalf("after 3 failures at the owner's account from its known address, the next try goes at once (%s %q): the known address is a free pass for guessers", wait, what)
	}
}

// TestLoginLimiter_knownAddressesAreForgottenAfterThirtyDays: every
// successful sign-in is remembered as a known account-address pair for
// knownFor, then pruned (a sign-in also stores a session row, so a host
// that knows one password grows the store no faster than it did).
func TestLoginLimiter_knownAddressesAreForgottenAfterThirtyDays(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, st := testLimiter(t, &now)
	mustSucceed(t, l, "owner", "192.0.2.1")
	if r := record(t, st, "owner", "192.0.2.1"); !r.KnownAt.Equal(now) {
		t.Fatalf("a sign-in is not remembered: %+v", r)
	}
	now = now.Add(knownFor + time.Second)
	mustSucceed(t, l, "owner", "192.0.2.2") // prunes
	if r := record(t, st, "owner", "192.0.2.1"); !r.KnownAt.IsZero() {
		t.Fatalf("an address known 30 days ago is still remembered: %+v", r)
	}
}

// TestLoginLimiter_everySpellingOfAnUnknownLoginSharesOneDelay: a login
// that names nobody is keyed case-folded as FindByLogin compares emails,
// so its spellings ("ſ" for "s", the Kelvin sign for "k", upper case) share one delay, exactly as a
// real account's do: the delay tells nothing about whether it exists.
func TestLoginLimiter_everySpellingOfAnUnknownLoginSharesOneDelay(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, _ := testLimiter(t, &now)
	const addr = "192.0.2.9"
	for range 3 {
		mustFail(t, l, signInAccount(nil, "kiss@example.com"), addr)
	}
	for _, login := range []string{"kiss@example.com", "KISS@EXAMPLE.COM", "\u212Ai\u017f\u017f@example.com"} {
		if wait, what := mustCheck(t, l, signInAccount(nil, login), addr); wait <= 0 || what != "account" {
			t.Errorf("after 3 failures, %q may try at once (%s %q): another spelling is a fresh budget", login, wait, what)
		}
	}
}

// The hash an unknown login is compared against is made on first use, not
// at package init (every `bastion runner` process runs the inits; issue
// #22), and it must still cost what a user's password costs to check, or
// an unknown login would answer faster than a wrong password.
func TestLogin_theUnknownLoginsHashCostsWhatAPasswordCosts(t *testing.T) {
	hash := dummyHash()
	cost, err := bcrypt.Cost(hash)
	if err != nil {
		t.Fatalf("the dummy hash is no bcrypt hash: %v", err)
	}
	if cost != bcrypt.DefaultCost {
		t.Fatalf("the dummy hash has cost %d, want bcrypt.DefaultCost (%d), the cost of users' passwords", cost, bcrypt.DefaultCost)
	}
	if again := dummyHash(); string(again) != string(hash) {
		t.Fatal("the dummy hash is made again on each use")
	}
}

// TestLoginLimiter_turnsAreOneAtATimePerAddressAndForgottenAfterTheLast:
// a second sign-in from an address waits for the first's turn (one of
// another address does not); a waiter whose client goes away leaves
// without the turn; and once the last leaves, the address is forgotten.
func TestLoginLimiter_turnsAreOneAtATimePerAddressAndForgottenAfterTheLast(t *testing.T) {
	now := time.Now()
	l, _ := testLimiter(t, &now)
	done, err := l.inTurn(t.Context(), "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	other, err := l.inTurn(t.Context(), "192.0.2.2")
	if err != nil {
		t.Fatalf("another address waited for this one's turn: %v", err)
	}
	other()

	gaveUp, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := l.inTurn(gaveUp, "192.0.2.1"); err == nil {
		t.Fatal("a second sign-in from the address got a turn while the first held it")
	}
	next := make(chan func())
	go func() {
		release, err := l.inTurn(t.Context(), "192.0.2.1")
		if err != nil {
			t.Error(err)
		}
		next <- release
	}()
	select {
	case <-next:
		t.Fatal("the next sign-in got the turn before the first gave it back")
	case <-time.After(50 * time.Millisecond):
	}
	done()
	(<-next)()

	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.turns) != 0 {
		t.Fatalf("%d addresses still held after every sign-in left", len(l.turns))
	}
}
