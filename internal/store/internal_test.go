package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func seqLines(seqs ...int64) []Line {
	out := make([]Line, len(seqs))
	for i, s := range seqs {
		out[i] = Line{Seq: s}
	}
	return out
}

func TestAdvanceWatermark(t *testing.T) {
	for _, c := range []struct {
		name     string
		w        watermark
		batch    []int64
		want     watermark
		scanFrom int64
	}{
		{"first lines", watermark{0, 0}, []int64{1, 2, 3}, watermark{3, 3}, 0},
		{"in order", watermark{3, 3}, []int64{4, 5}, watermark{5, 5}, 0},
		{"resend only", watermark{5, 5}, []int64{2, 3}, watermark{5, 5}, 0},
		{"resend and new", watermark{5, 5}, []int64{4, 5, 6, 7}, watermark{7, 7}, 0},
		{"opens a gap", watermark{3, 3}, []int64{5, 6}, watermark{3, 6}, 0},
		{"gap inside the batch", watermark{0, 0}, []int64{1, 2, 4}, watermark{2, 4}, 0},
		{"does not fill the gap", watermark{3, 6}, []int64{8}, watermark{3, 8}, 0},
		{"fills the gap: search the table", watermark{3, 6}, []int64{4}, watermark{4, 6}, 4},
		{"fills past what is stored", watermark{3, 6}, []int64{4, 5, 6, 7}, watermark{7, 7}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, scanFrom := advanceWatermark(c.w, seqLines(c.batch...))
			if got != c.want || scanFrom != c.scanFrom {
				t.Fatalf("advanceWatermark(%+v, %v) = %+v, scan from %d; want %+v, scan from %d", c.w, c.batch, got, scanFrom, c.want, c.scanFrom)
			}
		})
	}
}

// A slow watcher's queue holds a bounded number of bytes per task, not only
// of lines: 50,000 lines of 64 KiB (what a runner's token holder can send
// in 4 MiB batches) would be 3 GiB held for one task.
func TestWatcherQueueHoldsBoundedBytes(t *testing.T) {
	w := &watcher{pending: map[TaskKey]*LinesStored{}, wake: make(chan struct{}, 1)}
	task := TaskKey{ProjectID: 1, TaskID: 1}
	big := strings.Repeat("x", 64<<10)
	const perBatch = 64 // one 4 MiB batch of 64 KiB lines
	var seq int64
	for range 2 * maxHeldBytes / (perBatch * len(big)) {
		batch := make([]Line, perBatch)
		for i := range batch {
			seq++
			batch[i] = Line{Seq: seq, Output: big}
		}
		r, _ := advanced(task, watermark{seq - perBatch, seq - perBatch}, watermark{seq, seq}, batch)
		w.push(r)
	}
	got := w.take()
	if len(got) != 1 || got[0].From != 0 || got[0].To != seq {
		t.Fatalf("the queue holds %d reports, want one of lines 1..%d", len(got), seq)
	}
	held := 0
	for _, l := range got[0].Lines {
		held += len(l.Output)
	}
	if held > maxHeldBytes {
		t.Fatalf("the queue held %d bytes of lines for one task, over %d", held, maxHeldBytes)
	}
}

func TestSplitBatch(t *testing.T) {
	maybe, fresh := splitBatch(watermark{3, 6}, seqLines(1, 3, 4, 6, 7, 9))
	if got := [][]Line{maybe, fresh}; !reflect.DeepEqual(got, [][]Line{seqLines(4, 6), seqLines(7, 9)}) {
		t.Fatalf("splitBatch = %v, want [4 6] and [7 9]", got)
	}
}

func TestPrepareLines_sortsAndKeepsTheFirstCopy(t *testing.T) {
	got, err := prepareLines([]Line{{Seq: 3, Output: "a"}, {Seq: 1}, {Seq: 3, Output: "b"}, {Seq: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Seq != 1 || got[2].Seq != 3 || got[2].Output != "a" {
		t.Fatalf("prepareLines = %+v", got)
	}
}

func TestPageStart(t *testing.T) {
	for _, c := range []struct{ offset, last, after, skip int64 }{
		{0, 0, 0, 0}, {5, 10, 5, 0}, {10, 10, 10, 0}, {12, 10, 10, 2}, {3, 0, 0, 3},
	} {
		after, skip := pageStart(int(c.offset), c.last)
		if after != c.after || int64(skip) != c.skip {
			t.Errorf("pageStart(%d, %d) = %d, %d; want %d, %d", c.offset, c.last, after, skip, c.after, c.skip)
		}
	}
}

// The SQLite file is capped with max_page_count, which fails writes with
// SQLITE_FULL exactly as a full disk does.
func TestSQLite_fullDiskFailsTheBatchWithANamedErrorAndNoContents(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "full.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := st.(*sqliteStore)
	key := TaskKey{ProjectID: 4, TaskID: 2}
	if err := s.AppendLines(ctx, key, []Line{{Seq: 1, Output: "fits"}}); err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := s.w.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages+8)); err != nil {
		t.Fatal(err)
	}
	secret := strings.Repeat("password=hunter2 ", 4096)
	err = s.AppendLines(ctx, key, []Line{{Seq: 2, Output: secret}, {Seq: 3, Output: secret}})
	if err == nil {
		t.Fatal("appending 128 KiB to a database capped 32 KiB above its size succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"sqlite store", "full.db", "append lines of task 4/2", "full"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "hunter2") {
		t.Errorf("error carries line contents: %q", msg)
	}
	// The failed batch left nothing behind, and the store still serves.
	if last, err := s.LastSeq(ctx, key); err != nil || last != 1 {
		t.Fatalf("LastSeq after the failed batch = %d, %v; want 1", last, err)
	}
	if lines, err := s.Lines(ctx, key, 0, 10); err != nil || len(lines) != 1 {
		t.Fatalf("Lines after the failed batch = %d lines, %v; want 1", len(lines), err)
	}
}

func TestSQLite_refusesASchemaFromANewerBastion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	st, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.(*sqliteStore).w.Exec("UPDATE schema_version SET version = 99"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Open of a newer schema: %v, want a refusal", err)
	}
}

// A page of huge lines stops at the byte budget instead of holding 1,000.
func TestStreamPagesStopAtTheByteBudget(t *testing.T) {
	big := strings.Repeat("y", 1<<20)
	for name, open := range map[string]func(t *testing.T) Store{
		"sqlite":   func(t *testing.T) Store { return mustOpenInternal(t, filepath.Join(t.TempDir(), "b.db")) },
		"postgres": func(t *testing.T) Store { return mustOpenInternal(t, PostgresServer(t).NewDatabase(t)) },
	} {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			key := TaskKey{ProjectID: 1, TaskID: 1}
			var ls []Line
			for seq := int64(1); seq <= 10; seq++ {
				ls = append(ls, Line{Seq: seq, Output: big})
			}
			if err := s.AppendLines(t.Context(), key, ls); err != nil {
				t.Fatal(err)
			}
			page, err := readLines(t.Context(), s.(chunkReader), key, 0, 0, streamPageLines, streamPageBytes)
			if err != nil || len(page) != streamPageBytes>>20 {
				t.Fatalf("a page of 1 MiB lines held %d lines (%v), want %d", len(page), err, streamPageBytes>>20)
			}
			n := 0
			if err := s.StreamLines(t.Context(), key, func(l Line) error { n++; return nil }); err != nil || n != 10 {
				t.Fatalf("streamed %d lines (%v), want 10", n, err)
			}
		})
	}
}

func mustOpenInternal(t *testing.T, dsn string) Store {
	s, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestCleanText(t *testing.T) {
	if got := cleanText("a\x00b\xffc"); got != "ab\uFFFDc" {
		t.Fatalf("cleanText = %q", got)
	}
	if !errors.Is(checkSummary(TaskSummary{ProjectID: 1}), ErrInvalid) {
		t.Fatal("a summary without a task id was accepted")
	}
}
