package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

func (s *postgresStore) PutCredential(ctx context.Context, c Credential) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := checkCredential(c); err != nil {
		return err
	}
	c = cleanCredential(c)
	var expires any // NULL: never
	if !c.Expires.IsZero() {
		expires = c.Expires
	}
	// DO NOTHING plus the count of inserted rows tells a duplicate hash
	// from a failure without decoding SQL states.
	tag, err := s.pool.Exec(ctx, "INSERT INTO credentials ("+credentialColumns+") VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (hash) DO NOTHING",
		credentialValues(c, c.Created, expires)...)
	if err != nil {
		return s.fail("put credential", err)
	}
	if tag.RowsAffected() == 0 {
		return s.fail(fmt.Sprintf("put %s credential of user %d", c.Kind, c.UserID), ErrConflict)
	}
	return nil
}

// scanPostgresCredential reads a row and puts its times in UTC, as SQLite's
// come back, whatever the session's time zone.
func scanPostgresCredential(row pgx.Row) (Credential, error) {
	var c Credential
	var expires *time.Time
	if err := row.Scan(credentialDest(&c, &c.Created, &expires)...); err != nil {
		return c, err
	}
	c.Created = c.Created.UTC()
	if expires != nil {
		c.Expires = expires.UTC()
	}
	return c, nil
}

func (s *postgresStore) Credential(ctx context.Context, hash string) (Credential, error) {
	if err := s.check(); err != nil {
		return Credential{}, err
	}
	if err := checkCredentialKey("hash", hash, false); err != nil {
		return Credential{}, err
	}
	c, err := scanPostgresCredential(s.pool.QueryRow(ctx, "SELECT "+credentialColumns+" FROM credentials WHERE hash = $1", hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return Credential{}, s.fail("read credential", ErrNotFound)
	}
	if err != nil {
		return Credential{}, s.fail("read credential", err)
	}
	return c, nil
}

func (s *postgresStore) Credentials(ctx context.Context, userID int64, kind CredentialKind) ([]Credential, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := checkCredentialOwner(userID, kind); err != nil {
		return nil, err
	}
	op := fmt.Sprintf("list %s credentials of user %d", kind, userID)
	rows, err := s.pool.Query(ctx, "SELECT "+credentialColumns+" FROM credentials WHERE user_id = $1 AND kind = $2"+credentialOrder,
		userID, string(kind))
	if err != nil {
		return nil, s.fail(op, err)
	}
	defer rows.Close()
	out := []Credential{}
	for rows.Next() {
		c, err := scanPostgresCredential(rows)
		if err != nil {
			return nil, s.fail(op, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(op, err)
	}
	return out, nil
}

func (s *postgresStore) ExpireCredential(ctx context.Context, userID int64, kind CredentialKind, publicID string) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := checkCredentialOwner(userID, kind); err != nil {
		return err
	}
	if err := checkCredentialKey("public id", publicID, false); err != nil {
		return err
	}
	op := fmt.Sprintf("expire %s credential of user %d", kind, userID)
	// PostgreSQL counts the rows the WHERE matched, so expiring an already
	// expired credential finds it and is not an error.
	tag, err := s.pool.Exec(ctx, "UPDATE credentials SET expired = true WHERE user_id = $1 AND kind = $2 AND public_id = $3",
		userID, string(kind), publicID)
	if err != nil {
		return s.fail(op, err)
	}
	if tag.RowsAffected() == 0 {
		return s.fail(op, ErrNotFound)
	}
	return nil
}

func (s *postgresStore) DeleteCredential(ctx context.Context, hash string) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := checkCredentialKey("hash", hash, false); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, "DELETE FROM credentials WHERE hash = $1", hash); err != nil {
		return s.fail("delete credential", err)
	}
	return nil
}

func (s *postgresStore) DeleteUserCredentials(ctx context.Context, userID int64, kind CredentialKind, keep string) (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	if err := checkCredentialOwner(userID, kind); err != nil {
		return 0, err
	}
	if err := checkCredentialKey("hash to keep", keep, true); err != nil {
		return 0, err
	}
	op := fmt.Sprintf("delete %s credentials of user %d", kind, userID)
	// No hash is empty, so keep "" excludes nothing.
	tag, err := s.pool.Exec(ctx, "DELETE FROM credentials WHERE user_id = $1 AND kind = $2 AND hash <> $3", userID, string(kind), keep)
	if err != nil {
		return 0, s.fail(op, err)
	}
	return tag.RowsAffected(), nil
}
