package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Shared is the state that every API replica must see alike: the sign-in
// limits and the memory of GitHub deliveries already run. Kept in the
// store, one replica's failures count on all of them and a delivery run by
// one is refused by the others.
//
// The times are the caller's clock, stored as microseconds since the epoch
// on both backends, so that the statements below are the same for both
// (only the placeholders differ): these rows are counters and stamps that
// no screen shows. Replicas' clocks are assumed to agree to within a
// second, as NTP keeps them; a skew shortens or lengthens a window by as
// much.
type Shared interface {
	// SignInRecord reads what the store holds about account and address
	// (zero values for nothing on record).
	SignInRecord(ctx context.Context, account, address string) (SignInRecord, error)
	// SignInFailed records a failed sign-in to account from address at
	// f.Now: one more failure in the account's run (a new run if its last
	// failure is at or before f.Now-f.Window), the address among the
	// account's guessers (unless it has f.MaxGuessers already), and one
	// more failure in the address's window (a new window if it began at or
	// before f.Now-f.Window). One transaction.
	SignInFailed(ctx context.Context, account, address string, f SignInWindow) error
	// SignInAttempt decides and counts a sign-in in one transaction, so
	// that concurrent tries, on any replica, are decided one by one: it
	// locks the account's and the address's counts, reads the record, and
	// if allow says the try may go ahead, counts it as SignInFailed does
	// (before its password is compared; SignInSucceeded takes it back).
	// It reports allow's answer.
	SignInAttempt(ctx context.Context, account, address string, f SignInWindow, allow func(SignInRecord) bool) (bool, error)
	// SignInSucceeded ends the account's run (its failures and guessers go),
	// takes back the failure SignInAttempt counted against address at
	// triedAt (if that window still runs), and records address as one the
	// account signed in from, at now.
	SignInSucceeded(ctx context.Context, account, address string, triedAt, now time.Time) error
	// PruneSignIns forgets runs and windows whose last failure or start is
	// at or before failedBefore, and the addresses known before knownBefore.
	PruneSignIns(ctx context.Context, failedBefore, knownBefore time.Time) error

	// ClaimDeliveries records keys at now, unless one of them is recorded
	// after expiredBefore; it reports whether it recorded them. Records at
	// or before expiredBefore are forgotten first. One transaction: with
	// two concurrent claims of one key, exactly one wins.
	ClaimDeliveries(ctx context.Context, keys []string, now, expiredBefore time.Time) (bool, error)
	// ReleaseDeliveries forgets keys claimed at claimedAt (and only those:
	// a later claim of the same key stays).
	ReleaseDeliveries(ctx context.Context, keys []string, claimedAt time.Time) error

	// TouchTaskHistory raises the version of a project's task history: a
	// change to its summaries that no Task object tells of (a pruned task
	// deleted through the API), which every replica's task index must
	// read again.
	TouchTaskHistory(ctx context.Context, projectID int64) error
	// TaskHistoryVersion is that version; 0 if it was never raised.
	TaskHistoryVersion(ctx context.Context, projectID int64) (int64, error)
}

// SignInRecord is what the store holds about one sign-in's account and
// address.
type SignInRecord struct {
	// AccountFailures is the account's failures in a row, the last at
	// AccountLast (zero: none on record).
	AccountFailures int
	AccountLast     time.Time
	// Guesser: the address failed against the account in this run;
	// Guessers is how many addresses did.
	Guesser  bool
	Guessers int
	// AddressFailures is the address's failures in the window that began
	// at AddressSince (zero: none on record).
	AddressFailures int
	AddressSince    time.Time
	// KnownAt is when the account last signed in from the address (zero:
	// never, or forgotten).
	KnownAt time.Time
}

// SignInWindow is how SignInFailed counts.
type SignInWindow struct {
	Now         time.Time
	Window      time.Duration
	MaxGuessers int
}

// maxSharedKey bounds a key of the shared state: callers pass digests and
// addresses, so anything longer is a bug, and a bound keeps a row small.
const maxSharedKey = 256

func checkSharedKey(what, v string) error {
	if v == "" || len(v) > maxSharedKey || !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
		return fmt.Errorf("%w: %s must be 1 to %d bytes of UTF-8 without NUL", ErrInvalid, what, maxSharedKey)
	}
	return nil
}

func checkSharedKeys(what string, vs ...string) error {
	for _, v := range vs {
		if err := checkSharedKey(what, v); err != nil {
			return err
		}
	}
	return nil
}

// sharedBackend is what a backend gives sharedState.
type sharedBackend interface {
	check() error
	fail(op string, err error) error
	// sharedTx runs fn in a write transaction; an error from fn rolls it
	// back (errNotClaimed is returned as is).
	sharedTx(ctx context.Context, op string, fn func(sharedConn) error) error
	// sharedReader runs a statement outside any transaction.
	sharedReader() sharedConn
}

// sharedState implements Shared on either backend.
type sharedState struct{ b sharedBackend }

// sharedConn is a connection or a transaction of either backend, with
// statements written with ? placeholders.
type sharedConn interface {
	exec(ctx context.Context, query string, args ...any) (int64, error)
	queryRow(ctx context.Context, query string, args ...any) func(dest ...any) error
}

// dollarPlaceholders turns ?, ?, ? into $1, $2, $3 for PostgreSQL. The
// statements of this file contain no other question mark.
func dollarPlaceholders(query string) string {
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// atMicros and fromAtMicros store a time of the shared state; 0 is none.
func atMicros(t time.Time) int64 { return t.UnixMicro() }

func fromAtMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

const signInRecordSQL = `SELECT
	COALESCE((SELECT failures FROM signin_accounts WHERE account = ?), 0),
	COALESCE((SELECT last_failure FROM signin_accounts WHERE account = ?), 0),
	(SELECT count(*) FROM signin_guessers WHERE account = ? AND address = ?),
	(SELECT count(*) FROM signin_guessers WHERE account = ?),
	COALESCE((SELECT failures FROM signin_addresses WHERE address = ?), 0),
	COALESCE((SELECT since FROM signin_addresses WHERE address = ?), 0),
	COALESCE((SELECT at FROM signin_known WHERE account = ? AND address = ?), 0)`

// readSignInRecord is one statement: a sign-in costs one round trip here.
func readSignInRecord(ctx context.Context, c sharedConn, account, address string) (SignInRecord, error) {
	var r SignInRecord
	var last, since, known, guesser int64
	err := c.queryRow(ctx, signInRecordSQL, account, account, account, address, account, address, address, account, address)(
		&r.AccountFailures, &last, &guesser, &r.Guessers, &r.AddressFailures, &since, &known)
	r.AccountLast, r.AddressSince, r.KnownAt, r.Guesser = fromAtMicros(last), fromAtMicros(since), fromAtMicros(known), guesser > 0
	return r, err
}

// recordSignInFailure runs in a transaction. The account's upsert locks its
// row (PostgreSQL) or the database (SQLite) until the end, so concurrent
// failures of one account from several replicas count one by one and the
// guessers' bound holds.
func recordSignInFailure(ctx context.Context, c sharedConn, account, address string, f SignInWindow) error {
	now, cutoff := atMicros(f.Now), atMicros(f.Now.Add(-f.Window))
	var failures int64
	err := c.queryRow(ctx, `INSERT INTO signin_accounts (account, failures, last_failure) VALUES (?, 1, ?)
		ON CONFLICT (account) DO UPDATE SET
			failures = CASE WHEN signin_accounts.last_failure <= ? THEN 1 ELSE signin_accounts.failures + 1 END,
			last_failure = excluded.last_failure
		RETURNING failures`, account, now, cutoff)(&failures)
	if err != nil {
		return err
	}
	if failures == 1 { // a new run: the last one's guessers are forgiven
		if _, err := c.exec(ctx, `DELETE FROM signin_guessers WHERE account = ?`, account); err != nil {
			return err
		}
	}
	_, err = c.exec(ctx, `INSERT INTO signin_guessers (account, address)
		SELECT CAST(? AS TEXT), CAST(? AS TEXT) WHERE (SELECT count(*) FROM signin_guessers WHERE account = ?) < ?
		ON CONFLICT DO NOTHING`, account, address, account, f.MaxGuessers)
	if err != nil {
		return err
	}
	_, err = c.exec(ctx, `INSERT INTO signin_addresses (address, failures, since) VALUES (?, 1, ?)
		ON CONFLICT (address) DO UPDATE SET
			failures = CASE WHEN signin_addresses.since <= ? THEN 1 ELSE signin_addresses.failures + 1 END,
			since = CASE WHEN signin_addresses.since <= ? THEN excluded.since ELSE signin_addresses.since END`,
		address, now, cutoff, cutoff)
	return err
}

// lockSignIn locks the account's and the address's rows until the end of
// the transaction (on PostgreSQL; SQLite's write transaction holds the
// whole database): an upsert that changes nothing, which locks a row that
// exists and creates one that does not, at zero failures and time 0 (read
// as nothing on record; gone with the rollback of a try that may not go
// ahead, overwritten by the count of one that may). Always the account
// first, then the address, as recordSignInFailure takes them, so two
// tries cannot wait on each other.
func lockSignIn(ctx context.Context, c sharedConn, account, address string) error {
	if _, err := c.exec(ctx, `INSERT INTO signin_accounts (account, failures, last_failure) VALUES (?, 0, 0)
		ON CONFLICT (account) DO UPDATE SET failures = signin_accounts.failures`, account); err != nil {
		return err
	}
	_, err := c.exec(ctx, `INSERT INTO signin_addresses (address, failures, since) VALUES (?, 0, 0)
		ON CONFLICT (address) DO UPDATE SET failures = signin_addresses.failures`, address)
	return err
}

func recordSignInSuccess(ctx context.Context, c sharedConn, account, address string, triedAt, now time.Time) error {
	for _, q := range []string{`DELETE FROM signin_accounts WHERE account = ?`, `DELETE FROM signin_guessers WHERE account = ?`} {
		if _, err := c.exec(ctx, q, account); err != nil {
			return err
		}
	}
	// The try was counted in the address's window that began at or before
	// it; a window begun since holds other failures only.
	if _, err := c.exec(ctx, `UPDATE signin_addresses SET failures = failures - 1
		WHERE address = ? AND failures > 0 AND since <= ?`, address, atMicros(triedAt)); err != nil {
		return err
	}
	_, err := c.exec(ctx, `INSERT INTO signin_known (account, address, at) VALUES (?, ?, ?)
		ON CONFLICT (account, address) DO UPDATE SET at = excluded.at`, account, address, atMicros(now))
	return err
}

func pruneSignIns(ctx context.Context, c sharedConn, failedBefore, knownBefore time.Time) error {
	failed, known := atMicros(failedBefore), atMicros(knownBefore)
	for _, s := range []struct {
		q   string
		arg []any
	}{
		{`DELETE FROM signin_accounts WHERE last_failure <= ?`, []any{failed}},
		{`DELETE FROM signin_guessers WHERE NOT EXISTS (SELECT 1 FROM signin_accounts a WHERE a.account = signin_guessers.account)`, nil},
		{`DELETE FROM signin_addresses WHERE since <= ?`, []any{failed}},
		{`DELETE FROM signin_known WHERE at < ?`, []any{known}},
	} {
		if _, err := c.exec(ctx, s.q, s.arg...); err != nil {
			return err
		}
	}
	return nil
}

// claimDeliveries runs in a transaction; a false answer rolls it back.
func claimDeliveries(ctx context.Context, c sharedConn, keys []string, now, expiredBefore time.Time) (bool, error) {
	if _, err := c.exec(ctx, `DELETE FROM webhook_deliveries WHERE at <= ?`, atMicros(expiredBefore)); err != nil {
		return false, err
	}
	for _, k := range keys {
		n, err := c.exec(ctx, `INSERT INTO webhook_deliveries (delivery_key, at) VALUES (?, ?) ON CONFLICT DO NOTHING`, k, atMicros(now))
		if err != nil || n == 0 {
			return false, err
		}
	}
	return true, nil
}

func releaseDeliveries(ctx context.Context, c sharedConn, keys []string, claimedAt time.Time) error {
	for _, k := range keys {
		if _, err := c.exec(ctx, `DELETE FROM webhook_deliveries WHERE delivery_key = ? AND at = ?`, k, atMicros(claimedAt)); err != nil {
			return err
		}
	}
	return nil
}

// errNotClaimed rolls a claim's transaction back, and a sign-in's that
// may not go ahead.
var errNotClaimed = errors.New("not claimed")

func (s sharedState) SignInRecord(ctx context.Context, account, address string) (SignInRecord, error) {
	if err := s.b.check(); err != nil {
		return SignInRecord{}, err
	}
	if err := checkSharedKeys("sign-in account and address", account, address); err != nil {
		return SignInRecord{}, err
	}
	r, err := readSignInRecord(ctx, s.b.sharedReader(), account, address)
	if err != nil {
		return r, s.b.fail("read sign-in record", err)
	}
	return r, nil
}

func (s sharedState) SignInFailed(ctx context.Context, account, address string, f SignInWindow) error {
	if err := checkSharedKeys("sign-in account and address", account, address); err != nil {
		return err
	}
	return s.b.sharedTx(ctx, "record a failed sign-in", func(c sharedConn) error {
		return recordSignInFailure(ctx, c, account, address, f)
	})
}

func (s sharedState) SignInAttempt(ctx context.Context, account, address string, f SignInWindow, allow func(SignInRecord) bool) (bool, error) {
	if err := checkSharedKeys("sign-in account and address", account, address); err != nil {
		return false, err
	}
	err := s.b.sharedTx(ctx, "count a sign-in", func(c sharedConn) error {
		if err := lockSignIn(ctx, c, account, address); err != nil {
			return err
		}
		r, err := readSignInRecord(ctx, c, account, address)
		if err != nil {
			return err
		}
		if !allow(r) {
			return errNotClaimed // nothing to count: roll the locks' rows back
		}
		return recordSignInFailure(ctx, c, account, address, f)
	})
	if errors.Is(err, errNotClaimed) {
		return false, nil
	}
	return err == nil, err
}

func (s sharedState) SignInSucceeded(ctx context.Context, account, address string, triedAt, now time.Time) error {
	if err := checkSharedKeys("sign-in account and address", account, address); err != nil {
		return err
	}
	return s.b.sharedTx(ctx, "record a sign-in", func(c sharedConn) error {
		return recordSignInSuccess(ctx, c, account, address, triedAt, now)
	})
}

func (s sharedState) PruneSignIns(ctx context.Context, failedBefore, knownBefore time.Time) error {
	return s.b.sharedTx(ctx, "prune sign-in records", func(c sharedConn) error {
		return pruneSignIns(ctx, c, failedBefore, knownBefore)
	})
}

func (s sharedState) ClaimDeliveries(ctx context.Context, keys []string, now, expiredBefore time.Time) (bool, error) {
	if len(keys) == 0 {
		return true, nil
	}
	if err := checkSharedKeys("delivery key", keys...); err != nil {
		return false, err
	}
	err := s.b.sharedTx(ctx, "claim deliveries", func(c sharedConn) error {
		ok, err := claimDeliveries(ctx, c, keys, now, expiredBefore)
		if err == nil && !ok {
			err = errNotClaimed
		}
		return err
	})
	if errors.Is(err, errNotClaimed) {
		return false, nil
	}
	return err == nil, err
}

func (s sharedState) ReleaseDeliveries(ctx context.Context, keys []string, claimedAt time.Time) error {
	if err := checkSharedKeys("delivery key", keys...); err != nil {
		return err
	}
	return s.b.sharedTx(ctx, "release deliveries", func(c sharedConn) error {
		return releaseDeliveries(ctx, c, keys, claimedAt)
	})
}

func (s sharedState) TouchTaskHistory(ctx context.Context, projectID int64) error {
	return s.b.sharedTx(ctx, fmt.Sprintf("touch the task history of project %d", projectID), func(c sharedConn) error {
		_, err := c.exec(ctx, `INSERT INTO task_history_versions (project_id, version) VALUES (?, 1)
			ON CONFLICT (project_id) DO UPDATE SET version = task_history_versions.version + 1`, projectID)
		return err
	})
}

func (s sharedState) TaskHistoryVersion(ctx context.Context, projectID int64) (int64, error) {
	if err := s.b.check(); err != nil {
		return 0, err
	}
	var v int64
	err := s.b.sharedReader().queryRow(ctx, `SELECT COALESCE((SELECT version FROM task_history_versions WHERE project_id = ?), 0)`, projectID)(&v)
	if err != nil {
		return 0, s.b.fail(fmt.Sprintf("read the task history version of project %d", projectID), err)
	}
	return v, nil
}
