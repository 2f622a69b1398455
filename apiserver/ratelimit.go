package apiserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"strings"
	"sync"
	"time"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/store"
)

// loginLimiter slows down password guessing without locking anyone out.
//
// Per address: an address with AddressFailures failed sign-ins within
// FailureWindow is blocked for the rest of the window, whatever accounts
// it tries (one host guessing many accounts). The address is the peer's,
// or the client's as a trusted proxy reports it (proxyTrust.clientAddress);
// an IPv6 client counts as its /64 (addressBucket). The block spares the
// accounts that signed in from that address before: a neighbour behind the
// owner's NAT who guesses at other accounts does not lock the owner out.
//
// Per account (signInAccount: the user the login names, however it is
// spelled; for a login that names nobody, the login case-folded, so that an
// unknown name behaves exactly like a real one and the answer tells nothing
// about existence): after AccountFailures failures in a row, each further
// try waits a delay that doubles with every failure, from one second up to
// AccountDelayCap, counted from the last failure. The delay holds back only
// the addresses that are guessing: those that have failed against this
// account. The owner is never locked out, because
//   - an address that signed in to the account before and has not failed
//     against it since passes at once (if it has failed, it waits like any
//     guesser: a neighbour at the owner's address gets no free guesses), and
//   - an address that has not failed against the account gets its try at
//     once; a wrong password there makes it one of the guessers.
//
// So a botnet earns one extra guess per fresh address (and per account at
// most maxFreshPerAccount of them per window), then shares one slot per
// AccountDelayCap with every other guesser. This is the device-cookie
// idea of OWASP's guidance with the address as the device; GitHub and AWX
// likewise throttle rather than lock.
//
// Counts live in the store (store.Shared), so that every replica counts
// every failure: five guesses at an account meet the same delay whichever
// replicas they reach, and a blocked try is refused before its password
// is looked at. Each try is decided and counted as a failure in one
// transaction that locks the account's and the address's rows before its
// password is compared (a success takes the count back), so concurrent
// guesses are decided one by one whichever replicas they reach. A sign-in
// costs a read (a try it finds blocked costs nothing more), that
// transaction and, on success, one more, next to a bcrypt comparison that
// costs far more. If the store cannot be read or written,
// the sign-in fails (fail closed): a session could not be stored anyway,
// and failing open would let guesses through uncounted while it is down.
//
// Counted before the comparison, a correct sign-in is a failure until it
// succeeds: correct sign-ins sent at once from one address (a script, two
// browser tabs, a test suite's workers, users behind one NAT) would find
// each other counted, the fourth to one account held back as a guesser's
// and the twenty-first to any blocking the address for the window. So on
// a replica the sign-ins from one address take turns (inTurn): each is
// decided after the one before it has settled, as if sent in turn. Across
// replicas they stay counted as above, which errs on the side of a delay.
// What keeps a burst of guesses to the free failures is the count in
// try's transaction, on any replica; the turns only spare the owner.
type loginLimiter struct {
	opts AuthOptions
	// store holds the counts; nil only for a server that signs no one in.
	store store.Shared

	mu        sync.Mutex
	lastPrune time.Time
	turns     map[string]*turn // by address key, while a sign-in holds or waits for it
}

// turn is the right to decide a sign-in from one address.
type turn struct {
	held    chan struct{} // a token while someone holds the turn
	waiters int           // holders and waiters, to drop the entry after the last
}

const (
	// maxFreshPerAccount bounds the addresses remembered as guessers of one
	// account; past it, every new address counts as a guesser too.
	maxFreshPerAccount = 256
	// knownFor is how long an address that signed in to an account stays
	// exempt from that account's delay.
	knownFor = 30 * 24 * time.Hour
	// pruneEvery is how often a replica deletes the expired counts: they
	// are ignored once expired, so this only bounds the tables, by what
	// one window and knownFor hold.
	pruneEvery = time.Minute
)

func newLoginLimiter(opts AuthOptions, st store.Shared) *loginLimiter {
	return &loginLimiter{opts: opts, store: st}
}

// signInAccount is the key of the account a sign-in is for: the user the
// login names (by username or by email, in any case), so that each of its
// spellings shares one budget; else the login case-folded the way
// FindByLogin compares emails (EqualFold: "ſ" is "s", "K" (Kelvin) is "k"),
// so that an unknown login's spellings share one too. The two kinds of key
// cannot meet: a login never starts with NUL.
func signInAccount(user *bastionv1.User, login string) string {
	if user != nil {
		return "\x00user/" + user.Namespace + "/" + user.Name
	}
	return foldLogin(login)
}

// foldLogin maps every spelling strings.EqualFold takes for the same login
// to one string: upper-casing turns "ſ" into "S" and lower-casing the
// Kelvin sign into "k", so ToLower(ToUpper(s)) is a simple case fold.
func foldLogin(login string) string {
	return strings.ToLower(strings.ToUpper(login))
}

// addressBucket is what the limits count an address as: an IPv6 client by
// its /64, since an ordinary IPv6 connection holds all 2^64 addresses of
// one and could take a new one per guess; anything else as it is.
func addressBucket(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Unmap().Is6() {
		return addr
	}
	return netip.PrefixFrom(a, 64).Masked().String()
}

// limitKey is what the store counts a sign-in account or address as: a
// digest, so that the rows hold neither logins nor addresses, and an
// account key (which starts with NUL, see signInAccount) fits any column.
func limitKey(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// limitKeys are the keys of a sign-in to account from addr.
func limitKeys(account, addr string) (string, string) {
	return limitKey(foldLogin(account)), limitKey(addressBucket(addr))
}

// blocked returns how long a sign-in to account from addr must wait, and
// what holds it back ("account" or "address"); 0 means go ahead. It only
// reads, so concurrent checks may all pass: try is what a sign-in calls.
func (l *loginLimiter) blocked(ctx context.Context, account, addr string) (time.Duration, string, error) {
	a, b := limitKeys(account, addr)
	r, err := l.store.SignInRecord(ctx, a, b)
	if err != nil {
		return 0, "", err
	}
	wait, what := l.wait(r, l.opts.Now())
	logHeldBack(r, wait, what, addr)
	return wait, what, nil
}

// logHeldBack tells the log of a sign-in the limits hold back, with the
// counts that decided it (not the login typed, which may be a password
// typed in the wrong field).
func logHeldBack(r store.SignInRecord, wait time.Duration, what, addr string) {
	if wait <= 0 {
		return
	}
	logAPI().Info("sign-in held back by the limits", "by", what, "for", wait.Round(time.Millisecond).String(), "address", addr,
		"accountFailures", r.AccountFailures, "guesser", r.Guesser, "guessers", r.Guessers, "addressFailures", r.AddressFailures)
}

// inTurn waits until no other sign-in from addr (its bucket) is being
// decided on this replica, and returns what ends this one's turn: try
// and the password's comparison, and succeeded after it, run within it.
// A blocked try is answered from one read, so a flood from an address
// drains fast, and only that address waits on it. An error is the
// request's context ending while it waited (the client went away).
func (l *loginLimiter) inTurn(ctx context.Context, addr string) (func(), error) {
	key := limitKey(addressBucket(addr))
	l.mu.Lock()
	if l.turns == nil {
		l.turns = map[string]*turn{}
	}
	t := l.turns[key]
	if t == nil {
		t = &turn{held: make(chan struct{}, 1)}
		l.turns[key] = t
	}
	t.waiters++
	l.mu.Unlock()
	leave := func() {
		l.mu.Lock()
		if t.waiters--; t.waiters == 0 {
			delete(l.turns, key)
		}
		l.mu.Unlock()
	}
	select {
	case t.held <- struct{}{}:
		return func() { <-t.held; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

// try decides a sign-in to account from addr as blocked does and, if it
// may go ahead, counts it as a failure at once, before its password is
// compared (succeeded takes it back): concurrent guesses, on any replica,
// are decided one by one, so a burst meets the limits as the same guesses
// sent in turn would, instead of all passing the check before the first
// failure is recorded. triedAt is for succeeded.
//
// A try that a plain read already finds blocked is answered from that
// read: a flood of blocked guesses takes no write lock (on SQLite, the
// one writer that the runners' output needs too).
func (l *loginLimiter) try(ctx context.Context, account, addr string) (wait time.Duration, what string, triedAt time.Time, err error) {
	now := l.opts.Now()
	if wait, what, err = l.blocked(ctx, account, addr); err != nil || wait > 0 {
		return wait, what, now, err
	}
	a, b := limitKeys(account, addr)
	_, err = l.store.SignInAttempt(ctx, a, b, l.window(now), func(r store.SignInRecord) bool {
		wait, what = l.wait(r, now)
		logHeldBack(r, wait, what, addr)
		return wait <= 0
	})
	l.prune(ctx, now)
	return wait, what, now, err
}

// wait is how long a sign-in with record r must wait at now, and what
// holds it back.
func (l *loginLimiter) wait(r store.SignInRecord, now time.Time) (time.Duration, string) {
	known := !r.KnownAt.IsZero() && now.Sub(r.KnownAt) < knownFor
	if wait := l.addressWait(r, now); wait > 0 && !known {
		return wait, "address"
	}
	if wait := l.accountWait(r, known, now); wait > 0 {
		return wait, "account"
	}
	return 0, ""
}

func (l *loginLimiter) window(now time.Time) store.SignInWindow {
	return store.SignInWindow{Now: now, Window: l.opts.FailureWindow, MaxGuessers: maxFreshPerAccount}
}

func (l *loginLimiter) addressWait(r store.SignInRecord, now time.Time) time.Duration {
	end := r.AddressSince.Add(l.opts.FailureWindow)
	if r.AddressFailures < l.opts.AddressFailures || !now.Before(end) {
		return 0
	}
	return end.Sub(now)
}

func (l *loginLimiter) accountWait(r store.SignInRecord, known bool, now time.Time) time.Duration {
	if r.AccountFailures == 0 || !now.Before(r.AccountLast.Add(l.opts.FailureWindow)) {
		return 0 // no failures in a row, or the last is a window ago
	}
	// A guesser has failed against the account; past maxFreshPerAccount
	// every address but the owner's known ones counts as one.
	guesser := r.Guesser || (!known && r.Guessers >= maxFreshPerAccount)
	if !guesser {
		return 0 // the owner's address, or one that has not guessed
	}
	return r.AccountLast.Add(l.delay(r.AccountFailures)).Sub(now)
}

// delay is the wait after count failures in a row: none for the first
// AccountFailures, then 1 s, 2 s, 4 s… up to AccountDelayCap.
func (l *loginLimiter) delay(count int) time.Duration {
	over := count - l.opts.AccountFailures
	if over < 0 {
		return 0
	}
	d := time.Second
	for range over {
		if d >= l.opts.AccountDelayCap {
			break
		}
		d *= 2
	}
	return min(d, l.opts.AccountDelayCap)
}

// succeeded forgets the account's failures, since its owner knows the
// password, takes back the failure try counted against the address at
// triedAt, and remembers the address as the owner's. The address keeps its
// other failures, so a host that knows one password cannot use it to
// reset its guesses at others.
func (l *loginLimiter) succeeded(ctx context.Context, account, addr string, triedAt time.Time) error {
	now := l.opts.Now()
	a, b := limitKeys(account, addr)
	err := l.store.SignInSucceeded(ctx, a, b, triedAt, now)
	l.prune(ctx, now)
	return err
}

// prune deletes, at most once per pruneEvery on this replica, the counts
// that expired: random account names sent by an attacker then occupy the
// store for one window, each one a failure counted against its address.
func (l *loginLimiter) prune(ctx context.Context, now time.Time) {
	l.mu.Lock()
	due := now.Sub(l.lastPrune) >= pruneEvery || now.Before(l.lastPrune)
	if due {
		l.lastPrune = now
	}
	l.mu.Unlock()
	if !due {
		return
	}
	if err := l.store.PruneSignIns(ctx, now.Add(-l.opts.FailureWindow), now.Add(-knownFor)); err != nil {
		logAPI().Error(err, "pruning expired sign-in counts; they are ignored meanwhile")
	}
}
