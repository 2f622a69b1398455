package apiserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/go-logr/logr"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/hub"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

// linePublisher puts stored output lines on this replica's hub, once each
// and in order, whichever replica a runner posted them to. The runner
// endpoint only stores a batch; the store's line feed then reports "task T
// has lines up to N" on every replica (store.WatchLines), and each
// replica's publisher reads from the store what it has not delivered yet.
//
// It keeps, per task it follows, the last line delivered, and delivers
// only the contiguous run after it: it reads at most up to the reported
// watermark, and stops at a gap anyway. Nothing is stranded: a report it
// missed is covered by the next one of the task, by the catch-up the feed
// asks for after a reconnect, and by the last catch-up when the Task is
// seen finished, after which the task's state goes.
type linePublisher struct {
	store store.Store
	hub   *hub.Hub
	log   logr.Logger

	mu    sync.Mutex
	tasks map[store.TaskKey]*followed
	ended endedTasks
	// endedEarly are the tasks seen ended before this replica heard a
	// report of them: the feed runs behind the Task informer when this
	// replica is busy, so their reports may still be on their way. The
	// first one delivers its lines and whatever the store holds after
	// them, then drops the task.
	endedEarly endedTasks
	// projects is each project namespace's project id, learned from its
	// tasks: a project is gone from the cache (its finalizer goes as soon
	// as its namespace's deletion is asked) before its running tasks are
	// deleted, and those must still be forgotten. One entry per project
	// this replica saw a task of.
	projects map[string]int64
}

// followed is a task whose lines are delivered. Its lock takes the feed's
// reports and the task's last catch-up one at a time.
type followed struct {
	mu        sync.Mutex
	delivered int64 // the last line put on the hub
	ended     bool  // the task ended: dropped once its last lines went out
	gone      bool  // dropped
	// While the store cannot be read, the task is read again after a
	// pause: a catch-up that fails (PostgreSQL just came back, and the
	// pool still holds dead connections) must not strand its lines.
	failing bool
	pause   time.Duration
	retry   bool // a read again is scheduled
}

// publishPage is how many lines a read from the store takes at a time.
const publishPage = 1000

// readTimeout bounds a read of the store: the feed's reports of every task
// and, through a task's last catch-up, the update frames of every task
// wait on it, so a PostgreSQL that stops answering without closing the
// connection must not hold them until TCP gives up. A read that times out
// is tried again, like one that failed. A variable for tests.
var readTimeout = 10 * time.Second

// PublishLines starts this replica's publisher of output lines. It runs
// until ctx ends or the store closes. informers (the manager's cache, nil
// in benchmarks) tells it when a task ends; reader (the same cache) names
// the task's project.
func PublishLines(ctx context.Context, informers cache.Informers, reader client.Reader, st store.Store, h *hub.Hub) error {
	_, err := startLinePublisher(ctx, informers, reader, st, h)
	return err
}

func startLinePublisher(ctx context.Context, informers cache.Informers, reader client.Reader, st store.Store, h *hub.Hub) (*linePublisher, error) {
	p := &linePublisher{store: st, hub: h, log: logAPI().WithName("lines"), tasks: map[store.TaskKey]*followed{},
		projects: map[string]int64{}}
	if informers != nil {
		if err := p.finishEnded(ctx, informers, reader); err != nil {
			return nil, err
		}
	}
	go p.run(ctx)
	return p, nil
}

func (p *linePublisher) run(ctx context.Context) {
	err := p.store.WatchLines(logr.NewContext(ctx, p.log), func(r store.LinesStored) { p.report(ctx, r) })
	if err != nil && ctx.Err() == nil && !errors.Is(err, store.ErrClosed) {
		p.log.Error(err, "live output stopped")
	}
}

// report handles one report of the feed.
func (p *linePublisher) report(ctx context.Context, r store.LinesStored) {
	if r.CatchUp {
		for key, f := range p.following() {
			f.mu.Lock()
			p.catchUp(ctx, key, f)
			f.mu.Unlock()
		}
		return
	}
	f := p.follow(ctx, r)
	if f == nil {
		return // ended: its last lines went out already; or not a real report
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.attempt(ctx, r.Task, f, r.To, r.Lines, r.From) && f.ended {
		p.catchUp(ctx, r.Task, f) // it ended before this replica heard of it
	}
}

// catchUp delivers every line of the task stored after f.delivered, and
// drops an ended task once that worked. The caller holds f.mu.
func (p *linePublisher) catchUp(ctx context.Context, key store.TaskKey, f *followed) {
	if p.attempt(ctx, key, f, math.MaxInt64, nil, 0) && f.ended {
		p.drop(key, f)
	}
}

// Pauses before the store is read again for a task after a failure.
const (
	retryMin = 250 * time.Millisecond
	retryMax = 10 * time.Second
)

// attempt is deliver, with a catch-up of the task scheduled when the store
// could not be read. It logs the first failure and the recovery, not every
// retry. The caller holds f.mu.
func (p *linePublisher) attempt(ctx context.Context, key store.TaskKey, f *followed, upTo int64, lines []store.Line, from int64) bool {
	err := p.deliver(ctx, key, f, upTo, lines, from)
	switch {
	case err == nil:
		if f.failing {
			p.log.Info("publishing a task's output live again", "project", key.ProjectID, "id", key.TaskID, "delivered", f.delivered)
		}
		f.failing, f.pause = false, 0
		return true
	case ctx.Err() != nil || errors.Is(err, store.ErrClosed):
		return false // shutting down
	}
	if !f.failing {
		p.log.Error(err, "cannot read a task's output to publish it live; reading it again shortly",
			"project", key.ProjectID, "id", key.TaskID, "delivered", f.delivered)
		f.failing = true
	}
	if !f.retry {
		f.retry, f.pause = true, min(max(2*f.pause, retryMin), retryMax)
		time.AfterFunc(f.pause, func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.retry = false
			if !f.gone {
				p.catchUp(ctx, key, f)
			}
		})
	}
	return false
}

// follow is the state of a task, made on its first report: the lines
// stored before it (up to its From) were stored before this replica heard
// of the task, and a client that opens the task reads them from /output,
// as it does after a restart of the manager. nil for a task that ended.
//
// A first report heard from another process (no lines) is checked against
// the store: any role that may connect to the database can NOTIFY on the
// feed's channel, and a forged range far ahead would otherwise silence the
// task here, a forged task be followed for ever. A real report's lines are
// committed before it is sent, so the task's watermark reaches its To.
func (p *linePublisher) follow(ctx context.Context, r store.LinesStored) *followed {
	if f, known := p.known(r.Task); known {
		return f
	}
	from := r.From
	if r.Lines == nil {
		read, cancel := context.WithTimeout(ctx, readTimeout)
		last, err := p.store.LastSeq(read, r.Task)
		cancel()
		if err == nil && last < r.To {
			return nil
		}
		if err == nil {
			from = min(from, last)
		} // else the read of its lines fails too, and is tried again
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.tasks[r.Task]; ok {
		return f
	}
	if p.ended.has(r.Task) {
		return nil
	}
	f := &followed{delivered: from, ended: p.endedEarly.has(r.Task)}
	p.tasks[r.Task] = f
	return f
}

// known is the state of a followed task, or known true for one that
// ended.
func (p *linePublisher) known(key store.TaskKey) (f *followed, known bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.tasks[key]; ok {
		return f, true
	}
	return nil, p.ended.has(key)
}

func (p *linePublisher) following() map[store.TaskKey]*followed {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[store.TaskKey]*followed, len(p.tasks))
	for k, f := range p.tasks {
		out[k] = f
	}
	return out
}

// deliver puts the task's lines after f.delivered, up to upTo, on the hub:
// lines, the lines from+1..upTo the report carried, when they reach back
// far enough (the batch this replica stored: no read), else what the
// store holds. An error (the store cannot be read) leaves f where it was.
// The caller holds f.mu.
func (p *linePublisher) deliver(ctx context.Context, key store.TaskKey, f *followed, upTo int64, lines []store.Line, from int64) error {
	if f.gone || upTo <= f.delivered {
		return nil
	}
	if lines != nil && from <= f.delivered {
		p.publish(key, f, lines[f.delivered-from:])
		return nil
	}
	for f.delivered < upTo {
		page, err := p.readPage(ctx, key, f.delivered, upTo)
		if err != nil {
			return err
		}
		if n := p.publish(key, f, page); n < len(page) || len(page) < publishPage {
			return nil // a gap, or nothing more stored
		}
	}
	return nil
}

// readPage reads a page of the task's lines after delivered, up to upTo,
// within readTimeout.
func (p *linePublisher) readPage(ctx context.Context, key store.TaskKey, delivered, upTo int64) ([]store.Line, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	return p.store.Lines(ctx, key, int(delivered), int(min(upTo-delivered, publishPage)))
}

// publish puts the run of lines that follows f.delivered on the hub and
// returns how many it took; it stops at the first gap.
func (p *linePublisher) publish(key store.TaskKey, f *followed, lines []store.Line) int {
	n := 0
	for _, l := range lines {
		if l.Seq != f.delivered+1 {
			break
		}
		p.hub.Publish(hub.LogLine(key.ProjectID, key.TaskID, l.Time, l.Output, l.Stderr))
		f.delivered = l.Seq
		n++
	}
	return n
}

// finishEnded registers the last catch-up: when the cache sees a task
// finished or deleted, its runner can store nothing more (the runner
// endpoint refuses it), so its remaining lines are delivered and its state
// dropped.
func (p *linePublisher) finishEnded(ctx context.Context, informers cache.Informers, reader client.Reader) error {
	informer, err := informers.GetInformer(ctx, &bastionv1.Task{})
	if err != nil {
		return err
	}
	end := func(obj any, deleted bool) {
		if gone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = gone.Obj
		}
		task, ok := obj.(*bastionv1.Task)
		if !ok || !deleted && !ended(task) && p.knowsProjectOf(task.Namespace) {
			return // a running task's update: nothing to learn or do
		}
		key, ok := p.keyOf(ctx, reader, task)
		if ok && (deleted || ended(task)) {
			p.finish(ctx, key)
		}
	}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { end(obj, false) }, // ended while this replica was away
		UpdateFunc: func(_, obj any) { end(obj, false) },
		DeleteFunc: func(obj any) { end(obj, true) },
	})
	return err
}

// keyOf is storeKey, with the project id remembered from the namespace's
// earlier tasks once the project is gone from the cache.
func (p *linePublisher) keyOf(ctx context.Context, reader client.Reader, task *bastionv1.Task) (store.TaskKey, bool) {
	key, err := storeKey(ctx, reader, task)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.projects[task.Namespace] = key.ProjectID
		return key, true
	}
	taskID, ok := ids.FromLabels(task)
	projectID, known := p.projects[task.Namespace]
	return store.TaskKey{ProjectID: projectID, TaskID: taskID}, ok && known
}

func (p *linePublisher) knowsProjectOf(namespace string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.projects[namespace]
	return ok
}

// finish delivers the task's last lines and forgets it. Later reports of
// it (a notification still on its way) are ignored: their lines went out.
// If the store cannot be read now, the task stays followed until a read
// again delivers them. A task not followed yet waits for its first report
// (endedEarly).
func (p *linePublisher) finish(ctx context.Context, key store.TaskKey) {
	p.mu.Lock()
	f := p.tasks[key]
	if f == nil {
		p.endedEarly.add(key, time.Now())
		p.mu.Unlock()
		return
	}
	p.ended.add(key, time.Now())
	p.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended = true
	p.catchUp(ctx, key, f)
}

// drop forgets a task that ended once its last lines went out. The caller
// holds f.mu.
func (p *linePublisher) drop(key store.TaskKey, f *followed) {
	f.gone = true
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tasks[key] == f {
		delete(p.tasks, key)
	}
	// Ended for good: a task that ended early is then ignored after its
	// first report, like any other after its last catch-up.
	p.ended.add(key, time.Now())
}

// endedTasks remembers the tasks that ended in the last endedMemory, so a
// late report cannot make one followed again. Ids are never reused, so
// forgetting them after that is safe; it keeps the memory bounded by the
// tasks that end in that time, not by all that ever ran.
type endedTasks struct {
	at    map[store.TaskKey]time.Time
	order []store.TaskKey // oldest first
}

const endedMemory = 10 * time.Minute

func (e *endedTasks) add(key store.TaskKey, now time.Time) {
	if e.at == nil {
		e.at = map[store.TaskKey]time.Time{}
	}
	for len(e.order) > 0 && now.Sub(e.at[e.order[0]]) > endedMemory {
		delete(e.at, e.order[0])
		e.order = e.order[1:]
	}
	if _, ok := e.at[key]; !ok {
		e.order = append(e.order, key)
		e.at[key] = now
	}
}

func (e *endedTasks) has(key store.TaskKey) bool {
	_, ok := e.at[key]
	return ok
}

// storeKey is a task's /api identity in the store: its id and its
// project's, read from reader (the cache).
func storeKey(ctx context.Context, reader client.Reader, task *bastionv1.Task) (store.TaskKey, error) {
	taskID, ok := ids.FromLabels(task)
	if !ok {
		return store.TaskKey{}, errors.New("the task has no id yet")
	}
	project := &bastionv1.Project{}
	if err := reader.Get(ctx, client.ObjectKey{Name: bastionv1.ProjectOfNamespace(task.Namespace)}, project); err != nil {
		return store.TaskKey{}, fmt.Errorf("reading the task's project: %w", err)
	}
	projectID, ok := ids.FromLabels(project)
	if !ok {
		return store.TaskKey{}, errors.New("the task's project has no id yet")
	}
	return store.TaskKey{ProjectID: projectID, TaskID: taskID}, nil
}
