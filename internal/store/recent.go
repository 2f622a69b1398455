package store

import (
	"slices"
	"sync"
	"unsafe"
)

// recentLines keeps, for the tasks whose lines this process is storing, the
// last lines it stored, so that a reader following a running task's output
// (GET /output?offset= as it grows, once a poll) is answered from memory
// instead of reading back from the database what was committed a moment
// ago. Reading a line back cost about as much CPU as storing it
// (docs/benchmarks.md, "The output path reads back what it just stored").
//
// It holds only lines below the task's watermark once their transaction has
// committed. Such a line never changes (a resend of its Seq is ignored) and
// is never removed but with its task, so an answer from here is what the
// database would answer. Whatever it does not hold (older lines, lines
// another replica stored, lines past a gap) is read from the database as
// before.
type recentLines struct {
	mu    sync.Mutex
	tasks map[TaskKey]*recentTask
	held  int    // bytes held (lineCost), all tasks
	clock uint64 // counts adds, to find the least recently added task
	// deletes counts DeleteTask calls. An append takes a mark of it
	// before its transaction and adds its lines only if no delete ended
	// since: a delete that committed between an append's commit and its
	// add must not leave the deleted lines here.
	deletes uint64
}

// recentTask is one task's window: lines[0].Seq up to its last, no Seq
// missing in between.
type recentTask struct {
	lines []Line
	held  int
	added uint64
}

// The window's bounds. A reader polling every few milliseconds is a few
// batches behind at most; 8,192 lines is eight of the runner's batches of
// 1,000. The byte bounds (each line's text and the Line itself) keep long
// lines from holding much: at most 4 MiB a task and 32 MiB in all, at
// most 64 tasks.
const (
	recentMaxLines     = 8192
	recentMaxTaskBytes = 4 << 20
	recentMaxBytes     = 32 << 20
	recentMaxTasks     = 64
)

// mark is taken before an append's transaction and handed to add.
func (r *recentLines) mark() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.deletes
}

// lineCost is what a line held costs: its text and the Line itself. (The
// slice's spare capacity, at most as much again, is not counted.)
func lineCost(l Line) int { return len(l.Output) + int(unsafe.Sizeof(l)) }

// add records a committed advance of a task's watermark, made by an append
// that took mark before its transaction. Only a report carrying its lines
// (this process stored From+1..To in one piece) can extend a window, and
// only the window that ends at From; any other starts the task's window
// afresh at the report's lines, or drops it, as does a delete since mark.
func (r *recentLines) add(rep LinesStored, mark uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tasks[rep.Task]
	if len(rep.Lines) == 0 || int64(len(rep.Lines)) != rep.To-rep.From || mark != r.deletes {
		r.dropLocked(rep.Task)
		return
	}
	if t == nil || len(t.lines) == 0 || t.lines[len(t.lines)-1].Seq != rep.From {
		r.dropLocked(rep.Task)
		if r.tasks == nil {
			r.tasks = map[TaskKey]*recentTask{}
		}
		t = &recentTask{}
		r.tasks[rep.Task] = t
	}
	r.clock++
	t.added = r.clock
	t.lines = append(t.lines, rep.Lines...)
	for _, l := range rep.Lines {
		t.held += lineCost(l)
		r.held += lineCost(l)
	}
	// Trim the oldest lines of this task first, then whole tasks, the
	// least recently added first.
	cut := 0
	for len(t.lines)-cut > recentMaxLines || (t.held > recentMaxTaskBytes && cut < len(t.lines)) {
		t.held -= lineCost(t.lines[cut])
		r.held -= lineCost(t.lines[cut])
		cut++
	}
	// Cleared before the reslice so that the dropped lines' text is freed
	// now; append makes a new array once the old one's tail is used up.
	// Readers get copies, so nothing they hold is ever written to.
	clear(t.lines[:cut])
	t.lines = t.lines[cut:]
	if len(t.lines) == 0 {
		r.dropLocked(rep.Task)
	}
	for len(r.tasks) > recentMaxTasks || r.held > recentMaxBytes {
		r.dropLocked(r.oldestLocked())
	}
}

func (r *recentLines) oldestLocked() TaskKey {
	var oldest TaskKey
	var at uint64
	for k, t := range r.tasks {
		if at == 0 || t.added < at {
			oldest, at = k, t.added
		}
	}
	return oldest
}

// deleted forgets a task whose lines were just deleted, and keeps any
// append under way from adding lines it committed before the delete.
func (r *recentLines) deleted(task TaskKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deletes++
	r.dropLocked(task)
}

// reset forgets every task, and keeps appends under way from adding.
func (r *recentLines) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deletes++
	r.tasks, r.held = nil, 0
}

func (r *recentLines) dropLocked(task TaskKey) {
	if t := r.tasks[task]; t != nil {
		r.held -= t.held
		delete(r.tasks, task)
	}
}

// after returns up to limit lines of the task from Seq after+1 on, as far as
// the window holds them, and whether it held Seq after+1 at all. The lines
// are a copy.
func (r *recentLines) after(task TaskKey, after int64, limit int) ([]Line, bool) {
	if r == nil {
		return nil, false // a store whose window is not to be trusted now
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tasks[task]
	if t == nil || len(t.lines) == 0 {
		return nil, false
	}
	first := t.lines[0].Seq
	if after+1 < first || after >= t.lines[len(t.lines)-1].Seq {
		return nil, false
	}
	from := int(after + 1 - first)
	end := len(t.lines)
	if limit < end-from { // not from+limit, which a huge limit overflows
		end = from + limit
	}
	return slices.Clone(t.lines[from:end]), true
}
