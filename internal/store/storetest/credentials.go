package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

// hashOf is what a caller stores: the hex SHA-256 of a secret.
func hashOf(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// credential makes a credential of a user whose secret, and so hash, is
// derived from name; it was created n seconds after base.
func credential(name string, kind store.CredentialKind, userID int64, n int) store.Credential {
	return store.Credential{
		Hash: hashOf(name), Kind: kind, PublicID: "pub-" + name, UserID: userID,
		Created: base.Add(time.Duration(n) * time.Second),
		Expires: base.Add(time.Duration(n)*time.Second + 24*time.Hour),
	}
}

// normalizedCredential is a credential as a store returns it.
func normalizedCredential(c store.Credential) store.Credential {
	c.Created = c.Created.Truncate(time.Microsecond).UTC()
	if !c.Expires.IsZero() {
		c.Expires = c.Expires.Truncate(time.Microsecond).UTC()
	}
	return c
}

func mustPutCredential(t testing.TB, s store.Store, c store.Credential) {
	t.Helper()
	if err := s.PutCredential(t.Context(), c); err != nil {
		t.Fatalf("PutCredential(%s of user %d): %v", c.Kind, c.UserID, err)
	}
}

func checkCredential(t testing.TB, s store.Store, want store.Credential) {
	t.Helper()
	got, err := s.Credential(t.Context(), want.Hash)
	if err != nil {
		t.Fatalf("Credential(%s): %v", want.PublicID, err)
	}
	if want = normalizedCredential(want); !reflect.DeepEqual(got, want) {
		t.Fatalf("credential:\n got %+v\nwant %+v", got, want)
	}
}

// checkCredentialList fails unless the user's credentials of kind are
// exactly want, in that order.
func checkCredentialList(t testing.TB, s store.Store, userID int64, kind store.CredentialKind, want ...store.Credential) {
	t.Helper()
	got, err := s.Credentials(t.Context(), userID, kind)
	if err != nil {
		t.Fatalf("Credentials(%d, %s): %v", userID, kind, err)
	}
	if got == nil {
		t.Fatalf("Credentials(%d, %s) = nil, want an empty slice (it becomes a JSON array)", userID, kind)
	}
	norm := []store.Credential{}
	for _, c := range want {
		norm = append(norm, normalizedCredential(c))
	}
	if !reflect.DeepEqual(got, norm) {
		t.Fatalf("Credentials(%d, %s):\n got %+v\nwant %+v", userID, kind, got, norm)
	}
}

// checkNoHash fails if an error carries a hash: errors end up in logs.
func checkNoHash(t testing.TB, err error, hashes ...string) {
	t.Helper()
	for _, h := range hashes {
		if err != nil && strings.Contains(err.Error(), h) {
			t.Fatalf("error carries a credential hash: %v", err)
		}
	}
}

func testPutsAndReadsCredentials(t *testing.T, s store.Store) {
	// Times with nanoseconds and in another zone come back in UTC, to the
	// microsecond.
	zone := time.FixedZone("UTC-7", -7*3600)
	token := credential("token", store.CredentialToken, 7, 1)
	token.Created = token.Created.In(zone)
	token.Expires = token.Expires.In(zone)
	mustPutCredential(t, s, token)
	checkCredential(t, s, token)

	// A session that never expires, without a public id.
	session := store.Credential{Hash: hashOf("session"), Kind: store.CredentialSession, UserID: 7, Created: base}
	mustPutCredential(t, s, session)
	checkCredential(t, s, session)

	// A revoked credential, and one past its expiry, are still returned:
	// the caller says why it refuses them.
	revoked := credential("revoked", store.CredentialToken, 7, 2)
	revoked.Expired = true
	revoked.Expires = base.Add(-time.Hour)
	mustPutCredential(t, s, revoked)
	checkCredential(t, s, revoked)
}

func testRefusesADuplicateCredentialHash(t *testing.T, s store.Store) {
	first := credential("secret", store.CredentialSession, 7, 1)
	mustPutCredential(t, s, first)
	// Another user, kind and time under the same hash: still a conflict,
	// and the first credential is left as it was.
	again := credential("secret", store.CredentialToken, 8, 5)
	err := s.PutCredential(t.Context(), again)
	checkErrIs(t, "PutCredential of a hash already stored", err, store.ErrConflict)
	checkNoHash(t, err, first.Hash)
	checkCredential(t, s, first)
	checkCredentialList(t, s, 8, store.CredentialToken)
}

func testMissingCredentials(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustPutCredential(t, s, credential("there", store.CredentialSession, 7, 1))
	missing := hashOf("missing")
	_, err := s.Credential(ctx, missing)
	checkErrIs(t, "Credential of an unknown hash", err, store.ErrNotFound)
	checkNoHash(t, err, missing)
	checkCredentialList(t, s, 99, store.CredentialSession)
	checkErrIs(t, "ExpireCredential of an unknown public id",
		s.ExpireCredential(ctx, 7, store.CredentialSession, "pub-nobody"), store.ErrNotFound)
	if err := s.DeleteCredential(ctx, missing); err != nil {
		t.Fatalf("DeleteCredential of an unknown hash: %v", err)
	}
	if n, err := s.DeleteUserCredentials(ctx, 99, store.CredentialSession, ""); err != nil || n != 0 {
		t.Fatalf("DeleteUserCredentials of a user without credentials = %d, %v; want 0", n, err)
	}
}

func testListsCredentialsNewestFirstPerUserAndKind(t *testing.T, s store.Store) {
	// Put out of order, with a tie in the same microsecond (the
	// nanoseconds differ but are not kept) broken by hash, highest first.
	a := credential("a", store.CredentialToken, 7, 1)
	b := credential("b", store.CredentialToken, 7, 3)
	c := credential("c", store.CredentialToken, 7, 2)
	d := credential("d", store.CredentialToken, 7, 2)
	d.Created = d.Created.Truncate(time.Microsecond).Add(100 * time.Nanosecond)
	for _, x := range []store.Credential{c, a, d, b} {
		mustPutCredential(t, s, x)
	}
	tied := []store.Credential{c, d}
	if tied[0].Hash < tied[1].Hash {
		tied[0], tied[1] = tied[1], tied[0]
	}
	// Other users' tokens and the same user's sessions stay out.
	otherUser := credential("other user", store.CredentialToken, 8, 4)
	session := credential("session", store.CredentialSession, 7, 5)
	mustPutCredential(t, s, otherUser)
	mustPutCredential(t, s, session)

	checkCredentialList(t, s, 7, store.CredentialToken, b, tied[0], tied[1], a)
	checkCredentialList(t, s, 7, store.CredentialSession, session)
	checkCredentialList(t, s, 8, store.CredentialToken, otherUser)
	checkCredentialList(t, s, 8, store.CredentialSession)
}

func testExpiresCredentialsByPublicID(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine := credential("mine", store.CredentialToken, 7, 1)
	theirs := credential("theirs", store.CredentialToken, 8, 2)
	mustPutCredential(t, s, mine)
	mustPutCredential(t, s, theirs)

	// A user cannot expire another user's token by naming its public id,
	// nor a token as a session.
	checkErrIs(t, "ExpireCredential of another user's public id",
		s.ExpireCredential(ctx, 7, store.CredentialToken, theirs.PublicID), store.ErrNotFound)
	checkErrIs(t, "ExpireCredential of a token as a session",
		s.ExpireCredential(ctx, 7, store.CredentialSession, mine.PublicID), store.ErrNotFound)
	checkCredential(t, s, theirs)
	checkCredential(t, s, mine)

	if err := s.ExpireCredential(ctx, 7, store.CredentialToken, mine.PublicID); err != nil {
		t.Fatalf("ExpireCredential: %v", err)
	}
	mine.Expired = true
	checkCredential(t, s, mine) // expired but kept, for the list
	checkCredentialList(t, s, 7, store.CredentialToken, mine)
	// Expiring it again finds it: not an error.
	if err := s.ExpireCredential(ctx, 7, store.CredentialToken, mine.PublicID); err != nil {
		t.Fatalf("ExpireCredential of an expired credential: %v", err)
	}
	checkCredential(t, s, theirs)
}

func testDeletesOneCredential(t *testing.T, s store.Store) {
	ctx := t.Context()
	gone := credential("gone", store.CredentialSession, 7, 1)
	kept := credential("kept", store.CredentialSession, 7, 2)
	mustPutCredential(t, s, gone)
	mustPutCredential(t, s, kept)
	if err := s.DeleteCredential(ctx, gone.Hash); err != nil {
		t.Fatalf("DeleteCredential: %v", err)
	}
	_, err := s.Credential(ctx, gone.Hash)
	checkErrIs(t, "Credential after its deletion", err, store.ErrNotFound)
	checkCredentialList(t, s, 7, store.CredentialSession, kept)
	if err := s.DeleteCredential(ctx, gone.Hash); err != nil {
		t.Fatalf("deleting it again: %v", err)
	}
	// The hash is free again.
	mustPutCredential(t, s, gone)
	checkCredential(t, s, gone)
}

func testDeletesAUsersOtherCredentials(t *testing.T, s store.Store) {
	ctx := t.Context()
	var sessions []store.Credential
	for i, name := range []string{"s1", "s2", "s3", "s4"} {
		sessions = append(sessions, credential(name, store.CredentialSession, 7, i))
		mustPutCredential(t, s, sessions[i])
	}
	token := credential("token", store.CredentialToken, 7, 10)
	otherUser := credential("other user", store.CredentialSession, 8, 11)
	mustPutCredential(t, s, token)
	mustPutCredential(t, s, otherUser)

	// A password change from the session s2 ends the other three.
	n, err := s.DeleteUserCredentials(ctx, 7, store.CredentialSession, sessions[1].Hash)
	if err != nil || n != 3 {
		t.Fatalf("DeleteUserCredentials keeping one of 4 = %d, %v; want 3", n, err)
	}
	checkCredentialList(t, s, 7, store.CredentialSession, sessions[1])
	checkCredentialList(t, s, 7, store.CredentialToken, token)
	checkCredentialList(t, s, 8, store.CredentialSession, otherUser)

	// Keeping another user's hash keeps nothing of this user's.
	n, err = s.DeleteUserCredentials(ctx, 7, store.CredentialSession, otherUser.Hash)
	if err != nil || n != 1 {
		t.Fatalf("DeleteUserCredentials keeping another user's hash = %d, %v; want 1", n, err)
	}
	checkCredentialList(t, s, 7, store.CredentialSession)
	checkCredential(t, s, otherUser)

	// "" keeps none.
	n, err = s.DeleteUserCredentials(ctx, 7, store.CredentialToken, "")
	if err != nil || n != 1 {
		t.Fatalf("DeleteUserCredentials keeping none = %d, %v; want 1", n, err)
	}
	checkCredentialList(t, s, 7, store.CredentialToken)
	checkCredentialList(t, s, 8, store.CredentialSession, otherUser)
}

func testRefusesInvalidCredentialArguments(t *testing.T, s store.Store) {
	ctx := t.Context()
	valid := credential("valid", store.CredentialToken, 7, 1)
	with := func(f func(c *store.Credential)) store.Credential {
		c := valid
		f(&c)
		return c
	}
	for what, c := range map[string]store.Credential{
		"an empty hash":           with(func(c *store.Credential) { c.Hash = "" }),
		"no kind":                 with(func(c *store.Credential) { c.Kind = "" }),
		"an unknown kind":         with(func(c *store.Credential) { c.Kind = "admin" }),
		"user 0":                  with(func(c *store.Credential) { c.UserID = 0 }),
		"a negative user":         with(func(c *store.Credential) { c.UserID = -1 }),
		"a NUL in the hash":       with(func(c *store.Credential) { c.Hash = "ab\x00cd" }),
		"a hash that is not text": with(func(c *store.Credential) { c.Hash = "ab\xffcd" }),
		"a NUL in the public id":  with(func(c *store.Credential) { c.PublicID = "pub\x00" }),
	} {
		checkErrIs(t, "PutCredential with "+what, s.PutCredential(ctx, c), store.ErrInvalid)
	}
	checkCredentialList(t, s, 7, store.CredentialToken) // nothing was stored

	_, err := s.Credential(ctx, "")
	checkErrIs(t, "Credential with an empty hash", err, store.ErrInvalid)
	_, err = s.Credential(ctx, "\xff")
	checkErrIs(t, "Credential with a hash that is not text", err, store.ErrInvalid)
	_, err = s.Credentials(ctx, 0, store.CredentialToken)
	checkErrIs(t, "Credentials of user 0", err, store.ErrInvalid)
	_, err = s.Credentials(ctx, 7, "admin")
	checkErrIs(t, "Credentials of an unknown kind", err, store.ErrInvalid)
	checkErrIs(t, "ExpireCredential of user 0", s.ExpireCredential(ctx, 0, store.CredentialToken, "pub"), store.ErrInvalid)
	checkErrIs(t, "ExpireCredential of an unknown kind", s.ExpireCredential(ctx, 7, "admin", "pub"), store.ErrInvalid)
	checkErrIs(t, "ExpireCredential of an empty public id", s.ExpireCredential(ctx, 7, store.CredentialToken, ""), store.ErrInvalid)
	checkErrIs(t, "DeleteCredential with an empty hash", s.DeleteCredential(ctx, ""), store.ErrInvalid)
	_, err = s.DeleteUserCredentials(ctx, -1, store.CredentialSession, "")
	checkErrIs(t, "DeleteUserCredentials of user -1", err, store.ErrInvalid)
	_, err = s.DeleteUserCredentials(ctx, 7, "", "")
	checkErrIs(t, "DeleteUserCredentials of no kind", err, store.ErrInvalid)
}

func testCredentialsWhenClosed(t *testing.T, s store.Store) {
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx := context.Background()
	c := credential("closed", store.CredentialSession, 7, 1)
	_, errRead := s.Credential(ctx, c.Hash)
	_, errList := s.Credentials(ctx, 7, store.CredentialSession)
	_, errDeleteUser := s.DeleteUserCredentials(ctx, 7, store.CredentialSession, "")
	for what, err := range map[string]error{
		"PutCredential":         s.PutCredential(ctx, c),
		"Credential":            errRead,
		"Credentials":           errList,
		"ExpireCredential":      s.ExpireCredential(ctx, 7, store.CredentialSession, c.PublicID),
		"DeleteCredential":      s.DeleteCredential(ctx, c.Hash),
		"DeleteUserCredentials": errDeleteUser,
	} {
		checkErrIs(t, what+" on a closed store", err, store.ErrClosed)
	}
}
