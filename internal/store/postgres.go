package store

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

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

// migrationLock is the advisory lock that serialises migrations when
// several replicas open the same database at once.
const migrationLock = 0x62617374696f6e // "bastion"

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
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return s.fail("migrate: lock", err)
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
		for v := have; v < len(postgresMigrations); v++ {
			if _, err := tx.Exec(ctx, postgresMigrations[v]); err != nil {
				return s.fail(fmt.Sprintf("migration %d", v+1), err)
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
	maybe, fresh := splitBatch(w, sorted)
	if len(maybe) > 0 {
		// Lines in a pending gap's region may be resends: one INSERT of the
		// whole set through unnest, skipping those already stored.
		seqs := make([]int64, len(maybe))
		times := make([]time.Time, len(maybe))
		outputs := make([][]byte, len(maybe))
		streams := make([]int16, len(maybe))
		for i, l := range maybe {
			seqs[i], times[i], outputs[i], streams[i] = l.Seq, l.Time, []byte(l.Output), streamOf(l)
		}
		_, err = tx.Exec(ctx, `INSERT INTO task_lines (project_id, task_id, seq, time, output, stream)
			SELECT $1, $2, u.seq, u.time, u.output, u.stream
			FROM unnest($3::bigint[], $4::timestamptz[], $5::bytea[], $6::smallint[]) AS u(seq, time, output, stream)
			ON CONFLICT DO NOTHING`, task.ProjectID, task.TaskID, seqs, times, outputs, streams)
		if err != nil {
			return w, w, fmt.Errorf("insert: %w", err)
		}
	}
	if len(fresh) > 0 {
		// Lines beyond max_seq cannot be stored yet, and the locked row
		// keeps it so until commit: COPY, the fastest way in, needs no
		// conflict handling. This is the path of every in-order batch.
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"task_lines"}, []string{"project_id", "task_id", "seq", "time", "output", "stream"},
			pgx.CopyFromSlice(len(fresh), func(i int) ([]any, error) {
				return []any{task.ProjectID, task.TaskID, fresh[i].Seq, fresh[i].Time, []byte(fresh[i].Output), streamOf(fresh[i])}, nil
			}))
		if err != nil {
			return w, w, fmt.Errorf("copy: %w", err)
		}
	}
	next, scanFrom := advanceWatermark(w, sorted)
	if scanFrom > 0 {
		err := tx.QueryRow(ctx, `SELECT a.seq FROM task_lines a
			WHERE a.project_id = $1 AND a.task_id = $2 AND a.seq >= $3 AND NOT EXISTS (
				SELECT 1 FROM task_lines b WHERE b.project_id = a.project_id AND b.task_id = a.task_id AND b.seq = a.seq + 1)
			ORDER BY a.seq LIMIT 1`, task.ProjectID, task.TaskID, scanFrom).Scan(&next.last)
		if err != nil {
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

func (s *postgresStore) readStderrSeqs(ctx context.Context, task TaskKey, after int64, limit int) ([]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq FROM task_lines
		WHERE project_id = $1 AND task_id = $2 AND seq > $3 AND stream = 1 ORDER BY seq LIMIT $4`,
		task.ProjectID, task.TaskID, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanSeqs(rows)
}

// readLines reads up to limit lines after a Seq, skipping skip of them; a
// non-zero budget ends the page early once that many bytes are held.
func (s *postgresStore) readLines(ctx context.Context, task TaskKey, after int64, skip, limit, budget int) ([]Line, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, time, output, stream FROM task_lines
		WHERE project_id = $1 AND task_id = $2 AND seq > $3 ORDER BY seq LIMIT $4 OFFSET $5`,
		task.ProjectID, task.TaskID, after, limit, skip)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	lines := []Line{}
	held := 0
	for rows.Next() {
		var l Line
		var out []byte
		var stream int16
		if err := rows.Scan(&l.Seq, &l.Time, &out, &stream); err != nil {
			return nil, err
		}
		l.Time, l.Output, l.Stderr = l.Time.UTC(), string(out), stream == 1
		lines = append(lines, l)
		if held += len(out); budget > 0 && held >= budget {
			break
		}
	}
	rows.Close()
	return lines, rows.Err()
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
