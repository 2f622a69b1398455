package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/jackc/pgx/v5"
)

func TestMakeChunks_cutsAtCountSizeAndHoles(t *testing.T) {
	var ls []Line
	for seq := int64(1); seq <= 2500; seq++ {
		ls = append(ls, Line{Seq: seq, Output: "x"})
	}
	ls = append(ls, Line{Seq: 2502, Output: "after a hole"})
	ls = append(ls, Line{Seq: 2503, Output: strings.Repeat("y", chunkMaxBytes+1)}) // longer than a chunk: alone
	ls = append(ls, Line{Seq: 2504, Output: strings.Repeat("z", chunkMaxBytes-10)})
	ls = append(ls, Line{Seq: 2505, Output: strings.Repeat("z", 11)}) // would pass the size: next chunk
	var got []seqRange
	for _, c := range makeChunks(ls) {
		got = append(got, seqRange{c.first, c.last})
	}
	want := []seqRange{{1, 1000}, {1001, 2000}, {2001, 2500}, {2502, 2502}, {2503, 2503}, {2504, 2504}, {2505, 2505}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("chunks %v, want %v", got, want)
	}
}

func TestChunk_readsBackEveryLineAfterASeq(t *testing.T) {
	at := time.Date(2026, 11, 27, 8, 0, 0, 123456000, time.UTC)
	run := []Line{
		{Seq: 7, Time: at, Output: "first"},
		{Seq: 8, Time: at.Add(-3 * time.Second), Output: "", Stderr: true}, // time goes back; empty line
		{Seq: 9, Time: at.Add(time.Hour), Output: "nul \x00 and \xff bytes", Stderr: true},
		{Seq: 10, Time: time.UnixMicro(0).UTC(), Output: strings.Repeat("é", 200)},
	}
	c := makeChunks(run)[0]
	if c.stderr != 2 {
		t.Fatalf("stderr count %d, want 2", c.stderr)
	}
	for after := int64(0); after <= 10; after++ {
		var got []Line
		if err := c.eachLine(after, func(l Line) bool { got = append(got, l); return true }); err != nil {
			t.Fatal(err)
		}
		want := run[max(0, min(len(run), int(after)-6)):]
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after %d: %v, want %v", after, got, want)
		}
	}
	top := makeChunks([]Line{{Seq: math.MaxInt64 - 1, Output: "next to last"}, {Seq: math.MaxInt64, Output: "the last Seq there is"}})[0]
	var got []string
	if err := top.eachLine(0, func(l Line) bool { got = append(got, l.Output); return true }); err != nil || len(got) != 2 {
		t.Fatalf("a chunk ending at the highest Seq: %q, %v", got, err)
	}
	n := 0
	if err := c.eachLine(0, func(Line) bool { n++; return n < 2 }); err != nil || n != 2 {
		t.Fatalf("stopped after %d lines (%v), want 2", n, err)
	}
}

// A body that does not decode (a damaged file, a row written by hand) is an
// error naming the chunk, never a panic or a wrong line.
func TestChunk_refusesABodyThatDoesNotDecode(t *testing.T) {
	good := makeChunks([]Line{{Seq: 1, Output: "one"}, {Seq: 2, Output: "two"}})[0]
	for name, c := range map[string]chunk{
		"empty":           {first: 1, last: 2, body: ""},
		"unknown format":  {first: 1, last: 2, body: "\x02" + good.body[1:]},
		"truncated":       {first: 1, last: 2, body: good.body[:len(good.body)-2]},
		"fewer lines":     {first: 1, last: 3, body: good.body},
		"more lines":      {first: 1, last: 1, body: good.body},
		"length past end": {first: 1, last: 1, body: "\x01\x00\xff\x01"},
		"endless varint":  {first: 1, last: 1, body: "\x01" + strings.Repeat("\xff", 20)},
		"range backwards": {first: 2, last: 1, body: good.body},
	} {
		if err := c.eachLine(0, func(Line) bool { return true }); err == nil || !strings.Contains(err.Error(), "does not decode") {
			t.Errorf("%s: %v, want a decoding error", name, err)
		}
	}
}

func FuzzChunk_decodesOrRefuses(f *testing.F) {
	f.Add(makeChunks([]Line{{Seq: 1, Output: "one"}, {Seq: 2, Output: "two", Stderr: true}})[0].body, int64(2))
	f.Add("\x01\x00\x00", int64(1))
	f.Fuzz(func(t *testing.T, body string, n int64) {
		c := chunk{first: 1, last: min(max(n, 1), 1<<20), body: body}
		_ = c.eachLine(0, func(l Line) bool { return true })
	})
}

// lineFixture is what a database held before migration 8: two tasks,
// one with a pending gap, stderr lines, raw bytes, and more lines than the
// migration reads at a time.
func lineFixture() map[TaskKey][]Line {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	big := TaskKey{ProjectID: 1, TaskID: 1}
	gap := TaskKey{ProjectID: 2, TaskID: 1}
	out := map[TaskKey][]Line{}
	for seq := int64(1); seq <= convertLinesPage+2345; seq++ {
		out[big] = append(out[big], Line{Seq: seq, Time: at.Add(time.Duration(seq) * time.Millisecond), Output: fmt.Sprintf("line %d", seq), Stderr: seq%7 == 0})
	}
	for _, seq := range []int64{1, 2, 3, 5, 6} {
		out[gap] = append(out[gap], Line{Seq: seq, Time: at, Output: "raw \x00\xff " + fmt.Sprint(seq), Stderr: seq == 5})
	}
	return out
}

// checkConverted reads every line of the fixture back through the store,
// then appends after it, as a task still running across the upgrade would.
func checkConverted(t *testing.T, s Store, fixture map[TaskKey][]Line, last map[TaskKey]int64) {
	t.Helper()
	for task, want := range fixture {
		var got []Line
		if err := s.StreamLines(t.Context(), task, func(l Line) error { got = append(got, l); return nil }); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("task %v: %d lines after the migration, want the %d before", task, len(got), len(want))
		}
		if page, err := s.Lines(t.Context(), task, 3, 2); err != nil || fmt.Sprint(page) != fmt.Sprint(want[3:5]) {
			t.Fatalf("task %v: Lines(3, 2) = %v, %v; want %v", task, page, err, want[3:5])
		}
		var stderr, wantStderr []int64
		for _, l := range want {
			if l.Stderr {
				wantStderr = append(wantStderr, l.Seq)
			}
		}
		if err := s.StderrSeqs(t.Context(), task, func(seqs []int64) error { stderr = append(stderr, seqs...); return nil }); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(stderr) != fmt.Sprint(wantStderr) {
			t.Fatalf("task %v: stderr Seqs %v, want %v", task, stderr, wantStderr)
		}
		if n, err := s.LastSeq(t.Context(), task); err != nil || n != last[task] {
			t.Fatalf("task %v: LastSeq %d (%v), want %d", task, n, err, last[task])
		}
	}
	gap := TaskKey{ProjectID: 2, TaskID: 1}
	if err := s.AppendLines(t.Context(), gap, []Line{{Seq: 3, Output: "resent"}, {Seq: 4, Output: "fills the gap"}, {Seq: 7, Output: "new"}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Lines(t.Context(), gap, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, l := range got {
		texts = append(texts, fmt.Sprintf("%d %q", l.Seq, l.Output))
	}
	want := `[1 "raw \x00\xff 1" 2 "raw \x00\xff 2" 3 "raw \x00\xff 3" 4 "fills the gap" 5 "raw \x00\xff 5" 6 "raw \x00\xff 6" 7 "new"]`
	if fmt.Sprint(texts) != want {
		t.Fatalf("after appending: %v, want %s", texts, want)
	}
	if n, _ := s.LastSeq(t.Context(), gap); n != 7 {
		t.Fatalf("LastSeq after filling the gap: %d, want 7", n)
	}
}

var fixtureLast = map[TaskKey]int64{{1, 1}: convertLinesPage + 2345, {2, 1}: 3}

func TestSQLite_migrationToChunksKeepsEveryLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // one connection: BEGIN and COMMIT below are one transaction
	ctx := t.Context()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE TABLE schema_version (version INTEGER NOT NULL)`)
	for _, m := range sqliteMigrations[:linesToChunks-1] {
		exec(m)
	}
	exec(`INSERT INTO schema_version (version) VALUES (?)`, linesToChunks-1)
	fixture := lineFixture()
	exec(`BEGIN`)
	for task, ls := range fixture {
		for _, l := range ls {
			exec(`INSERT INTO task_lines (project_id, task_id, seq, time, output, stream) VALUES (?, ?, ?, ?, ?, ?)`,
				task.ProjectID, task.TaskID, l.Seq, micros(l.Time), []byte(l.Output), map[bool]int{true: 1}[l.Stderr])
		}
		exec(`INSERT INTO task_output (project_id, task_id, last_seq, max_seq) VALUES (?, ?, ?, ?)`,
			task.ProjectID, task.TaskID, fixtureLast[task], ls[len(ls)-1].Seq)
	}
	exec(`COMMIT`)
	db.Close()

	s := openMigrating(t, "sqlite://"+path, linesToChunks-1, len(sqliteMigrations))
	checkConverted(t, s, fixture, fixtureLast)
	if err := s.(*sqliteStore).r.QueryRowContext(ctx, `SELECT 1 FROM task_lines`).Scan(new(int)); err == nil || !strings.Contains(err.Error(), "no such table") {
		t.Fatalf("task_lines after the migration: %v, want it dropped", err)
	}
}

// postgresAtVersion7 makes a database as the version before chunks left
// it, and returns its DSN and a connection to it.
func postgresAtVersion7(t *testing.T) (string, *pgx.Conn, func(q string, args ...any)) {
	dsn := PostgresServer(t).NewDatabase(t)
	db, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(t.Context(), q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE TABLE schema_version (version INTEGER NOT NULL)`)
	for _, m := range postgresMigrations[:linesToChunks-1] {
		exec(m)
	}
	exec(`INSERT INTO schema_version (version) VALUES ($1)`, linesToChunks-1)
	return dsn, db, exec
}

func TestPostgres_migrationToChunksKeepsEveryLine(t *testing.T) {
	dsn, db, exec := postgresAtVersion7(t)
	ctx := t.Context()
	fixture := lineFixture()
	for task, ls := range fixture {
		rows := make([][]any, len(ls))
		for i, l := range ls {
			rows[i] = []any{task.ProjectID, task.TaskID, l.Seq, l.Time, []byte(l.Output), int16(map[bool]int{true: 1}[l.Stderr])}
		}
		if _, err := db.CopyFrom(ctx, pgx.Identifier{"task_lines"}, []string{"project_id", "task_id", "seq", "time", "output", "stream"}, pgx.CopyFromRows(rows)); err != nil {
			t.Fatal(err)
		}
		exec(`INSERT INTO task_output (project_id, task_id, last_seq, max_seq) VALUES ($1, $2, $3, $4)`,
			task.ProjectID, task.TaskID, fixtureLast[task], ls[len(ls)-1].Seq)
	}

	s := openMigrating(t, dsn, linesToChunks-1, len(postgresMigrations))
	checkConverted(t, s, fixture, fixtureLast)
	if _, err := db.Exec(ctx, `SELECT 1 FROM task_lines`); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("task_lines after the migration: %v, want it dropped", err)
	}
}

// rangesOver answers rangesFrom from sorted ranges in memory, counting the
// calls and the ranges handed out.
func rangesOver(all []seqRange, calls, rows *int) rangesFrom {
	return func(from int64, n int) ([]seqRange, error) {
		*calls++
		i, _ := slices.BinarySearchFunc(all, from, func(r seqRange, seq int64) int { return cmp.Compare(r.last, seq) })
		page := all[i:min(len(all), i+n)]
		*rows += len(page)
		return page, nil
	}
}

// A runner that stored every other Seq holds a chunk per line. A resend of
// two lines far apart used to read every chunk between them; the watermark
// search read every chunk up to the highest stored Seq. Both now read a
// few: one chunk per line of the batch, and the chunks up to the first
// gap.
func TestScatteredChunks_costAResendAFewLookups(t *testing.T) {
	var all []seqRange
	for seq := int64(2); seq <= 400_000; seq += 2 {
		all = append(all, seqRange{seq, seq})
	}
	var calls, rows int
	got, err := unstored([]Line{{Seq: 2}, {Seq: 3}, {Seq: 399_999}, {Seq: 400_000}, {Seq: 400_001}}, rangesOver(all, &calls, &rows))
	if err != nil || fmt.Sprint(seqsOf(got)) != "[3 399999 400001]" {
		t.Fatalf("unstored = %v, %v; want the odd Seqs", seqsOf(got), err)
	}
	if calls > 5 || rows > 5 {
		t.Fatalf("a resend of 5 lines read %d ranges in %d calls, want at most 5", rows, calls)
	}

	calls, rows = 0, 0
	last, err := contiguousFrom(1, rangesOver(all, &calls, &rows)) // 1 filled: 2 is stored, 3 is not
	if err != nil || last != 2 || rows > chunkRowsPerRead {
		t.Fatalf("contiguousFrom(1) = %d, %v after reading %d ranges; want 2 after one page at most", last, err, rows)
	}
	contiguous := []seqRange{{1, 1000}, {1001, 1001}}
	for seq := int64(1002); seq <= 1200; seq++ {
		contiguous = append(contiguous, seqRange{seq, seq})
	}
	contiguous = append(contiguous, seqRange{1300, 1400})
	calls, rows = 0, 0
	if last, err = contiguousFrom(1000, rangesOver(contiguous, &calls, &rows)); err != nil || last != 1200 {
		t.Fatalf("contiguousFrom(1000) = %d, %v; want 1200, the end of the run before the gap", last, err)
	}
}

func seqsOf(ls []Line) []int64 {
	out := make([]int64, len(ls))
	for i, l := range ls {
		out[i] = l.Seq
	}
	return out
}

// A replica still on the earlier version may be appending while migration
// 8 runs (a rolling upgrade). Its append under way when the migration
// starts must be copied, not dropped with task_lines after its watermark
// was raised: the runner holds an ack for it. The migration locks
// task_lines first, so it waits for that append.
func TestPostgres_migrationToChunksWaitsForAnOldReplicasAppend(t *testing.T) {
	dsn, _, exec := postgresAtVersion7(t)
	ctx := t.Context()
	for seq := 1; seq <= 3; seq++ {
		exec(`INSERT INTO task_lines (project_id, task_id, seq, time, output, stream) VALUES (1, 1, $1, now(), 'line', 0)`, seq)
	}
	exec(`INSERT INTO task_output (project_id, task_id, last_seq, max_seq) VALUES (1, 1, 3, 3)`)
	old, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close(context.Background())
	tx, err := old.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO task_lines (project_id, task_id, seq, time, output, stream) VALUES (1, 1, 4, now(), 'acked', 0)`,
		`UPDATE task_output SET last_seq = 4, max_seq = 4 WHERE project_id = 1 AND task_id = 1`,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	opened := make(chan Store, 1)
	go func() {
		s, err := Open(context.Background(), dsn)
		if err != nil {
			t.Error(err)
		}
		opened <- s
	}()
	// Time for the migration to reach task_lines: it now waits for this
	// append (without its lock, it copied past it). Were it slower, the
	// commit would come first and the copy would see it as well.
	time.Sleep(time.Second)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s := <-opened
	if s == nil {
		t.FailNow()
	}
	defer s.Close()
	key := TaskKey{ProjectID: 1, TaskID: 1}
	last, err := s.LastSeq(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Lines(ctx, key, 0, 10)
	if err != nil || last != 4 || len(got) != 4 || got[3].Output != "acked" {
		t.Fatalf("after the migration: LastSeq %d, %d lines (%v); want 4, the old replica's acknowledged line among them", last, len(got), err)
	}
}

// memChunks is a chunkReader over chunks in memory that counts the chunks
// it hands out.
type memChunks struct {
	all  []chunk
	read int
}

func (m *memChunks) readChunks(_ context.Context, _ TaskKey, after int64, n int, stderrOnly bool, upTo int64) ([]chunk, error) {
	var out []chunk
	for _, c := range m.all {
		bounded := upTo == noBound || c.first <= upTo && c.last < upTo+chunkMaxLines
		if c.last > after && (!stderrOnly || c.stderr > 0) && bounded && len(out) < n {
			out = append(out, c)
		}
	}
	m.read += len(out)
	return out, nil
}

// seqRun is count lines from first on, each of size bytes, in chunks of
// per lines.
func seqRun(first int64, count, per, size int) []chunk {
	var out []chunk
	for i := 0; i < count; i += per {
		run := make([]Line, 0, per)
		for j := i; j < min(i+per, count); j++ {
			run = append(run, Line{Seq: first + int64(j), Output: strings.Repeat("x", size)})
		}
		out = append(out, makeChunks(run)...)
	}
	return out
}

// A page that begins in one-line chunks (a trickle) and ends in chunks of
// a thousand lines (a burst) reads the one big chunk it needs, not as
// many as the doubling read would ask for.
func TestReadLines_aPageFetchesNoChunkBeyondTheSeqsItNeeds(t *testing.T) {
	m := &memChunks{all: append(seqRun(1, 100, 1, 10), seqRun(101, 50_000, 1000, 200)...)}
	lines, err := readLines(t.Context(), m, TaskKey{}, 0, 0, 150, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(lines); len(got) != 150 || got[0] != 1 || got[149] != 150 {
		t.Fatalf("the page holds Seqs %v…, want 1 to 150", got[:min(5, len(got))])
	}
	if m.read > 101 {
		t.Fatalf("the page read %d chunks, want the 100 small ones and one big one", m.read)
	}
}

// A gap in the stored Seqs (lines not stored yet) past the bound of a
// read does not end the page early: the next read, unbounded, finds the
// lines after it.
func TestReadLines_aGapPastTheBoundDoesNotEndThePage(t *testing.T) {
	m := &memChunks{all: append(seqRun(1, 10, 1, 10), seqRun(2001, 3000, 1000, 10)...)}
	lines, err := readLines(t.Context(), m, TaskKey{}, 0, 0, 30, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{}
	for s := int64(1); s <= 10; s++ {
		want = append(want, s)
	}
	for s := int64(2001); s <= 2020; s++ {
		want = append(want, s)
	}
	if got := seqsOf(lines); !slices.Equal(got, want) {
		t.Fatalf("the page holds Seqs %v, want %v", got, want)
	}
	// And with a skip that runs past the gap.
	lines, err = readLines(t.Context(), m, TaskKey{}, 0, 15, 5, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(lines); !slices.Equal(got, []int64{2006, 2007, 2008, 2009, 2010}) {
		t.Fatalf("the page after skipping 15 holds Seqs %v, want 2006 to 2010", got)
	}
}

// A long log with a stderr line in each of its chunks: a page of stderr
// Seqs decodes at most chunkRowsPerRead chunks (each up to 256 KiB), not
// one per Seq wanted, and the pages still give every Seq once.
func TestReadStderrSeqs_decodesABoundedNumberOfChunksAPage(t *testing.T) {
	m := &memChunks{}
	var want []int64
	for first := int64(1); first < 200*10; first += 10 {
		run := make([]Line, 10)
		for i := range run {
			run[i] = Line{Seq: first + int64(i), Output: "x", Stderr: i == 3}
		}
		m.all = append(m.all, makeChunks(run)...)
		want = append(want, first+3)
	}
	var got []int64
	for after, pages := int64(0), 0; ; pages++ {
		m.read = 0
		seqs, next, done, err := readStderrSeqs(t.Context(), m, TaskKey{1, 1}, after, stderrPage)
		if err != nil || m.read > chunkRowsPerRead || pages > 10 {
			t.Fatalf("page %d: %d chunks read (%v), want at most %d", pages, m.read, err, chunkRowsPerRead)
		}
		got = append(got, seqs...)
		if done {
			break
		}
		after = next
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stderr Seqs %v, want %v", got, want)
	}
	// Stopping at the page's limit mid-chunk resumes after the last Seq.
	seqs, next, done, err := readStderrSeqs(t.Context(), m, TaskKey{1, 1}, 0, 3)
	if err != nil || fmt.Sprint(seqs) != "[4 14 24]" || next != 24 || done {
		t.Fatalf("a page of 3: %v, next %d, done %v, %v", seqs, next, done, err)
	}
}

// openMigrating opens a store at schema version from, and checks that its
// log said it migrates, from and to which version, and when it was done.
func openMigrating(t *testing.T, dsn string, from, to int) Store {
	t.Helper()
	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	s, err := Open(logr.NewContext(t.Context(), log), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	want := []string{
		`"msg"="migrating the store's schema; the manager serves once it is done (its probes meanwhile: alive, not ready)"`,
		fmt.Sprintf(`"from"=%d "to"=%d`, from, to),
		`"msg"="migrated the store's schema"`,
	}
	all := strings.Join(logged, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("the log of the migration lacks %s:\n%s", w, all)
		}
	}
	return s
}
