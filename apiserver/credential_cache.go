package apiserver

import (
	"context"
	"sync"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

// credentialTTL is how long a credential read from the store is reused.
// Every signed-in request looks its credential up, and on the busiest
// routes that lookup was 40% of the server's CPU. This server forgets every
// cached credential whenever it revokes one (sign-out, token delete,
// password change, user delete), so its own revocations take effect at
// once; a revocation made by another replica takes effect here within this
// delay. Expiry is still checked on every request, and the password-change
// check reads the user afresh.
const credentialTTL = time.Second

// credentialCache keeps recent store.Credential lookups by hash.
type credentialCache struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[string]cachedCredential
	// generation counts forgets: a lookup that read the store before a
	// revocation must not put what it read back after it.
	generation uint64
}

type cachedCredential struct {
	cred store.Credential
	at   time.Time
}

func newCredentialCache(now func() time.Time) *credentialCache {
	return &credentialCache{now: now, entries: map[string]cachedCredential{}}
}

// lookup answers the credential with hash, from the cache while it is
// fresh, else from st. Misses and errors are not cached: a sign-in must
// work at once.
func (c *credentialCache) lookup(ctx context.Context, st store.Store, hash string) (store.Credential, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[hash]
	gen := c.generation
	c.mu.Unlock()
	if ok && now.Sub(e.at) < credentialTTL && now.Sub(e.at) >= 0 && ctx.Value(uncachedCredential{}) == nil {
		return e.cred, nil
	}
	cred, err := st.Credential(ctx, hash)
	if err != nil {
		return cred, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.generation {
		return cred, nil // revoked meanwhile, perhaps: answer, but do not keep
	}
	if len(c.entries) > 10000 {
		// Bounded: stale entries of idle clients go with the next sweep.
		for h, e := range c.entries {
			if now.Sub(e.at) >= credentialTTL {
				delete(c.entries, h)
			}
		}
	}
	c.entries[hash] = cachedCredential{cred: cred, at: now}
	return cred, nil
}

// uncachedCredential, set in a context, makes lookup read the store even
// when the cache holds a fresh answer (what it reads still refreshes the
// cache). An open websocket's recheck, every 2 s, reads so: through the
// cache, a recheck within a second of a revocation made on another
// replica could find a lookup cached just before it and keep the socket
// 2 s more. It costs nothing: rechecks come every 2 s, so the entry a
// recheck cached has expired by the next one anyway.
type uncachedCredential struct{}

// forget drops every cached credential; called after each revocation.
func (c *credentialCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.generation++
}
