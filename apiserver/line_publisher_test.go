package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/hub"
	"github.com/bastion-dev/bastion/internal/store"
)

// The publisher's rules, report by report, over a real SQLite store: it
// delivers from its own last line whatever the report's range says, takes
// the batch a report carries without reading it, ignores what it delivered
// already (an echo), reads what it missed, follows a new task from its
// first report, and ignores a task for good once its last catch-up ran.
// (The feed itself, and the publisher across PostgreSQL replicas, are
// tested in internal/store and in ha_live_test.go.)
func TestLinePublisher_deliversEachLineOnceFromItsOwnLastLine(t *testing.T) {
	st, p, sub := newTestPublisher(t)
	ctx := context.Background()
	task, other := store.TaskKey{ProjectID: 1, TaskID: 1}, store.TaskKey{ProjectID: 1, TaskID: 2}
	appendLines := func(key store.TaskKey, from, to int64) []store.Line {
		t.Helper()
		var ls []store.Line
		for seq := from; seq <= to; seq++ {
			ls = append(ls, store.Line{Seq: seq, Time: time.Unix(seq, 0).UTC(), Output: fmt.Sprintf("%d/%d", key.TaskID, seq)})
		}
		if err := st.AppendLines(ctx, key, ls); err != nil {
			t.Fatal(err)
		}
		return ls
	}

	batch := appendLines(task, 1, 3)
	p.report(ctx, store.LinesStored{Task: task, From: 0, To: 3, Lines: batch})
	p.report(ctx, store.LinesStored{Task: task, From: 0, To: 3}) // the same advance, heard again
	appendLines(task, 4, 6)
	p.report(ctx, store.LinesStored{Task: task, From: 5, To: 6}) // 3..5 was missed: read from 3
	appendLines(other, 1, 12)
	p.report(ctx, store.LinesStored{Task: other, From: 10, To: 12}) // first heard of at 10
	appendLines(task, 7, 8)
	p.report(ctx, store.LinesStored{CatchUp: true}) // after a reconnect: 7..8
	appendLines(task, 9, 9)
	p.finish(ctx, task)                                          // its last catch-up: 9
	p.report(ctx, store.LinesStored{Task: task, From: 8, To: 9}) // late: ignored
	checkPublished(t, sub, "1/1", "1/2", "1/3", "1/4", "1/5", "1/6", "2/11", "2/12", "1/7", "1/8", "1/9")
	if _, followed := p.following()[task]; followed {
		t.Error("an ended task is still followed")
	}
}

// A busy replica's feed runs behind its Task informer: a task can be seen
// ended before the first report of its lines reaches the publisher. That
// report still delivers the task's lines (all that the store holds after
// its From, since nothing comes after the end), and the task is then
// ignored like any other that ended.
func TestLinePublisher_aTaskSeenEndedBeforeItsFirstReportStillGetsItsLines(t *testing.T) {
	st, p, sub := newTestPublisher(t)
	ctx := context.Background()
	task := store.TaskKey{ProjectID: 1, TaskID: 7}
	var batch []store.Line
	for seq := int64(1); seq <= 5; seq++ {
		batch = append(batch, store.Line{Seq: seq, Time: time.Unix(seq, 0).UTC(), Output: fmt.Sprintf("7/%d", seq)})
	}
	if err := st.AppendLines(ctx, task, batch); err != nil {
		t.Fatal(err)
	}
	p.finish(ctx, task)                                                            // the informer first
	p.report(ctx, store.LinesStored{Task: task, From: 0, To: 3, Lines: batch[:3]}) // then the feed: 1..3, and 4..5 read
	p.report(ctx, store.LinesStored{Task: task, From: 3, To: 5})                   // late: ignored
	checkPublished(t, sub, "7/1", "7/2", "7/3", "7/4", "7/5")
	if _, followed := p.following()[task]; followed {
		t.Error("a task that ended early is still followed after its lines went out")
	}
}

// newTestPublisher is a publisher over a fresh SQLite store, with a
// subscriber of every message of its hub.
func newTestPublisher(t *testing.T) (store.Store, *linePublisher, *hub.Subscription) {
	t.Helper()
	st, err := store.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "pub.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := hub.New()
	t.Cleanup(h.Close)
	sub := h.Subscribe(hub.All, 1000)
	return st, &linePublisher{store: st, hub: h, log: logAPI(), tasks: map[store.TaskKey]*followed{}}, sub
}

// checkPublished fails unless the hub's messages are exactly the log
// lines want ("task/seq"), in order.
func checkPublished(t *testing.T, sub *hub.Subscription, want ...string) {
	t.Helper()
	msgs, err := sub.Take(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		var frame struct {
			Output string `json:"output"`
		}
		if err := json.Unmarshal(m.Frame, &frame); err != nil {
			t.Fatal(err)
		}
		got = append(got, frame.Output)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("published %v, want %v", got, want)
	}
}

// Any role that may connect to the database can NOTIFY on the feed's
// channel (PostgreSQL grants CONNECT to PUBLIC by default, and NOTIFY
// needs no privilege), so a report heard from another process is checked
// against the store before a task is followed: a forged range far ahead
// must not silence the task's live output on every replica, and a forged
// task must not be followed (and read at every catch-up) for ever.
func TestLinePublisher_aForgedReportNeitherSilencesATaskNorIsFollowed(t *testing.T) {
	st, p, sub := newTestPublisher(t)
	ctx := context.Background()
	task, forged := store.TaskKey{ProjectID: 1, TaskID: 1}, store.TaskKey{ProjectID: 9, TaskID: 9}
	appendLines := func(from, to int64) {
		t.Helper()
		var ls []store.Line
		for seq := from; seq <= to; seq++ {
			ls = append(ls, store.Line{Seq: seq, Time: time.Unix(seq, 0).UTC(), Output: fmt.Sprintf("1/%d", seq)})
		}
		if err := st.AppendLines(ctx, task, ls); err != nil {
			t.Fatal(err)
		}
	}

	appendLines(1, 3) // stored before this replica heard of the task
	p.report(ctx, store.LinesStored{Task: task, From: 1 << 60, To: 1<<60 + 1})
	p.report(ctx, store.LinesStored{Task: forged, From: 0, To: 1 << 60})
	appendLines(4, 5)
	p.report(ctx, store.LinesStored{Task: task, From: 3, To: 5})
	checkPublished(t, sub, "1/4", "1/5")
	if _, followed := p.following()[forged]; followed {
		t.Error("a task that has no lines is followed after a forged report")
	}
}

// hangingStore is a store whose reads of lines wait until their context
// ends, as over a connection to a PostgreSQL that stopped answering
// without closing it (a network partition).
type hangingStore struct{ store.Store }

func (hangingStore) Lines(ctx context.Context, _ store.TaskKey, _, _ int) ([]store.Line, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A read of the store that hangs must not hold the publisher for ever:
// the feed's reports of every task, and (through a task's last catch-up)
// the update frames of every task, wait on it. It fails after a bound and
// is tried again.
func TestLinePublisher_aHangingReadEndsAndIsTriedAgain(t *testing.T) {
	st, p, _ := newTestPublisher(t)
	p.store = hangingStore{st}
	defer func(was time.Duration) { readTimeout = was }(readTimeout)
	readTimeout = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	task := store.TaskKey{ProjectID: 1, TaskID: 1}
	if err := st.AppendLines(ctx, task, []store.Line{{Seq: 1, Time: time.Unix(1, 0).UTC(), Output: "1/1"}}); err != nil {
		t.Fatal(err)
	}
	returned := make(chan struct{})
	go func() { defer close(returned); p.report(ctx, store.LinesStored{Task: task, From: 0, To: 1}) }()
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		t.Fatal("the publisher still waits on a read that hangs")
	}
	f := p.following()[task]
	if f == nil {
		t.Fatal("the task whose read failed is not followed")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.failing || !f.retry {
		t.Fatalf("after a read that timed out: failing %v, read again scheduled %v; want both", f.failing, f.retry)
	}
}

// How long one task's 50,000-line batch (what a runner may send in one
// 4 MiB request) holds the publisher's single goroutine, and so every
// other task's live output on the replica: taken from the report (the
// replica that stored it) and read back from the store (every other).
func BenchmarkLinePublisher_50000LineBatch(b *testing.B) {
	st, err := store.Open(b.Context(), "sqlite://"+filepath.Join(b.TempDir(), "pub.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	h := hub.New()
	b.Cleanup(h.Close)
	sub := h.Subscribe(hub.All, 100_000)
	const n = 50_000
	batch := make([]store.Line, n)
	for i := range batch {
		batch[i] = store.Line{Seq: int64(i + 1), Time: time.Unix(int64(i), 0).UTC(), Output: "ok: [web1] => some ansible output"}
	}
	ctx := context.Background()
	for _, how := range []string{"carried", "read"} {
		b.Run(how, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				key := store.TaskKey{ProjectID: 1, TaskID: int64(i + 1)}
				if how == "read" {
					b.StopTimer()
					if err := st.AppendLines(ctx, key, batch); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				p := &linePublisher{store: st, hub: h, log: logAPI(), tasks: map[store.TaskKey]*followed{}}
				r := store.LinesStored{Task: key, From: 0, To: n}
				if how == "carried" {
					r.Lines = batch
				}
				p.report(ctx, r)
				b.StopTimer()
				if msgs, err := sub.Take(nil); err != nil || len(msgs) != n {
					b.Fatalf("published %d lines (%v), want %d", len(msgs), err, n)
				}
				b.StartTimer()
			}
		})
	}
}
