package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

// feedWait bounds how long a test waits for a report that must come.
const feedWait = 30 * time.Second

// Feed is a running WatchLines call whose reports a test reads in order.
type Feed struct {
	reports chan store.LinesStored
	done    chan error
	cancel  context.CancelFunc
}

// Watch starts WatchLines on s and stops it when the test ends.
func Watch(t testing.TB, s store.Store) *Feed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &Feed{reports: make(chan store.LinesStored, 1000), done: make(chan error, 1), cancel: cancel}
	go func() { f.done <- s.WatchLines(ctx, func(r store.LinesStored) { f.reports <- r }) }()
	t.Cleanup(func() { cancel(); <-f.done })
	return f
}

// Next is the next report; it fails the test if none comes in time.
func (f *Feed) Next(t testing.TB) store.LinesStored {
	t.Helper()
	select {
	case r := <-f.reports:
		return r
	case err := <-f.done:
		t.Fatalf("WatchLines returned %v while a report was awaited", err)
	case <-time.After(feedWait):
		t.Fatalf("no line feed report within %s", feedWait)
	}
	return store.LinesStored{}
}

// WaitCatchUp reads reports until a catch-up, which says the feed is live.
func (f *Feed) WaitCatchUp(t testing.TB) {
	t.Helper()
	for !f.Next(t).CatchUp {
	}
}

// checkReport fails unless r reports task's lines from+1..to, carrying
// them when withLines.
func checkReport(t testing.TB, r store.LinesStored, task store.TaskKey, from, to int64, withLines bool) {
	t.Helper()
	if r.CatchUp || r.Task != task || r.From != from || r.To != to {
		t.Fatalf("got report %+v, want task %v lines %d..%d", r, task, from+1, to)
	}
	if !withLines {
		if r.Lines != nil {
			t.Fatalf("report %v %d..%d carries %d lines, want none", task, from+1, to, len(r.Lines))
		}
		return
	}
	checkSeqs(t, r.Lines, seqRange(from+1, to)...)
}

// Every advance of a watermark is reported once, after it is stored, with
// the batch's lines when they cover it; resends and lines beyond a gap are
// not reported, and the gap's filling reports the whole run it joins.
func testFeedReportsEachAdvance(t *testing.T, s store.Store) {
	f := Watch(t, s)
	f.WaitCatchUp(t)
	other := store.TaskKey{ProjectID: 2, TaskID: 1}

	mustAppend(t, s, task, lines(1, 3))
	r := f.Next(t)
	checkReport(t, r, task, 0, 3, true)
	checkSeqs(t, allLines(t, s, task), seqRange(1, 3)...) // reported after commit

	mustAppend(t, s, task, lines(1, 3))            // a resend
	mustAppend(t, s, task, []store.Line{line(5)})  // beyond a gap
	mustAppend(t, s, other, []store.Line{line(1)}) // another task: the next report
	checkReport(t, f.Next(t), other, 0, 1, true)   // nothing came for the two above
	mustAppend(t, s, task, []store.Line{line(4)})  // fills the gap: 4..5
	checkReport(t, f.Next(t), task, 3, 5, false)   // 5 is not in the batch
	mustAppend(t, s, task, []store.Line{line(7), line(6), line(5)})
	checkReport(t, f.Next(t), task, 5, 7, true)
}

// A report carries the lines as stored, never a resend's: a line already
// stored beyond a gap keeps its first text, so a batch that fills the gap
// and repeats that line with other text (a runner's token holder can send
// it) must not put the other text on this replica's hub while every other
// replica, reading the store, shows the stored one.
func testFeedCarriesStoredText(t *testing.T, s store.Store) {
	f := Watch(t, s)
	f.WaitCatchUp(t)
	mustAppend(t, s, task, lines(1, 1))
	checkReport(t, f.Next(t), task, 0, 1, true)
	mustAppend(t, s, task, []store.Line{line(3)}) // beyond a gap: no report
	forged := line(3)
	forged.Output = "not what was stored"
	mustAppend(t, s, task, []store.Line{line(2), forged})
	r := f.Next(t)
	if r.CatchUp || r.Task != task || r.From != 1 || r.To != 3 {
		t.Fatalf("got report %+v, want task %v lines 2..3", r, task)
	}
	for _, l := range r.Lines {
		if l.Seq == 3 && l.Output != line(3).Output {
			t.Fatalf("the report carries line 3 as %q; the store holds %q", l.Output, line(3).Output)
		}
	}
	checkSeqs(t, allLines(t, s, task), seqRange(1, 3)...)
}

// A watcher ends with its context and with the store; a closed store
// refuses new watchers.
func testFeedEnds(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.WatchLines(ctx, func(store.LinesStored) {}) }()
	cancel()
	if err := waitErr(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("WatchLines after its context ended: %v, want context.Canceled", err)
	}

	caughtUp := make(chan struct{}, 1)
	go func() {
		done <- s.WatchLines(t.Context(), func(r store.LinesStored) {
			if r.CatchUp {
				caughtUp <- struct{}{}
			}
		})
	}()
	select {
	case <-caughtUp:
	case err := <-done:
		t.Fatalf("WatchLines returned %v before its catch-up", err)
	case <-time.After(feedWait):
		t.Fatalf("no catch-up within %s", feedWait)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkErrIs(t, "WatchLines when the store closed", waitErr(t, done), store.ErrClosed)
	checkErrIs(t, "WatchLines on a closed store", s.WatchLines(t.Context(), func(store.LinesStored) {}), store.ErrClosed)
}

func waitErr(t testing.TB, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(feedWait):
		t.Fatalf("WatchLines did not return within %s", feedWait)
		return nil
	}
}

// A watcher that is slow to take its reports gets them merged per task,
// never dropped: the advances it missed come in far fewer reports than
// appends, contiguous, each with its lines. (On PostgreSQL a store hears
// its own appends when their notifications return, so the last few may
// come after the watcher is free again.)
func testFeedMergesForASlowWatcher(t *testing.T, s store.Store) {
	hold := make(chan struct{})
	reports := make(chan store.LinesStored, 100)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- s.WatchLines(ctx, func(r store.LinesStored) {
			reports <- r
			if r.Task == task && r.To == 1 {
				<-hold // slow: the next appends queue meanwhile
			}
		})
	}()
	t.Cleanup(func() { cancel(); waitErr(t, done) })
	for r := range reports {
		if r.CatchUp {
			break
		}
	}
	mustAppend(t, s, task, lines(1, 1))
	checkReport(t, <-reports, task, 0, 1, true)
	for seq := int64(2); seq <= 100; seq++ {
		mustAppend(t, s, task, lines(seq, seq))
	}
	close(hold)
	n, at := 0, int64(1)
	for at < 100 {
		var r store.LinesStored
		select {
		case r = <-reports:
		case <-time.After(feedWait):
			t.Fatalf("reports up to %d within %s, want up to 100", at, feedWait)
		}
		checkReport(t, r, task, at, r.To, true)
		at, n = r.To, n+1
	}
	if n > 50 {
		t.Fatalf("99 appends came in %d reports: not merged", n)
	}
	if at != 100 {
		t.Fatalf("reports went up to %d, want 100", at)
	}
}
