package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

// BenchmarkAppendLines measures AppendLines with batches of 1,000 typical
// ansible lines (about 90 bytes) to one task, and reports lines per second.
func BenchmarkAppendLines(b *testing.B, open Open) {
	const batch = 1000
	s := open(b)
	key := store.TaskKey{ProjectID: 1, TaskID: 1}
	ls := make([]store.Line, batch)
	for i := range ls {
		ls[i] = store.Line{Time: base, Output: fmt.Sprintf("ok: [web-%02d.example.com] => (item=nginx) changed=false attempts=1 elapsed=0.%03ds", i%40, i)}
	}
	var seq int64
	for b.Loop() {
		for i := range ls {
			seq++
			ls[i].Seq = seq
		}
		if err := s.AppendLines(b.Context(), key, ls); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(seq)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkAppendLinesManyTasks measures what many short runs at once
// ask of the store: 200 tasks, each appending batches of one line from its
// own goroutine (a runner's batch at a trickle), as when 200 tasks start
// together (the final-status test of issue #20, P1 of #22). It reports
// batches per second and the slowest append, which a runner waits for
// before it sends its next batch.
func BenchmarkAppendLinesManyTasks(b *testing.B, open Open) {
	const tasks = 200
	s := open(b)
	var (
		mu      sync.Mutex
		slowest time.Duration
		seq     [tasks]int64 // each goroutine of a round owns one entry
		batches int
	)
	for b.Loop() {
		// One round: every task appends one batch, all at once.
		var wg sync.WaitGroup
		for task := range tasks {
			wg.Go(func() {
				seq[task]++
				line := []store.Line{{Seq: seq[task], Time: base, Output: fmt.Sprintf("task %d, line %d", task, seq[task])}}
				start := time.Now()
				if err := s.AppendLines(b.Context(), store.TaskKey{ProjectID: 1, TaskID: int64(task + 1)}, line); err != nil {
					b.Error(err)
				}
				took := time.Since(start)
				mu.Lock()
				slowest, batches = max(slowest, took), batches+1
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	b.ReportMetric(float64(batches)/b.Elapsed().Seconds(), "batches/s")
	b.ReportMetric(float64(slowest.Microseconds())/1000, "slowest-ms")
}

// BenchmarkFollowLines measures what a reader following a running task
// pays per line: after each batch of 1,000 is appended, it reads the batch
// with Lines(offset, 1000), as GET /output?offset= does. "just stored"
// reads the batch appended last, which the store answers from the lines
// it keeps of what it stored (its line feed watched, as the manager
// does: see watchLines); "older" reads a batch 20,000 lines back,
// which comes from the database.
func BenchmarkFollowLines(b *testing.B, open Open) {
	const batch, back = 1000, 20_000
	for _, c := range []struct {
		name string
		lag  int64
	}{{"just stored", 0}, {"older", back}} {
		b.Run(c.name, func(b *testing.B) {
			s := open(b)
			watchLines(b, s)
			key := store.TaskKey{ProjectID: 1, TaskID: 1}
			ls := make([]store.Line, batch)
			var seq int64
			// Every iteration appends a batch, so a long run would grow the
			// log without end (7 GB at -benchtime 2s): past logLines the
			// task is deleted and a new one filled, untimed, as before.
			const logLines = 200_000
			appendBatch := func() {
				for i := range ls {
					seq++
					ls[i] = store.Line{Seq: seq, Time: base, Output: fmt.Sprintf("ok: [web-%02d.example.com] => (item=nginx) changed=false elapsed=0.%03ds", i%40, i)}
				}
				if err := s.AppendLines(b.Context(), key, ls); err != nil {
					b.Fatal(err)
				}
			}
			fill := func() {
				for seq < back {
					appendBatch()
				}
			}
			fill()
			read := 0
			for b.Loop() {
				b.StopTimer()
				if seq >= logLines {
					if err := s.DeleteTask(b.Context(), key); err != nil {
						b.Fatal(err)
					}
					key.TaskID++
					seq = 0
					fill()
				}
				appendBatch()
				b.StartTimer()
				got, err := s.Lines(b.Context(), key, int(seq-batch-c.lag), batch)
				if err != nil || len(got) != batch {
					b.Fatalf("read %d lines (%v), want %d", len(got), err, batch)
				}
				read += len(got)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(read), "ns/line")
		})
	}
}

// watchLines watches the store's line feed until the benchmark ends, as
// the manager's line publisher does, and returns once the feed is live.
// PostgreSQL keeps the lines it just stored only while its feed listens
// (another replica's delete is heard there), so without a watcher every
// read came from the database, unlike in the manager.
func watchLines(b *testing.B, s store.Store) {
	b.Helper()
	ctx, cancel := context.WithCancel(b.Context())
	live := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.WatchLines(ctx, func(r store.LinesStored) {
			if r.CatchUp {
				once.Do(func() { close(live) })
			}
		})
	}()
	b.Cleanup(func() { cancel(); <-done })
	select {
	case <-live:
	case <-time.After(10 * time.Second):
		b.Fatal("the line feed did not turn live within 10 s")
	}
}

// BenchmarkSignIn measures what the sign-in limits cost a failed sign-in:
// one SignInRecord and one SignInAttempt (which counts it, before the
// password is compared), for accounts and addresses that vary as a
// guessing botnet's do.
func BenchmarkSignIn(b *testing.B, open Open) {
	s := open(b)
	n := 0
	for b.Loop() {
		n++
		account, address := fmt.Sprintf("account-%d", n%500), fmt.Sprintf("198.51.100.%d", n%250)
		if _, err := s.SignInRecord(b.Context(), account, address); err != nil {
			b.Fatal(err)
		}
		f := store.SignInWindow{Now: base.Add(time.Duration(n) * time.Millisecond), Window: 15 * time.Minute, MaxGuessers: 256}
		if _, err := s.SignInAttempt(b.Context(), account, address, f, func(store.SignInRecord) bool { return true }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClaimDelivery measures a GitHub delivery's claim of its two keys.
func BenchmarkClaimDelivery(b *testing.B, open Open) {
	s := open(b)
	n := 0
	for b.Loop() {
		n++
		at := base.Add(time.Duration(n) * time.Millisecond)
		keys := []string{fmt.Sprintf("uid/id/%d", n), fmt.Sprintf("uid/body/%d", n)}
		if ok, err := s.ClaimDeliveries(b.Context(), keys, at, at.Add(-24*time.Hour)); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// historyTasks is how many summaries the history benchmarks seed: the
// issue's 100,000 tasks, spread over 90 days and 20 templates.
const historyTasks = 100_000

// seedHistory stores historyTasks summaries of project 1 (and a few of
// project 2, which the reads must skip), created evenly over the 90 days
// before now, in batches of concurrent puts.
func seedHistory(b *testing.B, s store.Store, now time.Time) {
	b.Helper()
	statuses := []string{"success", "success", "success", "error", "stopped"}
	step := 90 * 24 * time.Hour / historyTasks
	ids := make(chan int64)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 { // concurrent puts: PostgreSQL's round trips overlap
		wg.Go(func() {
			for id := range ids {
				project := int64(1)
				if id%1000 == 0 {
					project = 2
				}
				created := now.Add(-time.Duration(historyTasks-id) * step)
				start, end := created.Add(time.Second), created.Add(time.Duration(30+id%90)*time.Second)
				err := s.PutTaskSummary(b.Context(), store.TaskSummary{
					ProjectID: project, TaskID: id, TemplateID: 1 + id%20, Status: statuses[id%5],
					UserName: "admin", TplApp: "ansible", TplAlias: "Deploy", TplPlaybook: "site.yml",
					Created: created, Start: &start, End: &end,
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for id := int64(1); id <= historyTasks; id++ {
		select {
		case ids <- id:
		case err := <-errs:
			b.Fatal(err)
		}
	}
	close(ids)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkHistoryStats measures History's two chart reads with 100,000
// stored task summaries: the 30-day counts by day and status, and a
// template's last 50 runs (its duration trend), both first pages and one
// 1,000 runs deep.
func BenchmarkHistoryStats(b *testing.B, open Open) {
	s := open(b)
	now := time.Now().UTC()
	seedHistory(b, s, now)
	since := now.Add(-30 * 24 * time.Hour)
	b.Run("counts-30-days", func(b *testing.B) {
		for b.Loop() {
			counts, err := s.TaskCountsByDay(b.Context(), 1, since, 2*time.Hour)
			if err != nil || len(counts) < 30 {
				b.Fatalf("TaskCountsByDay: %d rows, %v", len(counts), err)
			}
		}
	})
	b.Run("durations-first-page", func(b *testing.B) {
		for b.Loop() {
			runs, err := s.ListTaskSummaries(b.Context(), 1, store.SummaryFilter{TemplateID: 7}, 0, 50)
			if err != nil || len(runs) != 50 {
				b.Fatalf("ListTaskSummaries: %d runs, %v", len(runs), err)
			}
		}
	})
	b.Run("durations-deep-page", func(b *testing.B) {
		for b.Loop() {
			runs, err := s.ListTaskSummaries(b.Context(), 1, store.SummaryFilter{TemplateID: 7, Before: historyTasks - 20_000}, 0, 50)
			if err != nil || len(runs) != 50 {
				b.Fatalf("ListTaskSummaries: %d runs, %v", len(runs), err)
			}
		}
	})
}
