package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// postgresConn runs the shared state's statements on the pool or a
// transaction, turning their ? placeholders into $n.
type postgresConn struct {
	c interface {
		Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	}
}

func (c postgresConn) exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.c.Exec(ctx, dollarPlaceholders(query), args...)
	return tag.RowsAffected(), err
}

func (c postgresConn) queryRow(ctx context.Context, query string, args ...any) func(dest ...any) error {
	return c.c.QueryRow(ctx, dollarPlaceholders(query), args...).Scan
}

// sharedTx runs fn in a transaction; an error from fn rolls it back.
func (s *postgresStore) sharedTx(ctx context.Context, op string, fn func(sharedConn) error) error {
	if err := s.check(); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return fn(postgresConn{tx}) })
	if err != nil && !errors.Is(err, errNotClaimed) {
		return s.fail(op, err)
	}
	return err
}

func (s *postgresStore) sharedReader() sharedConn { return postgresConn{s.pool} }
