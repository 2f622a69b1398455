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
	"strings"
	"sync/atomic"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go: the binary is built with CGO_ENABLED=0)
)

// sqliteChunk is how many lines go into one INSERT: 5 parameters each stays
// far below SQLite's limit of 32,766, and one prepared statement for a full
// chunk serves every batch.
const sqliteChunk = 500

// sqliteStore is the embedded backend. SQLite allows one writer at a time,
// so writes go through a pool of exactly one connection: writers queue in
// Go instead of spinning on SQLITE_BUSY, and the full-chunk insert stays
// prepared on that connection. Reads use a separate pool: in WAL mode they
// never wait for the writer.
type sqliteStore struct {
	path   string
	w, r   *sql.DB
	insert *sql.Stmt // a full chunk of lines, prepared on the writer
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
	if s.insert, err = s.w.PrepareContext(ctx, sqliteInsertSQL(sqliteChunk)); err != nil {
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
	for v := have; v < len(sqliteMigrations); v++ {
		if _, err := tx.ExecContext(ctx, sqliteMigrations[v]); err != nil {
			return s.fail(fmt.Sprintf("migration %d", v+1), err)
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
	return nil
}

func sqliteInsertSQL(rows int) string {
	return "INSERT INTO task_lines (project_id, task_id, seq, time, output, stream) VALUES " +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?), ", rows), ", ") +
		" ON CONFLICT DO NOTHING"
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
	// Lines at or below the watermark are resends: skip them here rather
	// than let every one of them hit the primary key.
	maybe, fresh := splitBatch(w, sorted)
	full := tx.StmtContext(ctx, s.insert)
	args := make([]any, 0, 6*sqliteChunk)
	for rest := sorted[len(sorted)-len(maybe)-len(fresh):]; len(rest) > 0; {
		chunk := rest[:min(len(rest), sqliteChunk)]
		rest = rest[len(chunk):]
		args = args[:0]
		for _, l := range chunk {
			args = append(args, task.ProjectID, task.TaskID, l.Seq, micros(l.Time), []byte(l.Output), streamOf(l))
		}
		if len(chunk) == sqliteChunk {
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, sqliteInsertSQL(len(chunk)), args...)
		}
		if err != nil {
			return w, w, fmt.Errorf("insert: %w", err)
		}
	}
	next, scanFrom := advanceWatermark(w, sorted)
	if scanFrom > 0 {
		err := tx.QueryRowContext(ctx, `SELECT a.seq FROM task_lines a
			WHERE a.project_id = ? AND a.task_id = ? AND a.seq >= ? AND NOT EXISTS (
				SELECT 1 FROM task_lines b WHERE b.project_id = a.project_id AND b.task_id = a.task_id AND b.seq = a.seq + 1)
			ORDER BY a.seq LIMIT 1`, task.ProjectID, task.TaskID, scanFrom).Scan(&next.last)
		if err != nil {
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

func (s *sqliteStore) readStderrSeqs(ctx context.Context, task TaskKey, after int64, limit int) ([]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT seq FROM task_lines
		WHERE project_id = ? AND task_id = ? AND seq > ? AND stream = 1 ORDER BY seq LIMIT ?`,
		task.ProjectID, task.TaskID, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanSeqs(rows)
}

// readLines reads up to limit lines after a Seq, skipping skip of them; a
// non-zero budget ends the page early once that many bytes are held.
func (s *sqliteStore) readLines(ctx context.Context, task TaskKey, after int64, skip, limit, budget int) ([]Line, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT seq, time, output, stream FROM task_lines
		WHERE project_id = ? AND task_id = ? AND seq > ? ORDER BY seq LIMIT ? OFFSET ?`,
		task.ProjectID, task.TaskID, after, limit, skip)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	lines := []Line{}
	held := 0
	for rows.Next() {
		var l Line
		var us, stream int64 // int64: database/sql's cheap path (an int16 goes through a string)
		if err := rows.Scan(&l.Seq, &us, &l.Output, &stream); err != nil {
			return nil, err
		}
		l.Time, l.Stderr = fromMicros(us), stream == 1
		lines = append(lines, l)
		if held += len(l.Output); budget > 0 && held >= budget {
			break
		}
	}
	return lines, rows.Err()
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
