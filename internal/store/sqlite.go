package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go: the binary is built with CGO_ENABLED=0)
)

// sqliteStore is the embedded backend. SQLite allows one writer at a time,
// so writes go through a pool of exactly one connection: writers queue in
// Go instead of spinning on SQLITE_BUSY, and the chunk insert stays
// prepared on that connection. Reads use a separate pool: in WAL mode they
// never wait for the writer.
type sqliteStore struct {
	path   string
	w, r   *sql.DB
	insert *sql.Stmt // a chunk, prepared on the writer
	feed   *feed     // in-process: one manager owns an SQLite file
	tail   recentLines
	closed atomic.Bool
	sharedState
}

func openSQLite(ctx context.Context, path string) (Store, error) {
	if path == "" {
		return nil, fmt.Errorf("sqlite store: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	s := &sqliteStore{path: abs, feed: newFeed(true)}
	s.sharedState = sharedState{s}
	// Output can hold a secret the runner failed to mask: only the
	// manager's user may read the file. SQLite gives the -wal and -shm
	// files the database file's mode, so creating it 0600 covers all three.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, s.fail("create", err)
	}
	f.Close()
	// synchronous=FULL: a commit is on disk before AppendLines returns, and
	// the manager acknowledges lines to the runner only then, so a power
	// loss cannot lose acknowledged lines. Batching keeps that to one fsync
	// per batch. busy_timeout covers a second process (a backup, sqlite3
	// on the command line) holding the file.
	s.w, err = s.openPool("_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)&_txlock=immediate", 1)
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		s.w.Close()
		return nil, err
	}
	if s.insert, err = s.w.PrepareContext(ctx, sqliteInsertChunk); err != nil {
		s.w.Close()
		return nil, s.fail("prepare insert", err)
	}
	if s.r, err = s.openPool("_pragma=busy_timeout(10000)&_pragma=query_only(1)", max(4, runtime.GOMAXPROCS(0))); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *sqliteStore) openPool(params string, conns int) (*sql.DB, error) {
	// A file: URI with an escaped path, so that a '?' or '#' in a directory
	// name is a name and not the start of the parameters.
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: s.path}).EscapedPath()+"?"+params)
	if err != nil {
		return nil, s.fail("open", err)
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxIdleTime(0)
	return db, nil
}

func (s *sqliteStore) migrate(ctx context.Context) error {
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return s.fail("create schema_version", err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("migrate", err)
	}
	defer tx.Rollback()
	var have int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&have); err != nil {
		return s.fail("read schema version", err)
	}
	if err := checkSchemaVersion(have, len(sqliteMigrations)); err != nil {
		return s.fail("migrate", err)
	}
	if have == len(sqliteMigrations) {
		return nil
	}
	done := migrating(ctx, s.path, have, len(sqliteMigrations))
	for v := have; v < len(sqliteMigrations); v++ {
		if _, err := tx.ExecContext(ctx, sqliteMigrations[v]); err != nil {
			return s.fail(fmt.Sprintf("migration %d", v+1), err)
		}
		if v+1 == linesToChunks {
			if err := sqliteLinesToChunks(ctx, tx); err != nil {
				return s.fail(fmt.Sprintf("migration %d", v+1), err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM schema_version`); err != nil {
		return s.fail("record schema version", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (?)`, len(sqliteMigrations)); err != nil {
		return s.fail("record schema version", err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail("migrate", err)
	}
	done()
	return nil
}

const sqliteInsertChunk = `INSERT INTO task_chunks (project_id, task_id, first_seq, last_seq, stderr, body) VALUES (?, ?, ?, ?, ?, ?)`

// sqliteLinesToChunks is migration 8's copy (convertLines), in its
// transaction.
func sqliteLinesToChunks(ctx context.Context, tx *sql.Tx) error {
	err := convertLines(func(after taskLine, n int) ([]taskLine, error) {
		rows, err := tx.QueryContext(ctx, `SELECT project_id, task_id, seq, time, output, stream FROM task_lines
			WHERE (project_id, task_id, seq) > (?, ?, ?) ORDER BY project_id, task_id, seq LIMIT ?`,
			after.task.ProjectID, after.task.TaskID, after.Seq, n)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []taskLine
		for rows.Next() {
			var l taskLine
			var us, stream int64
			if err := rows.Scan(&l.task.ProjectID, &l.task.TaskID, &l.Seq, &us, &l.Output, &stream); err != nil {
				return nil, err
			}
			l.Time, l.Stderr = fromMicros(us), stream == 1
			out = append(out, l)
		}
		return out, rows.Err()
	}, func(task TaskKey, cs []chunk) error {
		for _, c := range cs {
			if _, err := tx.ExecContext(ctx, sqliteInsertChunk, sqliteChunkValues(task, c)...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, dropTaskLines)
	return err
}

// sqliteChunkValues binds a chunk's row; the body as []byte, so that
// SQLite stores a BLOB and not text.
func sqliteChunkValues(task TaskKey, c chunk) []any {
	return []any{task.ProjectID, task.TaskID, c.first, c.last, c.stderr, []byte(c.body)}
}

// fail names the store and the operation. Line contents never reach an
// error: the driver's messages carry codes and SQL, not bound values.
func (s *sqliteStore) fail(op string, err error) error {
	return fmt.Errorf("sqlite store %s: %s: %w", s.path, op, err)
}

func (s *sqliteStore) failTask(op string, t TaskKey, err error) error {
	return s.fail(fmt.Sprintf("%s of task %d/%d", op, t.ProjectID, t.TaskID), err)
}

func (s *sqliteStore) check() error {
	if s.closed.Load() {
		return fmt.Errorf("sqlite store %s: %w", s.path, ErrClosed)
	}
	return nil
}

func (s *sqliteStore) AppendLines(ctx context.Context, task TaskKey, lines []Line) error {
	if err := s.check(); err != nil {
		return err
	}
	sorted, err := prepareLines(lines)
	if err != nil || len(sorted) == 0 {
		return err
	}
	mark := s.tail.mark()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.failTask("append lines", task, err)
	}
	defer tx.Rollback()
	before, after, err := s.appendTx(ctx, tx, task, sorted)
	if err != nil {
		return s.failTask("append lines", task, err)
	}
	if err := tx.Commit(); err != nil {
		return s.failTask("append lines: commit", task, err)
	}
	if r, ok := advanced(task, before, after, sorted); ok {
		s.tail.add(r, mark)
		s.feed.publish(r)
	}
	return nil
}

// appendTx stores a sorted batch and returns the task's watermark before
// and after.
func (s *sqliteStore) appendTx(ctx context.Context, tx *sql.Tx, task TaskKey, sorted []Line) (w, next watermark, err error) {
	// The upsert creates the task's row if needed and returns it in one step.
	err = tx.QueryRowContext(ctx, `INSERT INTO task_output (project_id, task_id, last_seq, max_seq) VALUES (?, ?, 0, 0)
		ON CONFLICT (project_id, task_id) DO UPDATE SET last_seq = last_seq RETURNING last_seq, max_seq`,
		task.ProjectID, task.TaskID).Scan(&w.last, &w.max)
	if err != nil {
		return w, w, fmt.Errorf("read watermark: %w", err)
	}
	// Lines at or below the watermark are resends, and lines above max_seq
	// are certainly new. Only those in a pending gap's region are checked
	// against the chunks stored there.
	maybe, fresh := splitBatch(w, sorted)
	if len(maybe) > 0 {
		if maybe, err = unstored(maybe, sqliteRanges(ctx, tx, task)); err != nil {
			return w, w, fmt.Errorf("read stored ranges: %w", err)
		}
	}
	insert := tx.StmtContext(ctx, s.insert)
	for _, part := range [][]Line{maybe, fresh} {
		for _, c := range makeChunks(part) {
			if _, err := insert.ExecContext(ctx, sqliteChunkValues(task, c)...); err != nil {
				return w, w, fmt.Errorf("insert: %w", err)
			}
		}
	}
	next, scanFrom := advanceWatermark(w, sorted)
	if scanFrom > 0 {
		if next.last, err = contiguousFrom(scanFrom, sqliteRanges(ctx, tx, task)); err != nil {
			return w, w, fmt.Errorf("find gap: %w", err)
		}
	}
	if next == w {
		return w, next, nil
	}
	_, err = tx.ExecContext(ctx, `UPDATE task_output SET last_seq = ?, max_seq = ? WHERE project_id = ? AND task_id = ?`,
		next.last, next.max, task.ProjectID, task.TaskID)
	if err != nil {
		return w, w, fmt.Errorf("update watermark: %w", err)
	}
	return w, next, nil
}

func (s *sqliteStore) LastSeq(ctx context.Context, task TaskKey) (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	var last int64
	err := s.r.QueryRowContext(ctx, `SELECT last_seq FROM task_output WHERE project_id = ? AND task_id = ?`,
		task.ProjectID, task.TaskID).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, s.failTask("read last seq", task, err)
	}
	return last, nil
}

func (s *sqliteStore) recent() *recentLines { return &s.tail }

func (s *sqliteStore) Lines(ctx context.Context, task TaskKey, offset, limit int) ([]Line, error) {
	return pageLines(ctx, s, task, offset, limit)
}

func (s *sqliteStore) StreamLines(ctx context.Context, task TaskKey, fn func(Line) error) error {
	return streamLines(ctx, s, task, fn)
}

func (s *sqliteStore) StderrSeqs(ctx context.Context, task TaskKey, fn func([]int64) error) error {
	return stderrSeqs(ctx, s, task, fn)
}

func (s *sqliteStore) readChunks(ctx context.Context, task TaskKey, after int64, n int, stderrOnly bool, upTo int64) ([]chunk, error) {
	q := `SELECT first_seq, last_seq, stderr, body FROM task_chunks WHERE project_id = ? AND task_id = ? AND last_seq > ?`
	args := []any{task.ProjectID, task.TaskID, after}
	if stderrOnly {
		q += ` AND stderr > 0`
	}
	if upTo != noBound {
		q += ` AND last_seq < ? AND first_seq <= ?`
		args = append(args, upTo+chunkMaxLines, upTo)
	}
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY last_seq LIMIT ?`, append(args, n)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []chunk
	for rows.Next() {
		var c chunk
		if err := rows.Scan(&c.first, &c.last, &c.stderr, &c.body); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// sqliteRanges reads stored ranges inside an append's transaction.
func sqliteRanges(ctx context.Context, tx *sql.Tx, task TaskKey) rangesFrom {
	return func(from int64, n int) ([]seqRange, error) {
		rows, err := tx.QueryContext(ctx, `SELECT first_seq, last_seq FROM task_chunks
			WHERE project_id = ? AND task_id = ? AND last_seq >= ? ORDER BY last_seq LIMIT ?`,
			task.ProjectID, task.TaskID, from, n)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []seqRange
		for rows.Next() {
			var r seqRange
			if err := rows.Scan(&r.first, &r.last); err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, rows.Err()
	}
}

func (s *sqliteStore) WatchLines(ctx context.Context, fn func(LinesStored)) error {
	if err := s.check(); err != nil {
		return err
	}
	err := s.feed.watch(ctx, fn)
	if errors.Is(err, ErrClosed) {
		return s.check() // the same error, naming the store
	}
	return err
}

func (s *sqliteStore) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.feed.close()
	var errs []error
	if s.insert != nil {
		errs = append(errs, s.insert.Close())
	}
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	errs = append(errs, s.w.Close())
	if err := errors.Join(errs...); err != nil {
		return s.fail("close", err)
	}
	return nil
}
