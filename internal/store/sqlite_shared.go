package store

import (
	"context"
	"database/sql"
	"errors"
)

// sqliteConn runs the shared state's statements on a pool or a transaction.
type sqliteConn struct {
	c interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	}
}

func (c sqliteConn) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.c.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c sqliteConn) queryRow(ctx context.Context, query string, args ...any) func(dest ...any) error {
	return c.c.QueryRowContext(ctx, query, args...).Scan
}

// sharedTx runs fn in a write transaction; an error from fn rolls it back.
func (s *sqliteStore) sharedTx(ctx context.Context, op string, fn func(sharedConn) error) error {
	if err := s.check(); err != nil {
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(op, err)
	}
	defer tx.Rollback()
	if err := fn(sqliteConn{tx}); err != nil {
		if errors.Is(err, errNotClaimed) {
			return err
		}
		return s.fail(op, err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail(op, err)
	}
	return nil
}

func (s *sqliteStore) sharedReader() sharedConn { return sqliteConn{s.r} }
