package apiserver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

// The cache in front of a real SQLite store: a credential is reused for
// credentialTTL, read again after it, and forgotten at once on forget, even
// by a lookup that was reading the store while the revocation happened.
func TestCredentialCache_reusesForAMomentAndForgetsOnRevocation(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "creds.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	c := newCredentialCache(func() time.Time { return now })
	cred := store.Credential{Hash: "h1", Kind: store.CredentialSession, UserID: 7, Created: now}
	if err := st.PutCredential(ctx, cred); err != nil {
		t.Fatal(err)
	}

	if _, err := c.lookup(ctx, st, "h1"); err != nil {
		t.Fatal(err)
	}
	// Deleted behind the cache's back (another replica): still served
	// within the TTL, refused after it.
	if err := st.DeleteCredential(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.lookup(ctx, st, "h1"); err != nil || got.UserID != 7 {
		t.Fatalf("within the TTL = %+v, %v; want the cached credential", got, err)
	}
	now = now.Add(credentialTTL)
	if _, err := c.lookup(ctx, st, "h1"); err == nil {
		t.Fatal("a credential deleted from the store is still served after the TTL")
	}

	// Revoked through this server: forget makes it fail at once.
	if err := st.PutCredential(ctx, store.Credential{Hash: "h2", Kind: store.CredentialSession, UserID: 8, Created: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.lookup(ctx, st, "h2"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteCredential(ctx, "h2"); err != nil {
		t.Fatal(err)
	}
	c.forget()
	if _, err := c.lookup(ctx, st, "h2"); err == nil {
		t.Fatal("a revoked credential is served after forget")
	}

	// A miss is never cached: a fresh sign-in works at once.
	if err := st.PutCredential(ctx, store.Credential{Hash: "h2", Kind: store.CredentialSession, UserID: 9, Created: now}); err != nil {
		t.Fatal(err)
	}
	if got, err := c.lookup(ctx, st, "h2"); err != nil || got.UserID != 9 {
		t.Fatalf("after a miss = %+v, %v; want the new credential", got, err)
	}

	// A lookup whose store read overlaps a revocation answers what it
	// read but does not keep it.
	racing := revokingStore{Store: st, during: c.forget}
	c.forget()
	if _, err := c.lookup(ctx, racing, "h2"); err != nil {
		t.Fatal(err)
	}
	if len(c.entries) != 0 {
		t.Fatalf("a credential read across a revocation was kept: %d entries", len(c.entries))
	}
}

// revokingStore runs during in the middle of every credential read, as a
// sign-out on another request would.
type revokingStore struct {
	store.Store
	during func()
}

func (s revokingStore) Credential(ctx context.Context, hash string) (store.Credential, error) {
	cred, err := s.Store.Credential(ctx, hash)
	s.during()
	return cred, err
}
