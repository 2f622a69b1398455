package store

import (
	"math"
	"strings"
	"testing"
)

func recentReport(task TaskKey, from, to int64, text string) LinesStored {
	r := LinesStored{Task: task, From: from, To: to}
	for seq := from + 1; seq <= to; seq++ {
		r.Lines = append(r.Lines, Line{Seq: seq, Output: text})
	}
	return r
}

func checkWindow(t *testing.T, r *recentLines, task TaskKey, first, last int64) {
	t.Helper()
	if first > last {
		if _, ok := r.after(task, 0, 1); ok {
			t.Fatalf("task %v still has a window", task)
		}
		if r.tasks[task] != nil {
			t.Fatalf("task %v is still held", task)
		}
		return
	}
	if _, ok := r.after(task, first-2, 1); ok {
		t.Fatalf("the window of %v answers for Seq %d, before its first line %d", task, first-1, first)
	}
	got, ok := r.after(task, first-1, int(last-first+10))
	if !ok || len(got) != int(last-first+1) || got[0].Seq != first || got[len(got)-1].Seq != last {
		t.Fatalf("the window of %v holds %d lines %v…, want %d..%d", task, len(got), got[:min(len(got), 1)], first, last)
	}
	if _, ok := r.after(task, last, 1); ok {
		t.Fatalf("the window of %v answers past its last line %d", task, last)
	}
}

func TestRecentLines_growsOnlyFromItsLastLineAndStartsAfreshOtherwise(t *testing.T) {
	var r recentLines
	a, b := TaskKey{ProjectID: 1, TaskID: 1}, TaskKey{ProjectID: 1, TaskID: 2}
	r.add(recentReport(a, 0, 100, "x"), r.mark())
	r.add(recentReport(a, 100, 150, "x"), r.mark())
	checkWindow(t, &r, a, 1, 150)
	// Lines another replica stored, or a gap filled: the report has no
	// lines, and the window, no longer the task's latest, goes.
	r.add(LinesStored{Task: a, From: 150, To: 160}, r.mark())
	checkWindow(t, &r, a, 1, 0)
	r.add(recentReport(a, 160, 170, "x"), r.mark())
	checkWindow(t, &r, a, 161, 170)
	// A report that does not continue the window replaces it.
	r.add(recentReport(a, 200, 210, "x"), r.mark())
	checkWindow(t, &r, a, 201, 210)
	// A report whose lines do not fill its range is not kept.
	short := recentReport(a, 210, 220, "x")
	short.Lines = short.Lines[:5]
	r.add(short, r.mark())
	checkWindow(t, &r, a, 1, 0)
	r.add(recentReport(b, 0, 3, "y"), r.mark())
	r.deleted(b)
	checkWindow(t, &r, b, 1, 0)
	if r.held != 0 {
		t.Errorf("%d bytes counted with no window left", r.held)
	}
}

func TestRecentLines_boundsItsLinesBytesAndTasks(t *testing.T) {
	var r recentLines
	a := TaskKey{ProjectID: 1, TaskID: 1}
	for from := int64(0); from < 20_000; from += 1000 {
		r.add(recentReport(a, from, from+1000, "x"), r.mark())
	}
	checkWindow(t, &r, a, 20_000-recentMaxLines+1, 20_000)

	// Long lines: a task keeps at most recentMaxTaskBytes of them.
	long := strings.Repeat("L", 1<<20)
	r.add(recentReport(a, 20_000, 20_010, long), r.mark())
	checkWindow(t, &r, a, int64(20_010-recentMaxTaskBytes/lineCost(Line{Output: long})+1), 20_010)
	if r.tasks[a].held > recentMaxTaskBytes {
		t.Fatalf("the task holds %d bytes, over %d", r.tasks[a].held, recentMaxTaskBytes)
	}

	// All tasks together keep at most recentMaxBytes, dropping the tasks
	// added to least recently; and at most recentMaxTasks tasks.
	for id := int64(2); id <= 20; id++ {
		r.add(recentReport(TaskKey{ProjectID: 1, TaskID: id}, 0, 3, long), r.mark())
	}
	if r.held > recentMaxBytes {
		t.Fatalf("%d bytes held, over %d", r.held, recentMaxBytes)
	}
	checkWindow(t, &r, a, 1, 0)
	checkWindow(t, &r, TaskKey{ProjectID: 1, TaskID: 20}, 1, 3)
	for id := int64(100); id < 100+2*recentMaxTasks; id++ {
		r.add(recentReport(TaskKey{ProjectID: 2, TaskID: id}, 0, 1, "x"), r.mark())
	}
	if len(r.tasks) != recentMaxTasks {
		t.Fatalf("%d tasks held, want %d", len(r.tasks), recentMaxTasks)
	}
	checkWindow(t, &r, TaskKey{ProjectID: 2, TaskID: 100 + 2*recentMaxTasks - 1}, 1, 1)
	checkWindow(t, &r, TaskKey{ProjectID: 2, TaskID: 100}, 1, 0)
	held := 0
	for _, w := range r.tasks {
		for _, l := range w.lines {
			held += lineCost(l)
		}
	}
	if held != r.held {
		t.Fatalf("the count of bytes held is %d, the lines hold %d", r.held, held)
	}
}

// TestRecentLines_answersAnyLimit: a limit far past the window, up to
// the largest int, gives the window's lines from the offset on.
func TestRecentLines_answersAnyLimit(t *testing.T) {
	var r recentLines
	a := TaskKey{ProjectID: 1, TaskID: 1}
	r.add(recentReport(a, 0, 10, "x"), r.mark())
	for _, limit := range []int{1, 9, 10, 1 << 40, math.MaxInt} {
		got, ok := r.after(a, 1, limit)
		if want := min(limit, 9); !ok || len(got) != want || got[0].Seq != 2 {
			t.Fatalf("after(1, %d) gave %d lines (%v), want %d from Seq 2", limit, len(got), ok, want)
		}
	}
	var none *recentLines // a store whose window is not trusted
	if _, ok := none.after(a, 1, 1); ok {
		t.Fatal("no window answered")
	}
}

func TestRecentLines_aReadersLinesAreItsOwn(t *testing.T) {
	var r recentLines
	a := TaskKey{ProjectID: 1, TaskID: 1}
	r.add(recentReport(a, 0, 10, "before"), r.mark())
	got, _ := r.after(a, 0, 10)
	for from := int64(10); from < 3*recentMaxLines; from += 10 {
		r.add(recentReport(a, from, from+10, "after"), r.mark())
	}
	for _, l := range got {
		if l.Output != "before" {
			t.Fatalf("a line handed out earlier now reads %q", l.Output)
		}
	}
}

// TestRecentLines_aDeleteBetweenAnAppendsCommitAndItsAddWins: an append
// that committed before a delete of any task finished, and adds its lines
// only after, adds nothing; one that begins after the delete does.
func TestRecentLines_aDeleteBetweenAnAppendsCommitAndItsAddWins(t *testing.T) {
	var r recentLines
	a, b := TaskKey{ProjectID: 1, TaskID: 1}, TaskKey{ProjectID: 1, TaskID: 2}
	r.add(recentReport(a, 0, 10, "x"), r.mark())
	mark := r.mark() // the next append of a begins
	r.deleted(a)     // a delete of a ends before that append's add
	r.add(recentReport(a, 10, 20, "x"), mark)
	checkWindow(t, &r, a, 1, 0)
	mark = r.mark()
	r.deleted(b) // a delete of another task: the add is skipped all the same
	r.add(recentReport(a, 0, 5, "y"), mark)
	checkWindow(t, &r, a, 1, 0)
	r.add(recentReport(a, 0, 5, "y"), r.mark())
	checkWindow(t, &r, a, 1, 5)
}
