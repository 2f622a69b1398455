package storetest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

// The shared state: sign-in limits and GitHub deliveries (store.Shared).

const window = 15 * time.Minute

func failAt(t testing.TB, s store.Store, account, address string, at time.Time, maxGuessers int) {
	t.Helper()
	if err := s.SignInFailed(t.Context(), account, address, store.SignInWindow{Now: at, Window: window, MaxGuessers: maxGuessers}); err != nil {
		t.Fatalf("SignInFailed(%s, %s): %v", account, address, err)
	}
}

func signInRecord(t testing.TB, s store.Store, account, address string) store.SignInRecord {
	t.Helper()
	r, err := s.SignInRecord(t.Context(), account, address)
	if err != nil {
		t.Fatalf("SignInRecord(%s, %s): %v", account, address, err)
	}
	return r
}

func checkRecord(t testing.TB, got, want store.SignInRecord) {
	t.Helper()
	if got.AccountFailures != want.AccountFailures || !got.AccountLast.Equal(want.AccountLast) ||
		got.Guesser != want.Guesser || got.Guessers != want.Guessers ||
		got.AddressFailures != want.AddressFailures || !got.AddressSince.Equal(want.AddressSince) ||
		!got.KnownAt.Equal(want.KnownAt) {
		t.Fatalf("sign-in record:\n got %+v\nwant %+v", got, want)
	}
}

// us is t as the store keeps it.
func us(t time.Time) time.Time { return t.Truncate(time.Microsecond) }

// testCountsSignInFailuresInARunAndAWindow: an account's failures count in
// a row while each comes within the window of the last; an address's
// within the window of its first; either starts again once it passed.
func testCountsSignInFailuresInARunAndAWindow(t *testing.T, s store.Store) {
	checkRecord(t, signInRecord(t, s, "acct", "192.0.2.1"), store.SignInRecord{})
	for i := range 3 {
		failAt(t, s, "acct", "192.0.2.1", base.Add(time.Duration(i)*10*time.Minute), 10)
	}
	failAt(t, s, "other", "192.0.2.2", base, 10)
	last := us(base.Add(20 * time.Minute))
	// The account's run goes on (each failure within 15 min of the last);
	// the address's window began at base, so the third failure at +20 min
	// opened a new one.
	checkRecord(t, signInRecord(t, s, "acct", "192.0.2.1"), store.SignInRecord{
		AccountFailures: 3, AccountLast: last, Guesser: true, Guessers: 1,
		AddressFailures: 1, AddressSince: last,
	})
	checkRecord(t, signInRecord(t, s, "acct", "192.0.2.2"), store.SignInRecord{
		AccountFailures: 3, AccountLast: last, Guessers: 1, AddressFailures: 1, AddressSince: us(base),
	})
	// 15 minutes after the last failure the run is over: a new one starts
	// and the old guessers are forgiven.
	later := base.Add(35 * time.Minute)
	failAt(t, s, "acct", "192.0.2.3", later, 10)
	checkRecord(t, signInRecord(t, s, "acct", "192.0.2.1"), store.SignInRecord{
		AccountFailures: 1, AccountLast: us(later), Guessers: 1, AddressFailures: 1, AddressSince: last,
	})
}

// testEndsARunOnSignInAndRemembersTheAddress: a success forgets the
// account's run and guessers, not the address's failures but the one its
// try counted.
func testEndsARunOnSignInAndRemembersTheAddress(t *testing.T, s store.Store) {
	for range 4 {
		failAt(t, s, "acct", "192.0.2.1", base, 10)
	}
	at := base.Add(time.Minute)
	if err := s.SignInSucceeded(t.Context(), "acct", "192.0.2.1", base, at); err != nil {
		t.Fatal(err)
	}
	checkRecord(t, signInRecord(t, s, "acct", "192.0.2.1"), store.SignInRecord{
		AddressFailures: 3, AddressSince: us(base), KnownAt: us(at),
	})
	// A try before the address's window began was not counted in it.
	again := base.Add(2 * time.Minute)
	if err := s.SignInSucceeded(t.Context(), "acct", "192.0.2.1", base.Add(-time.Second), again); err != nil {
		t.Fatal(err)
	}
	if got := signInRecord(t, s, "acct", "192.0.2.1").KnownAt; !got.Equal(us(again)) {
		t.Fatalf("known at %s after a second sign-in at %s", got, us(again))
	}
}

// testBoundsTheGuessersOfAnAccount: past MaxGuessers, new addresses are
// not recorded (the caller counts them as guessers anyway).
func testBoundsTheGuessersOfAnAccount(t *testing.T, s store.Store) {
	for i := range 5 {
		failAt(t, s, "acct", "192.0.2."+string(rune('1'+i)), base, 3)
	}
	r := signInRecord(t, s, "acct", "192.0.2.5")
	if r.Guessers != 3 || r.Guesser || r.AccountFailures != 5 {
		t.Fatalf("after 5 addresses failed with at most 3 guessers: %+v", r)
	}
}

// atOnce runs call(0) … call(n-1) concurrently, as replicas would, and
// fails the test on the first error.
func atOnce(t *testing.T, n int, call func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() { errs <- call(i) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// testCountsConcurrentSignInFailuresOneByOne: failures from many callers
// at once (replicas) are each counted.
func testCountsConcurrentSignInFailuresOneByOne(t *testing.T, s store.Store) {
	const n = 40
	atOnce(t, n, func(i int) error {
		return s.SignInFailed(context.Background(), "acct", "192.0.2."+string(rune('a'+i%4)),
			store.SignInWindow{Now: base, Window: window, MaxGuessers: 2})
	})
	r := signInRecord(t, s, "acct", "192.0.2.a")
	if r.AccountFailures != n || r.Guessers != 2 {
		t.Fatalf("after %d concurrent failures from 4 addresses (at most 2 guessers): %+v", n, r)
	}
}

// testDecidesConcurrentSignInAttemptsOneByOne: tries from many callers at
// once (replicas) are each decided on the counts of those before them:
// with three allowed, exactly three go ahead and are counted.
func testDecidesConcurrentSignInAttemptsOneByOne(t *testing.T, s store.Store) {
	const n = 40
	var allowed atomic.Int32
	atOnce(t, n, func(i int) error {
		ok, err := s.SignInAttempt(context.Background(), "acct", "192.0.2."+string(rune('a'+i%2)),
			store.SignInWindow{Now: base, Window: window, MaxGuessers: 10},
			func(r store.SignInRecord) bool { return r.AccountFailures < 3 })
		if ok {
			allowed.Add(1)
		}
		return err
	})
	r := signInRecord(t, s, "acct", "192.0.2.a")
	if allowed.Load() != 3 || r.AccountFailures != 3 {
		t.Fatalf("%d concurrent tries, 3 allowed: %d went ahead, record %+v", n, allowed.Load(), r)
	}
	// A refused try leaves nothing behind, not even the rows it locked.
	ok, err := s.SignInAttempt(t.Context(), "other", "192.0.2.9",
		store.SignInWindow{Now: base, Window: window, MaxGuessers: 10}, func(store.SignInRecord) bool { return false })
	if err != nil || ok {
		t.Fatalf("a refused try = %v, %v", ok, err)
	}
	checkRecord(t, signInRecord(t, s, "other", "192.0.2.9"), store.SignInRecord{})
}

// testPrunesSignInRecords: what is past its window goes, what is not stays.
func testPrunesSignInRecords(t *testing.T, s store.Store) {
	failAt(t, s, "old", "192.0.2.1", base, 10)
	failAt(t, s, "new", "192.0.2.2", base.Add(time.Hour), 10)
	if err := s.SignInSucceeded(t.Context(), "owner", "192.0.2.3", base, base); err != nil {
		t.Fatal(err)
	}
	if err := s.PruneSignIns(t.Context(), base.Add(30*time.Minute), base.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	checkRecord(t, signInRecord(t, s, "old", "192.0.2.1"), store.SignInRecord{})
	checkRecord(t, signInRecord(t, s, "owner", "192.0.2.3"), store.SignInRecord{})
	at := us(base.Add(time.Hour))
	checkRecord(t, signInRecord(t, s, "new", "192.0.2.2"), store.SignInRecord{
		AccountFailures: 1, AccountLast: at, Guesser: true, Guessers: 1, AddressFailures: 1, AddressSince: at,
	})
}

func claim(t testing.TB, s store.Store, at time.Time, keys ...string) bool {
	t.Helper()
	ok, err := s.ClaimDeliveries(t.Context(), keys, at, at.Add(-24*time.Hour))
	if err != nil {
		t.Fatalf("ClaimDeliveries(%v): %v", keys, err)
	}
	return ok
}

// testClaimsADeliveryOnceADay: a key is claimed once until it expires or
// is released; a claim is all or nothing.
func testClaimsADeliveryOnceADay(t *testing.T, s store.Store) {
	if !claim(t, s, base, "a", "b") {
		t.Fatal("a first claim was refused")
	}
	if claim(t, s, base.Add(time.Hour), "b") || claim(t, s, base.Add(time.Hour), "c", "a") {
		t.Fatal("a claimed key was claimed again")
	}
	if !claim(t, s, base.Add(time.Hour), "c") {
		t.Fatal("a claim refused for another key took c with it: a claim must be all or nothing")
	}
	// Releasing with another claim's time forgets nothing.
	if err := s.ReleaseDeliveries(t.Context(), []string{"c"}, base); err != nil {
		t.Fatal(err)
	}
	if claim(t, s, base.Add(2*time.Hour), "c") {
		t.Fatal("c was forgotten by a release of another claim")
	}
	if err := s.ReleaseDeliveries(t.Context(), []string{"c"}, base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !claim(t, s, base.Add(2*time.Hour), "c") {
		t.Fatal("a released key cannot be claimed again")
	}
	if claim(t, s, base.Add(24*time.Hour-time.Microsecond), "a") {
		t.Fatal("a key was forgotten before its day")
	}
	if !claim(t, s, base.Add(24*time.Hour), "a", "b") {
		t.Fatal("a key is still refused after its day")
	}
	if ok, err := s.ClaimDeliveries(t.Context(), nil, base, base); !ok || err != nil {
		t.Fatalf("claiming no keys = %v, %v; want true", ok, err)
	}
}

// testClaimsADeliveryForOneOfConcurrentCallers: replicas receiving the
// same delivery at once: exactly one runs it.
func testClaimsADeliveryForOneOfConcurrentCallers(t *testing.T, s store.Store) {
	for round := range 5 {
		key := "delivery-" + string(rune('0'+round))
		var won atomic.Int32
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := s.ClaimDeliveries(context.Background(), []string{key, key + "/body"}, base, base.Add(-24*time.Hour))
				if err != nil {
					t.Error(err)
				}
				if ok {
					won.Add(1)
				}
			}()
		}
		wg.Wait()
		if n := won.Load(); n != 1 {
			t.Fatalf("round %d: %d of 16 concurrent claims won, want exactly 1", round, n)
		}
	}
}

func testRefusesInvalidSharedArguments(t *testing.T, s store.Store) {
	ctx := t.Context()
	long := string(make([]byte, 300))
	_, errRecord := s.SignInRecord(ctx, "", "a")
	_, errClaim := s.ClaimDeliveries(ctx, []string{"ok", "with\x00nul"}, base, base)
	for what, err := range map[string]error{
		"SignInRecord with no account": errRecord,
		"SignInFailed with a long one": s.SignInFailed(ctx, long, "a", store.SignInWindow{Now: base, Window: window, MaxGuessers: 1}),
		"SignInSucceeded, no address":  s.SignInSucceeded(ctx, "a", "", base, base),
		"ClaimDeliveries with a NUL":   errClaim,
		"ReleaseDeliveries of \"\"":    s.ReleaseDeliveries(ctx, []string{""}, base),
	} {
		checkErrIs(t, what, err, store.ErrInvalid)
	}
}

func testSharedStateWhenClosed(t *testing.T, s store.Store) {
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, errRecord := s.SignInRecord(ctx, "a", "b")
	_, errClaim := s.ClaimDeliveries(ctx, []string{"k"}, base, base)
	for what, err := range map[string]error{
		"SignInRecord":      errRecord,
		"SignInFailed":      s.SignInFailed(ctx, "a", "b", store.SignInWindow{Now: base, Window: window, MaxGuessers: 1}),
		"SignInSucceeded":   s.SignInSucceeded(ctx, "a", "b", base, base),
		"PruneSignIns":      s.PruneSignIns(ctx, base, base),
		"ClaimDeliveries":   errClaim,
		"ReleaseDeliveries": s.ReleaseDeliveries(ctx, []string{"k"}, base),
	} {
		checkErrIs(t, what, err, store.ErrClosed)
	}
}

// testVersionsATaskHistory: each touch raises a project's version, and no
// other project's.
func testVersionsATaskHistory(t *testing.T, s store.Store) {
	version := func(project int64) int64 {
		t.Helper()
		v, err := s.TaskHistoryVersion(t.Context(), project)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := version(1); v != 0 {
		t.Fatalf("an untouched history has version %d, want 0", v)
	}
	for range 3 {
		if err := s.TouchTaskHistory(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := version(1), version(2); a != 3 || b != 0 {
		t.Fatalf("after 3 touches of project 1: versions %d and %d, want 3 and 0", a, b)
	}
	s.Close()
	_, err := s.TaskHistoryVersion(t.Context(), 1)
	checkErrIs(t, "TaskHistoryVersion when closed", err, store.ErrClosed)
	checkErrIs(t, "TouchTaskHistory when closed", s.TouchTaskHistory(t.Context(), 1), store.ErrClosed)
}
