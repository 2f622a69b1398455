package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

var task = store.TaskKey{ProjectID: 1, TaskID: 1}

func testAppendsAndPagesInOrder(t *testing.T, s store.Store) {
	mustAppend(t, s, task, lines(1, 10))
	mustAppend(t, s, task, lines(11, 25))
	for _, p := range []struct{ offset, limit, from, to int }{
		{0, 10, 1, 10}, {10, 10, 11, 20}, {20, 10, 21, 25}, {25, 10, 0, -1}, {100, 1, 0, -1}, {0, 1000, 1, 25},
	} {
		got, err := s.Lines(t.Context(), task, p.offset, p.limit)
		if err != nil {
			t.Fatalf("Lines(offset %d, limit %d): %v", p.offset, p.limit, err)
		}
		if got == nil {
			t.Fatalf("Lines(offset %d, limit %d) = nil, want an empty slice (it becomes a JSON array)", p.offset, p.limit)
		}
		checkSeqs(t, got, seqRange(int64(p.from), int64(p.to))...)
	}
	checkLastSeq(t, s, task, 25)
}

func testIgnoresResentLines(t *testing.T, s store.Store) {
	mustAppend(t, s, task, lines(1, 5))
	// A runner that lost the ack for 3..5 resends them with 6..8. The first
	// copy wins even if a resend differs, and a Seq repeated inside one
	// batch counts once.
	resend := lines(3, 8)
	for i := range resend[:3] {
		resend[i].Output = "changed"
	}
	resend = append(resend, line(7), line(8), line(6))
	mustAppend(t, s, task, resend)
	mustAppend(t, s, task, lines(1, 8))
	checkSeqs(t, allLines(t, s, task), seqRange(1, 8)...)
	checkLastSeq(t, s, task, 8)
}

func testSortsOutOfOrderBatches(t *testing.T, s store.Store) {
	mustAppend(t, s, task, lines(6, 10))
	mustAppend(t, s, task, []store.Line{line(3), line(1), line(5), line(2), line(4)})
	checkSeqs(t, allLines(t, s, task), seqRange(1, 10)...)
	got, err := s.Lines(t.Context(), task, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, got, seqRange(1, 10)...)
	checkLastSeq(t, s, task, 10)
}

func testLastSeqStopsAtAGap(t *testing.T, s store.Store) {
	checkLastSeq(t, s, task, 0)
	mustAppend(t, s, task, []store.Line{line(1), line(2), line(3), line(5)})
	checkLastSeq(t, s, task, 3)
	mustAppend(t, s, task, lines(7, 9)) // a second gap, at 6
	checkLastSeq(t, s, task, 3)
	mustAppend(t, s, task, []store.Line{line(4)}) // fills the first gap only
	checkLastSeq(t, s, task, 5)
	mustAppend(t, s, task, []store.Line{line(6), line(10)}) // joins the run 7..9 and extends it
	checkLastSeq(t, s, task, 10)
	checkSeqs(t, allLines(t, s, task), seqRange(1, 10)...)
	// A gap at the very start: nothing is contiguous until 1 arrives.
	other := store.TaskKey{ProjectID: 1, TaskID: 2}
	mustAppend(t, s, other, lines(2, 4))
	checkLastSeq(t, s, other, 0)
	mustAppend(t, s, other, lines(1, 1))
	checkLastSeq(t, s, other, 4)
}

func testPagesAcrossAGap(t *testing.T, s store.Store) {
	mustAppend(t, s, task, []store.Line{line(1), line(2), line(3), line(5), line(6), line(9)})
	// The offset counts stored lines, so it does not matter that 4, 7 and
	// 8 are missing.
	for _, p := range []struct {
		offset, limit int
		want          []int64
	}{
		{0, 2, []int64{1, 2}}, {2, 2, []int64{3, 5}}, {3, 10, []int64{5, 6, 9}}, {4, 1, []int64{6}}, {5, 5, []int64{9}}, {6, 5, nil},
	} {
		got, err := s.Lines(t.Context(), task, p.offset, p.limit)
		if err != nil {
			t.Fatalf("Lines(offset %d, limit %d): %v", p.offset, p.limit, err)
		}
		checkSeqs(t, got, p.want...)
	}
}

// A trickle of one-line batches, a gap (lines not stored yet), then a
// burst of thousand-line batches: pages and the stream that cross from
// small chunks into big ones, and over the gap, hold every stored line
// once, in order (reads bound by the Seqs a page needs, chunks.go).
func testPagesATrickleAGapAndABurst(t *testing.T, s store.Store) {
	var want []int64
	for seq := int64(1); seq <= 60; seq++ {
		mustAppend(t, s, task, []store.Line{line(seq)})
		want = append(want, seq)
	}
	for from := int64(2000); from < 5000; from += 1000 {
		mustAppend(t, s, task, lines(from, from+999))
		for seq := from; seq <= from+999; seq++ {
			want = append(want, seq)
		}
	}
	for _, p := range []struct{ offset, limit int }{{0, 150}, {30, 150}, {55, 10}, {59, 1}, {60, 5}, {61, 1500}, {1000, 2500}, {3055, 10}} {
		got, err := s.Lines(t.Context(), task, p.offset, p.limit)
		if err != nil {
			t.Fatalf("Lines(offset %d, limit %d): %v", p.offset, p.limit, err)
		}
		checkSeqs(t, got, want[min(p.offset, len(want)):min(p.offset+p.limit, len(want))]...)
	}
	var streamed []store.Line
	if err := s.StreamLines(t.Context(), task, func(l store.Line) error {
		streamed = append(streamed, l)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, streamed, want...)
}

func testRefusesInvalidArguments(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.AppendLines(ctx, task, nil); err != nil {
		t.Fatalf("AppendLines with no lines: %v", err)
	}
	checkErrIs(t, "AppendLines with seq 0", s.AppendLines(ctx, task, []store.Line{line(1), {Seq: 0}}), store.ErrInvalid)
	checkLastSeq(t, s, task, 0) // the whole batch was refused
	_, err := s.Lines(ctx, task, -1, 10)
	checkErrIs(t, "Lines with offset -1", err, store.ErrInvalid)
	_, err = s.Lines(ctx, task, 0, 0)
	checkErrIs(t, "Lines with limit 0", err, store.ErrInvalid)
	_, err = s.ListTaskSummaries(ctx, 1, store.SummaryFilter{}, 0, -1)
	checkErrIs(t, "ListTaskSummaries with limit -1", err, store.ErrInvalid)
	_, err = s.Events(ctx, nil, 0)
	checkErrIs(t, "Events with limit 0", err, store.ErrInvalid)
	checkErrIs(t, "PutTaskSummary without ids", s.PutTaskSummary(ctx, store.TaskSummary{}), store.ErrInvalid)
}

func testKeepsTasksApart(t *testing.T, s store.Store) {
	// Task ids are per project: project 2's task 1 is another task.
	a, b := store.TaskKey{ProjectID: 1, TaskID: 1}, store.TaskKey{ProjectID: 2, TaskID: 1}
	mustAppend(t, s, a, lines(1, 3))
	mustAppend(t, s, b, lines(1, 5))
	checkSeqs(t, allLines(t, s, a), 1, 2, 3)
	checkSeqs(t, allLines(t, s, b), 1, 2, 3, 4, 5)
	checkLastSeq(t, s, a, 3)
	checkLastSeq(t, s, b, 5)
	checkSeqs(t, allLines(t, s, store.TaskKey{ProjectID: 3, TaskID: 1}))
}

func testStreamsManyLines(t *testing.T, s store.Store) {
	const n, batch = 100_000, 5_000
	pad := strings.Repeat("x", 512)
	text := func(seq int64) string { return fmt.Sprintf("%d %s", seq, pad) }
	for from := int64(1); from <= n; from += batch {
		ls := make([]store.Line, 0, batch)
		for seq := from; seq < from+batch; seq++ {
			ls = append(ls, store.Line{Seq: seq, Time: base, Output: text(seq)})
		}
		mustAppend(t, s, task, ls)
	}
	// About 50 MiB of output. The live heap is sampled after a collection,
	// so garbage does not count: a store that read everything before
	// calling back would show all of it; a paging store shows one page.
	const allowance = 16 << 20
	var ms runtime.MemStats
	liveHeap := func() uint64 { runtime.GC(); runtime.ReadMemStats(&ms); return ms.HeapAlloc }
	baseline := liveHeap()
	peak := baseline
	var count int64
	err := s.StreamLines(t.Context(), task, func(l store.Line) error {
		count++
		if l.Seq != count || l.Output != text(count) {
			return fmt.Errorf("line %d: got seq %d %.20q", count, l.Seq, l.Output)
		}
		if count%10_000 == 0 {
			peak = max(peak, liveHeap())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Fatalf("streamed %d lines, want %d", count, n)
	}
	if grew := int64(peak) - int64(baseline); grew > allowance {
		t.Fatalf("the live heap grew by %d MiB while streaming ~50 MiB of output, want < %d MiB: lines are being held", grew>>20, allowance>>20)
	}
	checkLastSeq(t, s, task, n)
}

func testStopsStreamingOnError(t *testing.T, s store.Store) {
	mustAppend(t, s, task, lines(1, 3000))
	stop := errors.New("client went away")
	calls := 0
	err := s.StreamLines(t.Context(), task, func(l store.Line) error {
		calls++
		if l.Seq == 1500 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 1500 {
		t.Fatalf("StreamLines returned %v after %d calls, want the callback's error after 1500", err, calls)
	}
}

func testConcurrentTasks(t *testing.T, s store.Store) {
	const writers, batches, per = 8, 20, 250
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := store.TaskKey{ProjectID: 1, TaskID: int64(100 + g)}
			for b := range int64(batches) {
				if err := s.AppendLines(t.Context(), key, lines(b*per+1, (b+1)*per)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for g := range writers {
		key := store.TaskKey{ProjectID: 1, TaskID: int64(100 + g)}
		checkSeqs(t, allLines(t, s, key), seqRange(1, batches*per)...)
		checkLastSeq(t, s, key, batches*per)
	}
}

func testConcurrentResends(t *testing.T, s store.Store) {
	// Several connections of one runner (an old one not yet noticed dead,
	// a new one resuming) send overlapping ranges of the same task.
	const writers, n, step, width = 6, 3000, 200, 500
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for from := int64(1 + g*37%step); from <= n; from += step {
				if err := s.AppendLines(t.Context(), task, lines(from, min(from+width, n))); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	mustAppend(t, s, task, lines(1, 10)) // the writers may all have started past 1
	checkSeqs(t, allLines(t, s, task), seqRange(1, n)...)
	checkLastSeq(t, s, task, n)
}

func testRoundTripsContent(t *testing.T, s store.Store) {
	mib := strings.Repeat("0123456789abcdéf🚀", 1<<20/20)
	outputs := []string{
		"héllo wörld", "日本語のテキスト", "emoji 🚀🔥👩‍👩‍👧", "RTL עברית العربية", "combining e\u0301",
		"", " leading and trailing spaces ", "tab\there", "carriage\rreturn", "\x1b[31mred\x1b[0m ansi",
		mib, mib[:len(mib)-1] + "x",
		"not utf-8: \xff\xfe", "nul \x00 byte", `quotes ' " \ and ; DROP TABLE task_lines; --`,
	}
	var in []store.Line
	for i, o := range outputs {
		in = append(in, store.Line{Seq: int64(i + 1), Time: base, Output: o})
	}
	mustAppend(t, s, task, in)
	got := allLines(t, s, task)
	if len(got) != len(outputs) {
		t.Fatalf("got %d lines, want %d", len(got), len(outputs))
	}
	for i, o := range outputs {
		if got[i].Output != o {
			t.Errorf("line %d: got %d bytes %.40q, want %d bytes %.40q", i+1, len(got[i].Output), got[i].Output, len(o), o)
		}
	}
	paged, err := s.Lines(t.Context(), task, 10, 1)
	if err != nil || len(paged) != 1 || paged[0].Output != mib {
		t.Fatalf("Lines(10, 1) did not return the 1 MiB line: %v", err)
	}
}

func testKeepsTimes(t *testing.T, s store.Store) {
	local := time.FixedZone("UTC+5", 5*3600)
	times := []time.Time{base, base.In(local), {}, time.Date(1970, 1, 1, 0, 0, 0, 999, time.UTC), time.Now()}
	var in []store.Line
	for i, tm := range times {
		in = append(in, store.Line{Seq: int64(i + 1), Time: tm, Output: "t"})
	}
	mustAppend(t, s, task, in)
	for i, l := range allLines(t, s, task) {
		want := times[i].Truncate(time.Microsecond)
		if !l.Time.Equal(want) || l.Time.Location() != time.UTC {
			t.Errorf("line %d: time %s, want %s in UTC", l.Seq, l.Time.Format(time.RFC3339Nano), want.UTC().Format(time.RFC3339Nano))
		}
	}
}

// A line's stream (stdout or the program's stderr) comes back as stored,
// through every way in: an in-order batch (PostgreSQL's COPY, SQLite's
// prepared chunk of sqliteChunk rows and its shorter statement) and lines
// filling a gap, resends among them (PostgreSQL's INSERT ... unnest); and
// out through both reads (StreamLines and Lines).
func testKeepsStreams(t *testing.T, s store.Store) {
	stderr := func(seq int64) bool { return seq%3 == 0 }
	flagged := func(from, to int64) []store.Line {
		ls := lines(from, to)
		for i := range ls {
			ls[i].Stderr = stderr(ls[i].Seq)
		}
		return ls
	}
	mustAppend(t, s, task, flagged(1, 700))                                 // in order: a full chunk and a short one
	mustAppend(t, s, task, flagged(705, 710))                               // beyond a gap
	mustAppend(t, s, task, append(flagged(701, 706), flagged(711, 712)...)) // fills it, with resends
	got := allLines(t, s, task)
	if len(got) != 712 {
		t.Fatalf("got %d lines, want 712", len(got))
	}
	for _, l := range got {
		if l.Stderr != stderr(l.Seq) {
			t.Fatalf("line %d: stderr %v, want %v", l.Seq, l.Stderr, stderr(l.Seq))
		}
	}
	var seqs []int64
	if err := s.StderrSeqs(t.Context(), task, func(page []int64) error { seqs = append(seqs, page...); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seqs) != 237 || seqs[0] != 3 || seqs[236] != 711 {
		t.Fatalf("StderrSeqs: %d seqs %v…, want 237 from 3 to 711", len(seqs), seqs[:min(len(seqs), 5)])
	}
	for i, seq := range seqs {
		if i > 0 && seq != seqs[i-1]+3 {
			t.Fatalf("StderrSeqs: %d follows %d", seq, seqs[i-1])
		}
	}
	page, err := s.Lines(t.Context(), task, 700, 3) // seqs 701..703: stdout, stderr, stdout
	if err != nil || len(page) != 3 || page[0].Stderr || !page[1].Stderr || page[2].Stderr {
		t.Fatalf("Lines(700, 3): %+v, %v", page, err)
	}
}

// testPagesFromAnyOffsetAsTheWholeLogReads: Lines(offset, limit) is the
// whole log's lines offset+1..offset+limit, whether the store answers from
// the lines it just stored (its window of recent lines) or from the
// database: in order, across a gap and its filling, resends, a second task,
// stderr lines, and after the task is deleted.
func testPagesFromAnyOffsetAsTheWholeLogReads(t *testing.T, s store.Store) {
	// A live line feed, as the manager always has: PostgreSQL answers from
	// its recent lines only then.
	Watch(t, s).WaitCatchUp(t)
	other := store.TaskKey{ProjectID: 1, TaskID: 2}
	mixed := func(from, to int64) []store.Line {
		ls := lines(from, to)
		for i := range ls {
			ls[i].Stderr = ls[i].Seq%5 == 0
		}
		return ls
	}
	check := func(step string) {
		t.Helper()
		whole := allLines(t, s, task)
		for offset := 0; offset <= len(whole)+1; offset++ {
			for _, limit := range []int{1, 7, 1000} {
				if limit != 7 && offset%61 != 0 && offset != len(whole)-1 {
					continue
				}
				got, err := s.Lines(t.Context(), task, offset, limit)
				if err != nil {
					t.Fatalf("%s: Lines(%d, %d): %v", step, offset, limit, err)
				}
				want := whole[min(offset, len(whole)):min(offset+limit, len(whole))]
				if len(got) != len(want) {
					t.Fatalf("%s: Lines(%d, %d) gave %d lines %v, want %d %v", step, offset, limit, len(got), seqsOf(got), len(want), seqsOf(want))
				}
				for i := range want {
					if got[i].Seq != want[i].Seq || got[i].Output != want[i].Output || !got[i].Time.Equal(want[i].Time) || got[i].Stderr != want[i].Stderr {
						t.Fatalf("%s: Lines(%d, %d)[%d] = %+v, want %+v", step, offset, limit, i, got[i], want[i])
					}
				}
			}
		}
	}
	for from := int64(1); from <= 1500; from += 500 {
		mustAppend(t, s, task, mixed(from, from+499))
		mustAppend(t, s, other, lines(from, from+499))
	}
	check("three batches in order")
	mustAppend(t, s, task, mixed(1503, 1510))
	check("lines past a gap")
	mustAppend(t, s, task, mixed(1501, 1502))
	check("the gap filled")
	mustAppend(t, s, task, mixed(1511, 1700))
	mustAppend(t, s, task, append(mixed(1690, 1720), lines(1650, 1660)...)) // resends, one of them without its stderr flag
	check("resends mixed with new lines")
	if err := s.DeleteTask(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	for _, offset := range []int{0, 10, 1600, 1719} {
		if got, err := s.Lines(t.Context(), task, offset, 100); err != nil || len(got) != 0 {
			t.Fatalf("Lines(%d, 100) of a deleted task gave %v, %v; want nothing", offset, seqsOf(got), err)
		}
	}
	mustAppend(t, s, task, mixed(1, 20))
	check("the deleted task's number started over")
	checkSeqs(t, allLines(t, s, other), seqRange(1, 1500)...)
}

// testMatchesAModel sends batches of random ranges with holes, overlapping
// what is stored in every way, and compares the store with a model after
// each: the first copy of each Seq is kept, LastSeq is the highest Seq with
// none missing below it, and pages at any offset, the stream and the
// stderr Seqs give the stored lines in order. Batches run to 2,500 lines,
// times go back as well as forward, and a few lines are 300 KiB, so that a
// backend's runs of stored lines are cut every way it cuts them (by count,
// by size, at holes).
func testMatchesAModel(t *testing.T, s store.Store) {
	r := rand.New(rand.NewPCG(22, 8))
	const top = 6000
	model := map[int64]store.Line{}
	var next int64 = 1 // where an in-order batch, as a runner sends, starts
	for round := range 40 {
		from, n := 1+r.Int64N(top), 1+r.Int64N(2500)
		if round%3 == 0 {
			from = next
		}
		var batch []store.Line
		for seq := from; seq < from+n && seq <= top; seq++ {
			if round%3 != 0 && r.IntN(8) == 0 {
				continue // a hole
			}
			l := store.Line{Seq: seq, Output: fmt.Sprintf("round %d line %d", round, seq), Stderr: r.IntN(3) == 0,
				Time: base.Add(time.Duration(r.Int64N(2e9)-1e9) * time.Microsecond / 1000).Truncate(time.Microsecond)}
			if r.IntN(1500) == 0 {
				l.Output = strings.Repeat(string(rune('a'+round%26)), 300<<10)
			}
			batch = append(batch, l)
			if _, ok := model[seq]; !ok {
				model[seq] = l
			}
		}
		r.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
		mustAppend(t, s, task, batch)
		for model[next].Seq == next {
			next++
		}

		want := make([]store.Line, 0, len(model))
		var stderr []int64
		for seq := int64(1); seq <= top; seq++ {
			if l, ok := model[seq]; ok {
				want = append(want, l)
				if l.Stderr {
					stderr = append(stderr, seq)
				}
			}
		}
		step := fmt.Sprintf("after round %d (%d lines from %d)", round, len(batch), from)
		checkLastSeq(t, s, task, next-1)
		checkSame(t, step+", streamed", allLines(t, s, task), want)
		for range 5 {
			offset, limit := r.IntN(len(want)+2), []int{1, 7, 1000}[r.IntN(3)]
			got, err := s.Lines(t.Context(), task, offset, limit)
			if err != nil {
				t.Fatalf("%s: Lines(%d, %d): %v", step, offset, limit, err)
			}
			checkSame(t, fmt.Sprintf("%s, Lines(%d, %d)", step, offset, limit), got, want[min(offset, len(want)):min(offset+limit, len(want))])
		}
		var gotStderr []int64
		if err := s.StderrSeqs(t.Context(), task, func(seqs []int64) error { gotStderr = append(gotStderr, seqs...); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gotStderr, stderr) {
			t.Fatalf("%s: StderrSeqs gave %d Seqs, want %d", step, len(gotStderr), len(stderr))
		}
	}
}

// checkSame fails unless got and want hold the same lines in order.
func checkSame(t *testing.T, what string, got, want []store.Line) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d lines, want %d", what, len(got), len(want))
	}
	for i := range want {
		if g, w := got[i], want[i]; g.Seq != w.Seq || g.Output != w.Output || !g.Time.Equal(w.Time) || g.Stderr != w.Stderr {
			t.Fatalf("%s: line %d is seq %d %q %v stderr %v, want seq %d %q %v stderr %v", what, i,
				g.Seq, trim(g.Output), g.Time, g.Stderr, w.Seq, trim(w.Output), w.Time, w.Stderr)
		}
	}
}

func trim(s string) string { return s[:min(len(s), 40)] }

// testOffsetFarPastTheEnd: GET /output?offset= takes any int, and an
// offset near the largest one once made the chunk reader's row count
// overflow: SQLite read for ever (a negative LIMIT is none), PostgreSQL
// failed. Any offset past the stored lines is an empty page, at once,
// with or without a pending gap.
func testOffsetFarPastTheEnd(t *testing.T, s store.Store) {
	mustAppend(t, s, task, append(lines(1, 2), line(5), line(6)))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for _, offset := range []int{4, 1000, math.MaxInt32, math.MaxInt - 1, math.MaxInt} {
		got, err := s.Lines(ctx, task, offset, 1000)
		if err != nil || got == nil || len(got) != 0 {
			t.Fatalf("Lines(%d, 1000) = %d lines, %v; want an empty page", offset, len(got), err)
		}
	}
	// Any limit, past a pending gap (offset 3 skips Seq 5): no overflow.
	if got, err := s.Lines(ctx, task, 3, math.MaxInt); err != nil || len(got) != 1 || got[0].Seq != 6 {
		t.Fatalf("Lines(3, MaxInt) = %v, %v; want Seq 6", seqsOf(got), err)
	}
}
