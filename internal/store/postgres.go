package store

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/go-logr/logr"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// postgresStore is the scale-out backend. It uses pgx's own pool rather
// than database/sql: arrays bind natively (a whole batch of lines is one
// INSERT … SELECT FROM unnest, with no limit on parameters and one round
// trip), statements are prepared and cached per connection, and a pool
// reconnects on its own after PostgreSQL restarts.
type postgresStore struct {
	name   string // host:port/database, never the password
	pool   *pgxpool.Pool
	closed atomic.Bool
	sharedState

	// The line feed: every append that moves a watermark NOTIFYs every
	// replica, this one included; each store's listener
	// (postgres_feed.go) reports what it hears to its watchers, with this
	// store's own lines attached (ownLines).
	feed     *feed
	origin   string          // names this store in its notifications
	listenTo *pgx.ConnConfig // the listener's own connection, outside the pool
	listener listener
	own      ownLines // this store's appended lines, until their notification returns
	tail     recentLines
}

// MigrationLock is the advisory lock (pg_advisory_xact_lock) that
// serialises migrations when several replicas open the same database at
// once; pg_locks shows who holds it.
const MigrationLock = 0x62617374696f6e // "bastion"

func openPostgres(ctx context.Context, dsn string) (Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err) // pgx redacts passwords
	}
	s := &postgresStore{name: fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database),
		feed: newFeed(false), origin: newOrigin(), listenTo: cfg.ConnConfig.Copy()}
	s.sharedState = sharedState{s}
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, s.fail("open", err)
	}
	if err := s.migrate(ctx); err != nil {
		s.pool.Close()
		return nil, err
	}
	return s, nil
}

func (s *postgresStore) migrate(ctx context.Context) error {
	migrated := func() {}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Another replica's migration holds the lock for as long as it
		// takes: the log says why this one waits.
		var free bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, int64(MigrationLock)).Scan(&free); err != nil {
			return s.fail("migrate: lock", err)
		}
		if !free {
			// Who holds it, for an operator who finds the holder dead
			// (pg_terminate_backend). A bigint advisory key is split in
			// pg_locks: its high half in classid, its low half in objid.
			var holder int64
			_ = tx.QueryRow(ctx, `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1
				AND classid::bigint = $1 AND objid::bigint = $2 LIMIT 1`,
				int64(MigrationLock)>>32, int64(MigrationLock)&0xffffffff).Scan(&holder)
			logr.FromContextOrDiscard(ctx).Info("waiting for another replica's migration of the store's schema (PostgreSQL's migration lock)",
				"store", s.name, "holderPID", holder)
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(MigrationLock)); err != nil {
				return s.fail("migrate: lock", err)
			}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return s.fail("create schema_version", err)
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&have); err != nil {
			return s.fail("read schema version", err)
		}
		if err := checkSchemaVersion(have, len(postgresMigrations)); err != nil {
			return s.fail("migrate", err)
		}
		if have == len(postgresMigrations) {
			return nil
		}
		migrated = migrating(ctx, s.name, have, len(postgresMigrations))
		for v := have; v < len(postgresMigrations); v++ {
			if _, err := tx.Exec(ctx, postgresMigrations[v]); err != nil {
				return s.fail(fmt.Sprintf("migration %d", v+1), err)
			}
			if v+1 == linesToChunks {
				if err := postgresLinesToChunks(ctx, tx); err != nil {
					return s.fail(fmt.Sprintf("migration %d", v+1), err)
				}
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM schema_version`); err != nil {
			return s.fail("record schema version", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_version (version) VALUES ($1)`, len(postgresMigrations)); err != nil {
			return s.fail("record schema version", err)
		}
		return nil
	})
	if err == nil {
		migrated() // committed
	}
	return err
}

// fail names the store and the operation. pgx errors carry the server's
// message and SQL state, not bound values, so line contents stay out.
func (s *postgresStore) fail(op string, err error) error {
	return fmt.Errorf("postgres store %s: %s: %w", s.name, op, err)
}

func (s *postgresStore) failTask(op string, t TaskKey, err error) error {
	return s.fail(fmt.Sprintf("%s of task %d/%d", op, t.ProjectID, t.TaskID), err)
}

func (s *postgresStore) check() error {
	if s.closed.Load() {
		return fmt.Errorf("postgres store %s: %w", s.name, ErrClosed)
	}
	return nil
}

func (s *postgresStore) AppendLines(ctx context.Context, task TaskKey, lines []Line) error {
	if err := s.check(); err != nil {
		return err
	}
	sorted, err := prepareLines(lines)
	if err != nil || len(sorted) == 0 {
		return err
	}
	var stored LinesStored // the advance, once the batch moved the watermark
	kept := false
	mark := s.tail.mark()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		before, after, err := s.appendTx(ctx, tx, task, sorted)
		r, ok := advanced(task, before, after, sorted)
		if err != nil || !ok {
			return err
		}
		stored = r
		if s.feed.isLive() {
			// Kept before the commit: its notification may come back
			// before this call returns. It is reported from there
			// (ownLines says why).
			s.own.keep(r)
			kept = true
		}
		return nil
	})
	if err != nil {
		if kept {
			s.own.drop(stored.Task, stored.From, stored.To) // rolled back: no notification
		}
		return s.failTask("append lines", task, err)
	}
	if stored.To > 0 {
		s.tail.add(stored, mark)
	}
	return nil
}

// appendTx stores a sorted batch and returns the task's watermark before
// and after. When the watermark advances, the other replicas are notified
// in the same transaction: PostgreSQL delivers the notification only once
// it commits, and never if it rolls back.
func (s *postgresStore) appendTx(ctx context.Context, tx pgx.Tx, task TaskKey, sorted []Line) (w, next watermark, err error) {
	// The upsert creates the task's row if needed, returns it and locks it
	// until commit, so appends to one task from several replicas (a runner
	// that reconnected to another one) take turns on the watermark.
	err = tx.QueryRow(ctx, `INSERT INTO task_output AS o (project_id, task_id, last_seq, max_seq) VALUES ($1, $2, 0, 0)
		ON CONFLICT (project_id, task_id) DO UPDATE SET last_seq = o.last_seq RETURNING last_seq, max_seq`,
		task.ProjectID, task.TaskID).Scan(&w.last, &w.max)
	if err != nil {
		return w, w, fmt.Errorf("read watermark: %w", err)
	}
	// Lines at or below the watermark are resends, and lines above max_seq
	// are certainly new (the locked row keeps it so until commit). Only
	// those in a pending gap's region are checked against the chunks
	// stored there.
	maybe, fresh := splitBatch(w, sorted)
	if len(maybe) > 0 {
		if maybe, err = unstored(maybe, postgresRanges(ctx, tx, task)); err != nil {
			return w, w, fmt.Errorf("read stored ranges: %w", err)
		}
	}
	if cs := append(makeChunks(maybe), makeChunks(fresh)...); len(cs) > 0 {
		if err := postgresInsertChunks(ctx, tx, task, cs); err != nil {
			return w, w, fmt.Errorf("insert: %w", err)
		}
	}
	next, scanFrom := advanceWatermark(w, sorted)
	if scanFrom > 0 {
		if next.last, err = contiguousFrom(scanFrom, postgresRanges(ctx, tx, task)); err != nil {
			return w, w, fmt.Errorf("find gap: %w", err)
		}
	}
	switch {
	case next == w:
		return w, next, nil
	case next.last == w.last:
		// A gap is pending: nothing new is readable in order yet.
		_, err = tx.Exec(ctx, `UPDATE task_output SET max_seq = $1 WHERE project_id = $2 AND task_id = $3`,
			next.max, task.ProjectID, task.TaskID)
	default:
		// One round trip: the update and the notification.
		payload := notificationPayload(s.origin, LinesStored{Task: task, From: w.last, To: next.last})
		_, err = tx.Exec(ctx, `WITH u AS (UPDATE task_output SET last_seq = $1, max_seq = $2 WHERE project_id = $3 AND task_id = $4)
			SELECT pg_notify('`+feedChannel+`', $5)`, next.last, next.max, task.ProjectID, task.TaskID, payload)
	}
	if err != nil {
		return w, w, fmt.Errorf("update watermark: %w", err)
	}
	return w, next, nil
}

func (s *postgresStore) LastSeq(ctx context.Context, task TaskKey) (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	var last int64
	err := s.pool.QueryRow(ctx, `SELECT last_seq FROM task_output WHERE project_id = $1 AND task_id = $2`,
		task.ProjectID, task.TaskID).Scan(&last)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, s.failTask("read last seq", task, err)
	}
	return last, nil
}

// recent is the store's window of lines while the line feed is live, and
// none otherwise: another replica's delete of a task is heard only
// through the feed's connection (deleteChannel), so while it is down a
// window could hold deleted lines. The window is emptied whenever the
// feed connects again.
func (s *postgresStore) recent() *recentLines {
	if !s.feed.isLive() {
		return nil
	}
	return &s.tail
}

func (s *postgresStore) Lines(ctx context.Context, task TaskKey, offset, limit int) ([]Line, error) {
	return pageLines(ctx, s, task, offset, limit)
}

func (s *postgresStore) StreamLines(ctx context.Context, task TaskKey, fn func(Line) error) error {
	return streamLines(ctx, s, task, fn)
}

func (s *postgresStore) StderrSeqs(ctx context.Context, task TaskKey, fn func([]int64) error) error {
	return stderrSeqs(ctx, s, task, fn)
}

func (s *postgresStore) readChunks(ctx context.Context, task TaskKey, after int64, n int, stderrOnly bool, upTo int64) ([]chunk, error) {
	q := `SELECT first_seq, last_seq, stderr, body FROM task_chunks WHERE project_id = $1 AND task_id = $2 AND last_seq > $3`
	args := []any{task.ProjectID, task.TaskID, after, n}
	if stderrOnly {
		q += ` AND stderr > 0`
	}
	if upTo != noBound {
		q += ` AND last_seq < $5 AND first_seq <= $6`
		args = append(args, upTo+chunkMaxLines, upTo)
	}
	rows, err := s.pool.Query(ctx, q+` ORDER BY last_seq LIMIT $4`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []chunk
	for rows.Next() {
		var c chunk
		var body []byte
		if err := rows.Scan(&c.first, &c.last, &c.stderr, &body); err != nil {
			return nil, err
		}
		c.body = string(body)
		out = append(out, c)
	}
	return out, rows.Err()
}

// postgresInsertChunks stores chunks in one statement: one round trip
// whatever their number.
func postgresInsertChunks(ctx context.Context, tx pgx.Tx, task TaskKey, cs []chunk) error {
	firsts, lasts, stderrs, bodies := make([]int64, len(cs)), make([]int64, len(cs)), make([]int32, len(cs)), make([][]byte, len(cs))
	for i, c := range cs {
		firsts[i], lasts[i], stderrs[i], bodies[i] = c.first, c.last, int32(c.stderr), []byte(c.body)
	}
	_, err := tx.Exec(ctx, `INSERT INTO task_chunks (project_id, task_id, first_seq, last_seq, stderr, body)
		SELECT $1, $2, u.first_seq, u.last_seq, u.stderr, u.body
		FROM unnest($3::bigint[], $4::bigint[], $5::integer[], $6::bytea[]) AS u(first_seq, last_seq, stderr, body)`,
		task.ProjectID, task.TaskID, firsts, lasts, stderrs, bodies)
	return err
}

// postgresRanges reads stored ranges inside an append's transaction.
func postgresRanges(ctx context.Context, tx pgx.Tx, task TaskKey) rangesFrom {
	return func(from int64, n int) ([]seqRange, error) {
		rows, err := tx.Query(ctx, `SELECT first_seq, last_seq FROM task_chunks
			WHERE project_id = $1 AND task_id = $2 AND last_seq >= $3 ORDER BY last_seq LIMIT $4`,
			task.ProjectID, task.TaskID, from, n)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, func(row pgx.CollectableRow) (seqRange, error) {
			var r seqRange
			err := row.Scan(&r.first, &r.last)
			return r, err
		})
	}
}

// postgresLinesToChunks is migration 8's copy (convertLines), in its
// transaction.
func postgresLinesToChunks(ctx context.Context, tx pgx.Tx) error {
	// Replicas of the earlier version may still be appending to task_lines
	// (a rolling upgrade). A line one of them stores after the copy would
	// go with the table while its watermark stayed, acknowledged and lost.
	// The lock waits for their appends under way, which the copy then
	// sees, and holds later ones until the table is gone: they fail, and
	// their runners send the lines again, to a replica that stores chunks.
	if _, err := tx.Exec(ctx, `LOCK TABLE task_lines IN EXCLUSIVE MODE`); err != nil {
		return err
	}
	err := convertLines(func(after taskLine, n int) ([]taskLine, error) {
		rows, err := tx.Query(ctx, `SELECT project_id, task_id, seq, time, output, stream FROM task_lines
			WHERE (project_id, task_id, seq) > ($1, $2, $3) ORDER BY project_id, task_id, seq LIMIT $4`,
			after.task.ProjectID, after.task.TaskID, after.Seq, n)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, func(row pgx.CollectableRow) (taskLine, error) {
			var l taskLine
			var out []byte
			var stream int16
			err := row.Scan(&l.task.ProjectID, &l.task.TaskID, &l.Seq, &l.Time, &out, &stream)
			l.Time, l.Output, l.Stderr = l.Time.UTC(), string(out), stream == 1
			return l, err
		})
	}, func(task TaskKey, cs []chunk) error {
		return postgresInsertChunks(ctx, tx, task, cs)
	})
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, dropTaskLines)
	return err
}

func (s *postgresStore) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.listener.stop()
	s.feed.close()
	s.pool.Close()
	return nil
}
