package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

func (s *sqliteStore) PutCredential(ctx context.Context, c Credential) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := checkCredential(c); err != nil {
		return err
	}
	c = cleanCredential(c)
	var expires any // NULL: never
	if !c.Expires.IsZero() {
		expires = micros(c.Expires)
	}
	// DO NOTHING plus a count of inserted rows tells a duplicate hash from
	// a failure without decoding the driver's error codes.
	res, err := s.w.ExecContext(ctx, "INSERT INTO credentials ("+credentialColumns+") VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING",
		credentialValues(c, micros(c.Created), expires)...)
	if err != nil {
		return s.fail("put credential", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.fail("put credential", err)
	}
	if n == 0 {
		return s.fail(fmt.Sprintf("put %s credential of user %d", c.Kind, c.UserID), ErrConflict)
	}
	return nil
}

// scanSQLiteCredential turns the stored microseconds back into times.
func scanSQLiteCredential(scan func(...any) error) (Credential, error) {
	var c Credential
	var created int64
	var expires sql.NullInt64
	if err := scan(credentialDest(&c, &created, &expires)...); err != nil {
		return c, err
	}
	c.Created = fromMicros(created)
	if expires.Valid {
		c.Expires = fromMicros(expires.Int64)
	}
	return c, nil
}

func (s *sqliteStore) Credential(ctx context.Context, hash string) (Credential, error) {
	if err := s.check(); err != nil {
		return Credential{}, err
	}
	if err := checkCredentialKey("hash", hash, false); err != nil {
		return Credential{}, err
	}
	row := s.r.QueryRowContext(ctx, "SELECT "+credentialColumns+" FROM credentials WHERE hash = ?", hash)
	c, err := scanSQLiteCredential(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return Credential{}, s.fail("read credential", ErrNotFound)
	}
	if err != nil {
		return Credential{}, s.fail("read credential", err)
	}
	return c, nil
}

func (s *sqliteStore) Credentials(ctx context.Context, userID int64, kind CredentialKind) ([]Credential, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := checkCredentialOwner(userID, kind); err != nil {
		return nil, err
	}
	op := fmt.Sprintf("list %s credentials of user %d", kind, userID)
	rows, err := s.r.QueryContext(ctx, "SELECT "+credentialColumns+" FROM credentials WHERE user_id = ? AND kind = ?"+credentialOrder,
		userID, string(kind))
	if err != nil {
		return nil, s.fail(op, err)
	}
	defer rows.Close()
	out := []Credential{}
	for rows.Next() {
		c, err := scanSQLiteCredential(rows.Scan)
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

func (s *sqliteStore) ExpireCredential(ctx context.Context, userID int64, kind CredentialKind, publicID string) error {
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
	// SQLite counts the rows the WHERE matched, so expiring an already
	// expired credential finds it and is not an error.
	res, err := s.w.ExecContext(ctx, "UPDATE credentials SET expired = 1 WHERE user_id = ? AND kind = ? AND public_id = ?",
		userID, string(kind), publicID)
	if err != nil {
		return s.fail(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.fail(op, err)
	}
	if n == 0 {
		return s.fail(op, ErrNotFound)
	}
	return nil
}

func (s *sqliteStore) DeleteCredential(ctx context.Context, hash string) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := checkCredentialKey("hash", hash, false); err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, "DELETE FROM credentials WHERE hash = ?", hash); err != nil {
		return s.fail("delete credential", err)
	}
	return nil
}

func (s *sqliteStore) DeleteUserCredentials(ctx context.Context, userID int64, kind CredentialKind, keep string) (int64, error) {
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
	res, err := s.w.ExecContext(ctx, "DELETE FROM credentials WHERE user_id = ? AND kind = ? AND hash <> ?", userID, string(kind), keep)
	if err != nil {
		return 0, s.fail(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, s.fail(op, err)
	}
	return n, nil
}
