package apiserver

import (
	"strings"
	"sync"
	"time"
)

// loginLimiter counts failed sign-ins per account and per address over a
// fixed window. An account that fails too often is locked for the rest of
// its window, whatever address the attempts come from (password spraying
// from many hosts); an address that fails too often is blocked whatever
// accounts it tries (one host guessing many accounts).
//
// Counts live in this process: each replica limits on its own, which
// multiplies the budget by the replica count but never lets an attacker
// past bcrypt faster than that.
type loginLimiter struct {
	opts AuthOptions

	mu       sync.Mutex
	accounts map[string]*failures
	address  map[string]*failures
}

type failures struct {
	count int
	since time.Time
}

func newLoginLimiter(opts AuthOptions) *loginLimiter {
	return &loginLimiter{opts: opts, accounts: map[string]*failures{}, address: map[string]*failures{}}
}

// blocked returns how long a sign-in to account from addr must wait, and
// what is blocked ("account" or "address"); 0 means go ahead.
func (l *loginLimiter) blocked(account, addr string) (time.Duration, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.opts.Now()
	if wait := l.wait(l.accounts, strings.ToLower(account), l.opts.AccountFailures, now); wait > 0 {
		return wait, "account"
	}
	if wait := l.wait(l.address, addr, l.opts.AddressFailures, now); wait > 0 {
		return wait, "address"
	}
	return 0, ""
}

func (l *loginLimiter) wait(m map[string]*failures, key string, limit int, now time.Time) time.Duration {
	f := m[key]
	if f == nil {
		return 0
	}
	end := f.since.Add(l.opts.FailureWindow)
	if !now.Before(end) {
		delete(m, key)
		return 0
	}
	if f.count < limit {
		return 0
	}
	return end.Sub(now)
}

// failed records a failed sign-in.
func (l *loginLimiter) failed(account, addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.opts.Now()
	l.prune(now)
	for _, e := range []struct {
		m   map[string]*failures
		key string
	}{{l.accounts, strings.ToLower(account)}, {l.address, addr}} {
		f := e.m[e.key]
		if f == nil || !now.Before(f.since.Add(l.opts.FailureWindow)) {
			f = &failures{since: now}
			e.m[e.key] = f
		}
		f.count++
	}
}

// succeeded forgets the account's failures: its owner knows the password.
// The address keeps its count, so a host that knows one password cannot
// use it to reset its guesses at others.
func (l *loginLimiter) succeeded(account string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.accounts, strings.ToLower(account))
}

// maxTracked bounds each map: a flood of random account names (or of
// addresses, from a botnet) costs at most this many entries.
const maxTracked = 10000

// prune drops expired windows so that random account names sent by an
// attacker do not grow the maps without bound. If a map is still full,
// every window in it being live, a tenth of it is dropped at random: the
// memory stays bounded, and an attacker who floods it to reset one
// account's count must still spend thousands of failed sign-ins, each
// counted against their addresses.
func (l *loginLimiter) prune(now time.Time) {
	for _, m := range []map[string]*failures{l.accounts, l.address} {
		if len(m) < maxTracked {
			continue
		}
		for k, f := range m {
			if !now.Before(f.since.Add(l.opts.FailureWindow)) {
				delete(m, k)
			}
		}
		for k := range m { // map order is random
			if len(m) < maxTracked*9/10 {
				break
			}
			delete(m, k)
		}
	}
}

// tracked is how many accounts and addresses have failures on record.
func (l *loginLimiter) tracked() (accounts, addresses int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.accounts), len(l.address)
}
