package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Reading output in pages keeps memory flat whatever the task printed: a
// page holds at most streamPageLines lines and stops early once it holds
// streamPageBytes, so even 1 MiB lines cost a few MiB per stream.
const (
	streamPageLines = 1000
	streamPageBytes = 4 << 20
)

// prepareLines validates a batch, sorts it by Seq and keeps the first copy
// of a repeated Seq, as the store does with a Seq already stored. Sorting
// here lets advanceWatermark find the new watermark without reading the
// table in the common case.
func prepareLines(lines []Line) ([]Line, error) {
	out := make([]Line, 0, len(lines))
	for _, l := range lines {
		if l.Seq < 1 || l.Seq > MaxSeq {
			return nil, fmt.Errorf("%w: line seq %d (seqs run from 1 to %d)", ErrInvalid, l.Seq, int64(MaxSeq))
		}
		l.Time = l.Time.Truncate(time.Microsecond).UTC()
		out = append(out, l)
	}
	slices.SortStableFunc(out, func(a, b Line) int { return cmpInt64(a.Seq, b.Seq) })
	return slices.CompactFunc(out, func(a, b Line) bool { return a.Seq == b.Seq }), nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// watermark is a task's row in task_output: last is the highest Seq with
// nothing missing below it, max the highest Seq stored at all. last < max
// means a gap is pending.
type watermark struct{ last, max int64 }

// advanceWatermark computes the watermark after a sorted batch is stored.
// Seq last+1 cannot have been stored before (else last would be higher), so
// the watermark moves only if the batch brings last+1, and then through the
// batch's own contiguous run. Only when lines beyond that run were already
// stored (a gap was pending) must the table be searched: scanFrom is then
// non-zero, and the caller asks the table for the first stored Seq ≥
// scanFrom whose successor is missing. In the common case (lines arriving
// in order) that never happens, so appending costs no read of the lines.
func advanceWatermark(w watermark, sorted []Line) (next watermark, scanFrom int64) {
	next = w
	if n := len(sorted); n > 0 && sorted[n-1].Seq > next.max {
		next.max = sorted[n-1].Seq
	}
	for _, l := range sorted {
		if l.Seq <= next.last {
			continue
		}
		if l.Seq != next.last+1 {
			break
		}
		next.last = l.Seq
	}
	if next.last > w.last && w.max > next.last {
		return next, next.last
	}
	return next, 0
}

// splitBatch drops the lines of a sorted batch that are certainly stored
// (Seq ≤ last) and splits the rest into lines that may be stored (a pending
// gap's region, last < Seq ≤ max) and lines that certainly are not (Seq >
// max). The caller holds the task's watermark row, so the split stays true
// until it commits, and the fresh lines need no conflict check.
func splitBatch(w watermark, sorted []Line) (maybe, fresh []Line) {
	i, _ := slices.BinarySearchFunc(sorted, w.last+1, func(l Line, seq int64) int { return cmpInt64(l.Seq, seq) })
	j, _ := slices.BinarySearchFunc(sorted, w.max+1, func(l Line, seq int64) int { return cmpInt64(l.Seq, seq) })
	return sorted[i:j], sorted[j:]
}

// pageStart turns an offset (a count of stored lines) into a Seq to start
// after plus a number of lines to skip. Lines 1..last are all present, so
// an offset inside them is a Seq, and the query seeks the primary key
// instead of counting through offset rows; only the part of an offset
// beyond the watermark (rare: a gap is pending) is skipped with OFFSET.
func pageStart(offset int, last int64) (after int64, skip int) {
	after = min(int64(offset), last)
	return after, offset - int(after)
}

func checkPage(offset, limit int) error {
	if offset < 0 || limit < 1 {
		return fmt.Errorf("%w: offset %d, limit %d (want offset ≥ 0, limit ≥ 1)", ErrInvalid, offset, limit)
	}
	return nil
}

// streamPages feeds fn page after page; fetch returns the lines after a Seq,
// and an empty page ends the stream. Lines appended while streaming are
// included if they come after the current position.
func streamPages(ctx context.Context, fetch func(ctx context.Context, after int64) ([]Line, error), fn func(Line) error) error {
	var after int64
	for {
		page, err := fetch(ctx, after)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		for _, l := range page {
			if err := fn(l); err != nil {
				return err
			}
		}
		after = page[len(page)-1].Seq
	}
}

// cleanText makes summary and event text storable as text on both
// backends: PostgreSQL refuses NUL and invalid UTF-8 in text columns, and
// SQLite would keep them, so both get the same cleaned string.
func cleanText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}

func cleanSummary(s TaskSummary) TaskSummary {
	for _, p := range []*string{&s.Status, &s.Message, &s.Version, &s.CommitHash, &s.CommitMessage,
		&s.UserName, &s.TplType, &s.TplApp, &s.TplAlias, &s.TplPlaybook} {
		*p = cleanText(*p)
	}
	return s
}

func cleanEvent(e Event) Event {
	for _, p := range []*string{&e.ObjectType, &e.ObjectName, &e.ProjectName, &e.Username, &e.Description} {
		*p = cleanText(*p)
	}
	if e.Created.IsZero() {
		e.Created = time.Now()
	}
	e.Created = e.Created.Truncate(time.Microsecond).UTC()
	return e
}

func checkSummary(s TaskSummary) error {
	if s.ProjectID < 1 || s.TaskID < 1 {
		return fmt.Errorf("%w: summary of task %d/%d (ids start at 1)", ErrInvalid, s.ProjectID, s.TaskID)
	}
	return nil
}

// micros and fromMicros carry times through SQLite as integers, at the
// resolution PostgreSQL keeps.
// maxDayOffset bounds TaskCountsByDay's offset: the time zones there are.
const maxDayOffset = 14 * time.Hour

// microsPerDay is a day in the stored unit, for grouping times by day.
const microsPerDay = int64(24 * time.Hour / time.Microsecond)

func checkDayOffset(offset time.Duration) error {
	if offset < -maxDayOffset || offset > maxDayOffset {
		return fmt.Errorf("%w: day offset %v (want within ±14h)", ErrInvalid, offset)
	}
	return nil
}

// dayOf turns a day number (days since 1970-01-01 at the asked offset)
// into that date's midnight UTC.
func dayOf(n int64) time.Time { return time.Unix(n*86400, 0).UTC() }

// scannedRows is what database/sql's rows and pgx's have in common.
type scannedRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanDayCounts reads the rows of either backend's day-count query: the
// day's number, a status, its count.
func scanDayCounts(rows scannedRows) ([]DayCount, error) {
	out := []DayCount{}
	for rows.Next() {
		var day int64
		var c DayCount
		if err := rows.Scan(&day, &c.Status, &c.Count); err != nil {
			return nil, err
		}
		c.Day = dayOf(day)
		out = append(out, c)
	}
	return out, rows.Err()
}

func micros(t time.Time) int64 { return t.Truncate(time.Microsecond).UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func microsPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return micros(*t)
}

func timePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.Truncate(time.Microsecond).UTC()
	return &u
}

// lineReader is what the shared read paths need of a backend.
type lineReader interface {
	check() error
	LastSeq(ctx context.Context, task TaskKey) (int64, error)
	chunkReader
	failTask(op string, t TaskKey, err error) error
	// recent is the window of lines this process stored last.
	recent() *recentLines
}

// pageLines is Lines for every backend.
func pageLines(ctx context.Context, r lineReader, task TaskKey, offset, limit int) ([]Line, error) {
	if err := checkPage(offset, limit); err != nil {
		return nil, err
	}
	// A reader following a running task asks for what this process has
	// just stored. Seq offset+1 is then below the watermark, so the
	// database's page would start at it too, and go on after the window's
	// last line.
	if err := r.check(); err != nil {
		return nil, err
	}
	if lines, ok := r.recent().after(task, int64(offset), limit); ok {
		if len(lines) < limit {
			more, err := readLines(ctx, r, task, lines[len(lines)-1].Seq, 0, limit-len(lines), 0)
			if err != nil {
				return nil, r.failTask("read lines", task, err)
			}
			lines = append(lines, more...)
		}
		return lines, nil
	}
	// The watermark only grows and lines below it stay, so reading it
	// before the page (not in one transaction) is safe.
	last, err := r.LastSeq(ctx, task)
	if err != nil {
		return nil, err
	}
	after, skip := pageStart(offset, last)
	lines, err := readLines(ctx, r, task, after, skip, limit, 0)
	if err != nil {
		return nil, r.failTask("read lines", task, err)
	}
	return lines, nil
}

// streamLines is StreamLines for every backend. It reads pages rather than
// running one long query: a slow reader (a download over a slow link) must
// not hold a connection and a snapshot for the whole download (in
// PostgreSQL that would also keep VACUUM from cleaning up).
func streamLines(ctx context.Context, r lineReader, task TaskKey, fn func(Line) error) error {
	if err := r.check(); err != nil {
		return err
	}
	return streamPages(ctx, func(ctx context.Context, after int64) ([]Line, error) {
		ctx, cancel := pageContext(ctx)
		defer cancel()
		lines, err := readLines(ctx, r, task, after, 0, streamPageLines, streamPageBytes)
		if err != nil {
			return nil, r.failTask("stream lines", task, err)
		}
		return lines, nil
	}, fn)
}

// stderrPage is how many Seqs each read of StderrSeqs brings.
const stderrPage = 10_000

// stderrSeqs is StderrSeqs for every backend, a page at a time like
// streamLines, for the same reason.
func stderrSeqs(ctx context.Context, r lineReader, task TaskKey, fn func([]int64) error) error {
	if err := r.check(); err != nil {
		return err
	}
	for after := int64(0); ; {
		pageCtx, cancel := pageContext(ctx)
		seqs, next, done, err := readStderrSeqs(pageCtx, r, task, after, stderrPage)
		cancel()
		if err != nil {
			return r.failTask("read stderr lines", task, err)
		}
		if len(seqs) > 0 {
			if err := fn(seqs); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
		after = next
	}
}
