package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

func summary(project, id, template int64, status string) store.TaskSummary {
	start := base.Add(time.Duration(id) * time.Minute)
	end := start.Add(90 * time.Second)
	return store.TaskSummary{
		ProjectID: project, TaskID: id, TemplateID: template,
		Status: status, Message: "msg", Version: "1.2.3", CommitHash: "0123abcd", CommitMessage: "Fix the thing\n\nLong body",
		UserName: "admin", TplType: "build", TplApp: "ansible", TplAlias: "Deploy", TplPlaybook: "site.yml",
		UserID: 7, BuildTaskID: 3, ScheduleID: 4, IntegrationID: 5,
		Created: base.Add(time.Duration(id) * time.Second), Start: &start, End: &end,
	}
}

// normalized is a summary as a store returns it: times to the microsecond,
// in UTC.
func normalized(s store.TaskSummary) store.TaskSummary {
	s.Created = s.Created.Truncate(time.Microsecond).UTC()
	for _, p := range []**time.Time{&s.Start, &s.End} {
		if *p != nil {
			t := (*p).Truncate(time.Microsecond).UTC()
			*p = &t
		}
	}
	return s
}

func checkSummary(t testing.TB, got, want store.TaskSummary) {
	t.Helper()
	want = normalized(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("summary:\n got %+v\nwant %+v", got, want)
	}
}

func testUpsertsSummaries(t *testing.T, s store.Store) {
	ctx := t.Context()
	key := store.TaskKey{ProjectID: 1, TaskID: 9}
	_, err := s.TaskSummary(ctx, key)
	checkErrIs(t, "TaskSummary of an unknown task", err, store.ErrNotFound)

	waiting := summary(1, 9, 2, "waiting")
	waiting.Start, waiting.End = nil, nil
	if err := s.PutTaskSummary(ctx, waiting); err != nil {
		t.Fatal(err)
	}
	got, err := s.TaskSummary(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, got, waiting)

	done := summary(1, 9, 2, "success")
	done.CommitMessage = "not utf-8 \xff and nul \x00"
	if err := s.PutTaskSummary(ctx, done); err != nil {
		t.Fatal(err)
	}
	got, err = s.TaskSummary(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	done.CommitMessage = "not utf-8 \uFFFD and nul " // text columns keep text
	checkSummary(t, got, done)
	list, err := s.ListTaskSummaries(ctx, 1, store.SummaryFilter{}, 0, 10)
	if err != nil || len(list) != 1 {
		t.Fatalf("after two puts of one task the list has %d summaries (%v), want 1", len(list), err)
	}
}

func testListsSummaries(t *testing.T, s store.Store) {
	ctx := t.Context()
	// Tasks 1..12 of project 1 alternate between templates 1 and 2 and
	// statuses; project 2 has a task that must never show up.
	statuses := []string{"success", "error", "running"}
	for id := int64(1); id <= 12; id++ {
		if err := s.PutTaskSummary(ctx, summary(1, id, 1+id%2, statuses[id%3])); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutTaskSummary(ctx, summary(2, 100, 1, "success")); err != nil {
		t.Fatal(err)
	}
	ids := func(f store.SummaryFilter, offset, limit int) []int64 {
		t.Helper()
		list, err := s.ListTaskSummaries(ctx, 1, f, offset, limit)
		if err != nil {
			t.Fatalf("ListTaskSummaries(%+v, %d, %d): %v", f, offset, limit, err)
		}
		out := []int64{}
		for _, sum := range list {
			out = append(out, sum.TaskID)
		}
		return out
	}
	for _, c := range []struct {
		f             store.SummaryFilter
		offset, limit int
		want          []int64
	}{
		{store.SummaryFilter{}, 0, 100, []int64{12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}},
		{store.SummaryFilter{}, 0, 5, []int64{12, 11, 10, 9, 8}},
		{store.SummaryFilter{}, 10, 5, []int64{2, 1}},
		{store.SummaryFilter{}, 12, 5, []int64{}},
		{store.SummaryFilter{TemplateID: 1}, 0, 100, []int64{12, 10, 8, 6, 4, 2}},
		{store.SummaryFilter{Status: "error"}, 0, 100, []int64{10, 7, 4, 1}},
		{store.SummaryFilter{TemplateID: 2, Status: "error"}, 0, 100, []int64{7, 1}},
		{store.SummaryFilter{TemplateID: 2, Status: "error"}, 1, 1, []int64{1}},
		{store.SummaryFilter{TemplateID: 3}, 0, 100, []int64{}},
		{store.SummaryFilter{Before: 5}, 0, 100, []int64{4, 3, 2, 1}},
		{store.SummaryFilter{TemplateID: 1, Before: 10}, 0, 2, []int64{8, 6}},
		{store.SummaryFilter{TemplateID: 1, Before: 2}, 0, 2, []int64{}},
	} {
		if got := ids(c.f, c.offset, c.limit); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ListTaskSummaries(%+v, offset %d, limit %d) = %v, want %v", c.f, c.offset, c.limit, got, c.want)
		}
	}
	list, err := s.ListTaskSummaries(ctx, 1, store.SummaryFilter{}, 0, 1)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListTaskSummaries: %v", err)
	}
	checkSummary(t, list[0], summary(1, 12, 1, statuses[0]))
}

// History's chart: tasks per day and status, the days cut at the reader's
// midnight, the first day bounded by since, other projects apart.
func testCountsTasksByDay(t *testing.T, s store.Store) {
	ctx := t.Context()
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	put := func(project, id int64, created time.Time, status string) {
		t.Helper()
		sum := summary(project, id, 1, status)
		sum.Created = created
		if err := s.PutTaskSummary(ctx, sum); err != nil {
			t.Fatal(err)
		}
	}
	put(1, 1, day.Add(-time.Microsecond), "success") // before since
	put(1, 2, day, "success")
	put(1, 3, day.Add(2*time.Hour), "success")
	put(1, 4, day.Add(23*time.Hour), "error") // the 21st at UTC+2
	put(1, 5, day.Add(49*time.Hour), "stopped")
	put(2, 6, day.Add(time.Hour), "error") // another project

	count := func(d int, status string, n int64) store.DayCount {
		return store.DayCount{Day: time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC), Status: status, Count: n}
	}
	for _, c := range []struct {
		offset time.Duration
		want   []store.DayCount
	}{
		{0, []store.DayCount{count(20, "error", 1), count(20, "success", 2), count(22, "stopped", 1)}},
		{2 * time.Hour, []store.DayCount{count(20, "success", 2), count(21, "error", 1), count(22, "stopped", 1)}},
		{-3 * time.Hour, []store.DayCount{count(19, "success", 2), count(20, "error", 1), count(21, "stopped", 1)}},
	} {
		got, err := s.TaskCountsByDay(ctx, 1, day, c.offset)
		if err != nil {
			t.Fatalf("TaskCountsByDay(offset %v): %v", c.offset, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("TaskCountsByDay(offset %v) =\n %v\nwant\n %v", c.offset, got, c.want)
		}
	}
	got, err := s.TaskCountsByDay(ctx, 3, day, 0)
	if err != nil || len(got) != 0 || got == nil {
		t.Errorf("TaskCountsByDay of a project without tasks = %#v, %v; want an empty list", got, err)
	}
	_, err = s.TaskCountsByDay(ctx, 1, day, 15*time.Hour)
	checkErrIs(t, "TaskCountsByDay with an offset beyond 14h", err, store.ErrInvalid)
}

func testDeletesTask(t *testing.T, s store.Store) {
	ctx := t.Context()
	gone, kept := store.TaskKey{ProjectID: 1, TaskID: 1}, store.TaskKey{ProjectID: 1, TaskID: 2}
	for _, k := range []store.TaskKey{gone, kept} {
		mustAppend(t, s, k, lines(1, 50))
		if err := s.PutTaskSummary(ctx, summary(k.ProjectID, k.TaskID, 1, "success")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteTask(ctx, gone); err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, allLines(t, s, gone))
	checkLastSeq(t, s, gone, 0)
	_, err := s.TaskSummary(ctx, gone)
	checkErrIs(t, "TaskSummary of a deleted task", err, store.ErrNotFound)
	checkSeqs(t, allLines(t, s, kept), seqRange(1, 50)...)
	if _, err := s.TaskSummary(ctx, kept); err != nil {
		t.Fatalf("the other task's summary: %v", err)
	}
	if err := s.DeleteTask(ctx, store.TaskKey{ProjectID: 9, TaskID: 9}); err != nil {
		t.Fatalf("deleting an unknown task: %v", err)
	}
	// The watermark went with the lines: the task can start over.
	mustAppend(t, s, gone, lines(1, 2))
	checkLastSeq(t, s, gone, 2)
}

func testListsEvents(t *testing.T, s store.Store) {
	ctx := t.Context()
	add := func(e store.Event) store.Event {
		t.Helper()
		id, err := s.AddEvent(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		e.ID = id
		e.Created = e.Created.Truncate(time.Microsecond).UTC()
		return e
	}
	var all []store.Event
	for i := range 9 {
		all = append(all, add(store.Event{
			ProjectID: int64(1 + i%3), UserID: 7, ObjectID: int64(100 + i), IntegrationID: int64(i % 2),
			ObjectType: "task", ObjectName: "Deploy", ProjectName: "Ops", Username: "admin",
			Description: "Task ID 100 queued for running", Created: base.Add(time.Duration(i) * time.Second),
		}))
	}
	// Events created in the same microsecond come back newest id first.
	tie := add(store.Event{ProjectID: 1, Description: "same time", Created: all[8].Created})
	all = append(all, tie)
	for i := 1; i < len(all); i++ {
		if all[i].ID <= all[i-1].ID {
			t.Fatalf("event ids %d then %d: ids must grow", all[i-1].ID, all[i].ID)
		}
	}
	pick := func(idx ...int) []store.Event {
		out := []store.Event{}
		for _, i := range idx {
			out = append(out, all[i])
		}
		return out
	}
	for _, c := range []struct {
		projects []int64
		limit    int
		want     []store.Event
	}{
		{nil, 100, pick(9, 8, 7, 6, 5, 4, 3, 2, 1, 0)},
		{nil, 3, pick(9, 8, 7)},
		{[]int64{1}, 100, pick(9, 6, 3, 0)},
		{[]int64{2, 3}, 100, pick(8, 7, 5, 4, 2, 1)},
		{[]int64{3}, 1, pick(8)},
		{[]int64{}, 100, pick()},
		{[]int64{42}, 100, pick()},
	} {
		got, err := s.Events(ctx, c.projects, c.limit)
		if err != nil {
			t.Fatalf("Events(%v, %d): %v", c.projects, c.limit, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Events(%v, %d):\n got %+v\nwant %+v", c.projects, c.limit, got, c.want)
		}
	}
	before := time.Now().Add(-time.Second)
	add(store.Event{ProjectID: 5, Description: "no time given"})
	got, err := s.Events(ctx, []int64{5}, 1)
	if err != nil || len(got) != 1 || got[0].Created.Before(before) || got[0].Created.After(time.Now().Add(time.Second)) {
		t.Fatalf("an event without a time should be stamped now: %+v, %v", got, err)
	}
}

func testClosed(t *testing.T, s store.Store) {
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := context.Background()
	_, errSummary := s.TaskSummary(ctx, task)
	_, errList := s.ListTaskSummaries(ctx, 1, store.SummaryFilter{}, 0, 10)
	_, errLast := s.LastSeq(ctx, task)
	_, errLines := s.Lines(ctx, task, 0, 10)
	_, errAdd := s.AddEvent(ctx, store.Event{})
	_, errEvents := s.Events(ctx, nil, 10)
	for what, err := range map[string]error{
		"AppendLines":       s.AppendLines(ctx, task, lines(1, 1)),
		"LastSeq":           errLast,
		"Lines":             errLines,
		"StreamLines":       s.StreamLines(ctx, task, func(store.Line) error { return nil }),
		"PutTaskSummary":    s.PutTaskSummary(ctx, summary(1, 1, 1, "success")),
		"TaskSummary":       errSummary,
		"ListTaskSummaries": errList,
		"DeleteTask":        s.DeleteTask(ctx, task),
		"AddEvent":          errAdd,
		"Events":            errEvents,
	} {
		checkErrIs(t, what+" on a closed store", err, store.ErrClosed)
	}
}
