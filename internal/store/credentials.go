package store

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// What both backends share of credentials: validation, normalisation and
// the column list. Errors here name the argument, never its value: a hash
// or public id has no business in a log.

const credentialColumns = "hash, kind, public_id, user_id, created, expires, expired"

// Credentials are listed newest first; among credentials created in the
// same microsecond, the higher hash first, so the order is total.
const credentialOrder = " ORDER BY created DESC, hash DESC"

func checkCredentialKind(kind CredentialKind) error {
	switch kind {
	case CredentialSession, CredentialToken:
		return nil
	}
	return fmt.Errorf("%w: unknown credential kind (want %q or %q)", ErrInvalid, CredentialSession, CredentialToken)
}

func checkCredentialOwner(userID int64, kind CredentialKind) error {
	if userID < 1 {
		return fmt.Errorf("%w: credential of user %d (ids start at 1)", ErrInvalid, userID)
	}
	return checkCredentialKind(kind)
}

// checkCredentialKey refuses an empty key and one that PostgreSQL could not
// store as text. Cleaning it as summary text is cleaned would make two
// distinct keys one, so it is refused instead, alike on both backends.
func checkCredentialKey(what, v string, mayBeEmpty bool) error {
	if v == "" && !mayBeEmpty {
		return fmt.Errorf("%w: empty credential %s", ErrInvalid, what)
	}
	if !utf8.ValidString(v) || strings.Contains(v, "\x00") {
		return fmt.Errorf("%w: credential %s is not valid text", ErrInvalid, what)
	}
	return nil
}

func checkCredential(c Credential) error {
	if err := checkCredentialKey("hash", c.Hash, false); err != nil {
		return err
	}
	if err := checkCredentialKey("public id", c.PublicID, true); err != nil {
		return err
	}
	return checkCredentialOwner(c.UserID, c.Kind)
}

// cleanCredential puts times as the store returns them: UTC, to the
// microsecond; a zero Expires stays zero (never).
func cleanCredential(c Credential) Credential {
	c.Created = c.Created.Truncate(time.Microsecond).UTC()
	if !c.Expires.IsZero() {
		c.Expires = c.Expires.Truncate(time.Microsecond).UTC()
	}
	return c
}

func credentialValues(c Credential, created, expires any) []any {
	return []any{c.Hash, string(c.Kind), c.PublicID, c.UserID, created, expires, c.Expired}
}

func credentialDest(c *Credential, created, expires any) []any {
	return []any{&c.Hash, &c.Kind, &c.PublicID, &c.UserID, created, expires, &c.Expired}
}
