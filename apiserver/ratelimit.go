package apiserver

import (
	"net/netip"
	"strings"
	"sync"
	"time"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
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
// Counts live in this process: each replica limits on its own, which
// multiplies the budget by the replica count but never lets an attacker
// past bcrypt faster than that.
type loginLimiter struct {
	opts AuthOptions

	mu       sync.Mutex
	accounts map[string]*accountFailures
	address  map[string]*failures
	// known are "account\x00address" pairs that signed in, with when.
	known map[string]time.Time
}

type failures struct {
	count int
	since time.Time
}

// accountFailures are one login name's failures in a row.
type accountFailures struct {
	count int
	last  time.Time
	// from are the addresses that failed against the account.
	from map[string]bool
}

const (
	// maxFreshPerAccount bounds the addresses remembered as guessers of one
	// account; past it, every new address counts as a guesser too.
	maxFreshPerAccount = 256
	// knownFor is how long an address that signed in to an account stays
	// exempt from that account's delay.
	knownFor = 30 * 24 * time.Hour
)

func newLoginLimiter(opts AuthOptions) *loginLimiter {
	return &loginLimiter{opts: opts, accounts: map[string]*accountFailures{},
		address: map[string]*failures{}, known: map[string]time.Time{}}
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

// blocked returns how long a sign-in to account from addr must wait, and
// what holds it back ("account" or "address"); 0 means go ahead.
func (l *loginLimiter) blocked(account, addr string) (time.Duration, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.opts.Now()
	account, addr = foldLogin(account), addressBucket(addr)
	known := l.isKnown(account, addr, now)
	if wait := l.addressWait(addr, now); wait > 0 && !known {
		return wait, "address"
	}
	if wait := l.accountWait(account, addr, known, now); wait > 0 {
		return wait, "account"
	}
	return 0, ""
}

func (l *loginLimiter) addressWait(addr string, now time.Time) time.Duration {
	f := l.address[addr]
	if f == nil {
		return 0
	}
	end := f.since.Add(l.opts.FailureWindow)
	if !now.Before(end) {
		delete(l.address, addr)
		return 0
	}
	if f.count < l.opts.AddressFailures {
		return 0
	}
	return end.Sub(now)
}

func (l *loginLimiter) accountWait(account, addr string, known bool, now time.Time) time.Duration {
	f := l.live(account, now)
	if f == nil {
		return 0
	}
	// A guesser has failed against the account; past maxFreshPerAccount
	// every address but the owner's known ones counts as one.
	guesser := f.from[addr] || (!known && len(f.from) >= maxFreshPerAccount)
	if !guesser {
		return 0 // the owner's address, or one that has not guessed
	}
	return f.last.Add(l.delay(f.count)).Sub(now)
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

// live is the account's failures, nil once FailureWindow has passed since
// the last one.
func (l *loginLimiter) live(account string, now time.Time) *accountFailures {
	f := l.accounts[account]
	if f != nil && !now.Before(f.last.Add(l.opts.FailureWindow)) {
		delete(l.accounts, account)
		return nil
	}
	return f
}

func (l *loginLimiter) isKnown(account, addr string, now time.Time) bool {
	at, ok := l.known[account+"\x00"+addr]
	return ok && now.Sub(at) < knownFor
}

// failed records a failed sign-in.
func (l *loginLimiter) failed(account, addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.opts.Now()
	l.prune(now)
	account, addr = foldLogin(account), addressBucket(addr)
	f := l.live(account, now)
	if f == nil {
		f = &accountFailures{from: map[string]bool{}}
		l.accounts[account] = f
	}
	f.count++
	f.last = now
	if len(f.from) < maxFreshPerAccount {
		f.from[addr] = true
	}
	a := l.address[addr]
	if a == nil || !now.Before(a.since.Add(l.opts.FailureWindow)) {
		a = &failures{since: now}
		l.address[addr] = a
	}
	a.count++
}

// succeeded forgets the account's failures, since its owner knows the
// password, and remembers the address as the owner's. The address keeps
// its own count, so a host that knows one password cannot use it to reset
// its guesses at others.
func (l *loginLimiter) succeeded(account, addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.opts.Now()
	l.prune(now) // the known addresses are bounded like the failures
	account, addr = foldLogin(account), addressBucket(addr)
	delete(l.accounts, account)
	l.known[account+"\x00"+addr] = now
}

// maxTracked bounds each map: a flood of random account names (or of
// addresses, from a botnet) costs at most this many entries.
const maxTracked = 10000

// prune drops expired entries so that random account names sent by an
// attacker do not grow the maps without bound. If a map is still full, a
// tenth of it is dropped at random: the memory stays bounded, and an
// attacker who floods it to reset one account's count must still spend
// thousands of failed sign-ins, each counted against their addresses.
func (l *loginLimiter) prune(now time.Time) {
	if len(l.accounts) >= maxTracked {
		for k := range l.accounts {
			l.live(k, now)
		}
		dropTenth(l.accounts)
	}
	if len(l.address) >= maxTracked {
		for k := range l.address {
			l.addressWait(k, now)
		}
		dropTenth(l.address)
	}
	if len(l.known) >= maxTracked {
		for k, at := range l.known {
			if now.Sub(at) >= knownFor {
				delete(l.known, k)
			}
		}
		dropTenth(l.known)
	}
}

// dropTenth deletes random entries of a full map until it is 90% full.
func dropTenth[V any](m map[string]V) {
	for k := range m { // map order is random
		if len(m) < maxTracked*9/10 {
			break
		}
		delete(m, k)
	}
}

// tracked is how many accounts and addresses have failures on record, and
// how many account-address pairs are remembered as known.
func (l *loginLimiter) tracked() (accounts, addresses, known int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.accounts), len(l.address), len(l.known)
}
