package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// LinesStored is one report of the line feed (Store.WatchLines).
//
// Either a task's lines From+1..To are now stored with none missing (its
// LastSeq went from From to To), or, with CatchUp, reports may have been
// lost: the feed just started or reconnected, and a watcher must read every
// task it follows again from the store.
type LinesStored struct {
	Task     TaskKey
	From, To int64
	// Lines are lines From+1..To, in order, when this process stored them
	// in one piece; nil otherwise (another replica stored them, or a batch
	// filled a gap). They save the replica that received a batch from
	// reading it back; they never travel between processes.
	Lines []Line
	// CatchUp: read every followed task from the store again.
	CatchUp bool
	// held is the bytes of Lines' output, counted as a queue merges them.
	held int
}

// maxHeldLines bounds the lines a watcher's queue keeps per task when its
// reader is slow: beyond it the report keeps its range and drops the lines,
// which the reader then reads from the store.
const maxHeldLines = 50_000

// maxHeldBytes bounds the same by the lines' bytes: two full batches of a
// runner (runproto.MaxBatchBytes), so a task printing long lines cannot
// make a slow watcher hold gigabytes.
const maxHeldBytes = 8 << 20

// feed fans the reports of one store out to its watchers. Each watcher has
// a queue that merges reports per task instead of growing or dropping: a
// slow watcher sees one report "From..To" for many, and no report is lost,
// so the only catch-up a watcher needs is for what the feed itself did not
// hear (before it was live, or while a PostgreSQL listener reconnected).
type feed struct {
	mu       sync.Mutex
	watchers map[*watcher]struct{}
	live     bool // reports of every advance arrive; false while a listener reconnects
	done     chan struct{}
	closed   bool
}

func newFeed(live bool) *feed {
	return &feed{watchers: map[*watcher]struct{}{}, live: live, done: make(chan struct{})}
}

// watcher is one WatchLines call's queue.
type watcher struct {
	mu      sync.Mutex
	order   []TaskKey // tasks with a pending report, oldest first
	pending map[TaskKey]*LinesStored
	catchUp bool
	wake    chan struct{} // capacity 1: "something is pending"
}

func (w *watcher) push(r LinesStored) {
	w.mu.Lock()
	if p, ok := w.pending[r.Task]; ok {
		p.merge(r)
	} else {
		w.pending[r.Task] = &r
		w.order = append(w.order, r.Task)
	}
	w.mu.Unlock()
	w.signal()
}

func (w *watcher) askCatchUp() {
	w.mu.Lock()
	w.catchUp = true
	w.mu.Unlock()
	w.signal()
}

func (w *watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// take empties the queue: a catch-up first, if one is asked, then the
// reports in the order their tasks first appeared.
func (w *watcher) take() []LinesStored {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []LinesStored
	if w.catchUp {
		out = append(out, LinesStored{CatchUp: true})
		w.catchUp = false
	}
	for _, k := range w.order {
		out = append(out, *w.pending[k])
	}
	w.order, w.pending = w.order[:0], map[TaskKey]*LinesStored{}
	return out
}

// merge folds a later report of the same task into r. The range becomes
// their union; the lines stay only while they still cover it exactly.
func (r *LinesStored) merge(next LinesStored) {
	switch {
	case next.To <= r.To && next.From >= r.From:
		return // nothing new (a late report)
	case r.Lines != nil && next.Lines != nil && next.From == r.To && len(r.Lines)+len(next.Lines) <= maxHeldLines &&
		r.bytes()+next.bytes() <= maxHeldBytes:
		r.held += next.held
		r.Lines = append(r.Lines, next.Lines...)
	default:
		r.Lines, r.held = nil, 0
	}
	r.From, r.To = min(r.From, next.From), max(r.To, next.To)
}

// bytes is held, counting it first if nobody did yet.
func (r *LinesStored) bytes() int {
	if r.held == 0 {
		for _, l := range r.Lines {
			r.held += len(l.Output)
		}
	}
	return r.held
}

// watch calls fn with the watcher's reports until ctx ends or the store
// closes. It starts with a catch-up if the feed is live, else with the
// first one the feed asks for once it is.
func (f *feed) watch(ctx context.Context, fn func(LinesStored)) error {
	w := &watcher{pending: map[TaskKey]*LinesStored{}, wake: make(chan struct{}, 1)}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return ErrClosed
	}
	f.watchers[w] = struct{}{}
	if f.live {
		w.askCatchUp()
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.watchers, w)
		f.mu.Unlock()
	}()
	for {
		select {
		case <-w.wake:
		case <-ctx.Done():
			return ctx.Err()
		case <-f.done:
			return ErrClosed
		}
		for _, r := range w.take() {
			fn(r)
		}
	}
}

// publish hands a report to every watcher.
func (f *feed) publish(r LinesStored) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for w := range f.watchers {
		w.push(r)
	}
}

// isLive reports whether reports of every advance arrive.
func (f *feed) isLive() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.live
}

// setLive records whether reports arrive; becoming live asks every watcher
// to catch up on what may have been missed meanwhile.
func (f *feed) setLive(live bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if live && !f.live {
		for w := range f.watchers {
			w.askCatchUp()
		}
	}
	f.live = live
}

func (f *feed) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		close(f.done)
	}
}

// advanced is the report of an append that moved the watermark from
// before to after, or ok false when it did not move. sorted is the batch;
// its lines go with the report when they hold the whole range, which is
// the case of every batch that arrives in order. They never go when a gap
// was pending (before.max > before.last): a line of the batch in the gap's
// region may have been stored already, and the store keeps that first
// copy, whose text a resend need not share; the watchers read those.
func advanced(task TaskKey, before, after watermark, sorted []Line) (r LinesStored, ok bool) {
	if after.last <= before.last {
		return r, false
	}
	r = LinesStored{Task: task, From: before.last, To: after.last}
	if before.max > before.last {
		return r, true
	}
	var run []Line
	for _, l := range sorted {
		if l.Seq > before.last && l.Seq <= after.last {
			run = append(run, l)
		}
	}
	if int64(len(run)) == after.last-before.last {
		r.Lines = run
	}
	return r, true
}

// feedChannel is the PostgreSQL channel of the line feed. Its payload
// names the sending store, the task and the range, never a line's text:
// "origin project task from to", all but origin decimal integers.
const feedChannel = "bastion_lines"

// deleteChannel is the PostgreSQL channel on which a store says it deleted
// a task's lines, so that every other replica forgets the lines it keeps
// of that task (recentLines). Its payload: "origin project task".
const deleteChannel = "bastion_task_deletes"

func deletePayload(origin string, task TaskKey) string {
	return fmt.Sprintf("%s %d %d", origin, task.ProjectID, task.TaskID)
}

// parseDelete reads a delete notification's payload.
func parseDelete(payload string) (task TaskKey, origin string, ok bool) {
	origin, n, ok := parsePayload(payload, 2)
	if !ok || n[0] < 1 || n[1] < 1 {
		return task, "", false
	}
	return TaskKey{ProjectID: n[0], TaskID: n[1]}, origin, true
}

// parsePayload splits a notification's payload into its origin and the
// count decimal integers after it, none negative.
func parsePayload(payload string, count int) (origin string, n []int64, ok bool) {
	f := strings.Fields(payload)
	if len(f) != count+1 {
		return "", nil, false
	}
	n = make([]int64, count)
	for i := range n {
		v, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil || v < 0 {
			return "", nil, false
		}
		n[i] = v
	}
	return f[0], n, true
}

func notificationPayload(origin string, r LinesStored) string {
	return fmt.Sprintf("%s %d %d %d %d", origin, r.Task.ProjectID, r.Task.TaskID, r.From, r.To)
}

// parseNotification reads a payload and names the store that sent it; ok
// is false for a malformed one (only a database user could send it).
func parseNotification(payload string) (r LinesStored, origin string, ok bool) {
	origin, n, ok := parsePayload(payload, 4)
	if !ok || n[0] < 1 || n[1] < 1 || n[3] <= n[2] {
		return r, "", false
	}
	return LinesStored{Task: TaskKey{ProjectID: n[0], TaskID: n[1]}, From: n[2], To: n[3]}, origin, true
}

// ownLines holds the lines of a PostgreSQL store's own appends until their
// notification comes back to its listener. The store reports its own
// appends from there, not at once: PostgreSQL delivers notifications in
// commit order, and appends to one task take turns on its row, so a
// replica that stores a task's second batch hears of the first batch,
// stored by another replica, before its own. Reported at once, its own
// could come first, and its clients would follow the task from there,
// never seeing the first batch live. The lines only spare a read back.
type ownLines struct {
	mu    sync.Mutex
	lines map[ownKey][]Line
}

type ownKey struct {
	task     TaskKey
	from, to int64
}

// keep holds r's lines until its notification returns.
func (o *ownLines) keep(r LinesStored) {
	if r.Lines == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lines == nil {
		o.lines = map[ownKey][]Line{}
	}
	o.lines[ownKey{r.Task, r.From, r.To}] = r.Lines
}

// take gives r the lines kept for it, if any, and forgets them.
func (o *ownLines) take(r *LinesStored) {
	k := ownKey{r.Task, r.From, r.To}
	o.mu.Lock()
	defer o.mu.Unlock()
	r.Lines = o.lines[k]
	delete(o.lines, k)
}

// drop forgets the batch of an append that rolled back: it sent no
// notification.
func (o *ownLines) drop(task TaskKey, from, to int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.lines, ownKey{task, from, to})
}

// clear forgets every kept batch: their notifications will not come (the
// listener lost its connection), and the catch-up that follows its
// reconnection reads them from the store.
func (o *ownLines) clear() {
	o.mu.Lock()
	defer o.mu.Unlock()
	clear(o.lines)
}
