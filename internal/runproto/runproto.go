// Package runproto is the wire protocol between a runner and the manager.
//
// The runner POSTs Batches to EventsPath with its task's token as a bearer
// token; every reply says which lines the manager has stored (Ack) and
// whether the user confirmed or stopped the task. Lines carry sequence
// numbers starting at 1, and the manager stores each (task, seq) once, so
// a runner that lost a reply simply sends again from Ack+1: nothing is lost
// or duplicated across reconnects. Plain HTTP requests rather than a
// websocket: every request stands alone, so a dropped connection needs no
// session to resume, and any proxy in between carries it.
package runproto

import (
	"fmt"
	"time"
)

// The manager's caps on what a runner sends. A runner splits a longer
// line into several (in order, nothing lost) and a longer backlog into
// several batches, so a legitimate run never meets them; the manager
// answers 413 to a request over either.
const (
	// MaxBatchBytes bounds one request body: 4 MiB.
	MaxBatchBytes = 4 << 20
	// MaxLineBytes bounds one line's output (and a commit or exit
	// message): 64 KiB.
	MaxLineBytes = 64 << 10
)

// EventsPath is where a runner sends its batches.
func EventsPath(namespace, task string) string {
	return fmt.Sprintf("/api/runner/tasks/%s/%s/events", namespace, task)
}

// Line is one output line.
type Line struct {
	Seq    int64     `json:"seq"`
	Time   time.Time `json:"time"`
	Output string    `json:"output"`
	// Stream is StreamStderr for a line the task's program wrote to its
	// stderr, and empty for stdout and the runner's own lines. The manager
	// refuses any other value.
	Stream string `json:"stream,omitempty"`
}

// StreamStderr is Line.Stream of a stderr line.
const StreamStderr = "stderr"

// Phases a runner reports.
const (
	PhaseRunning             = "running"
	PhaseWaitingConfirmation = "waiting_confirmation"
)

// Batch is what a runner sends: lines not yet acknowledged, and what
// changed since its last batch.
type Batch struct {
	Lines []Line `json:"lines,omitempty"`
	// Phase is the runner's current phase.
	Phase string `json:"phase,omitempty"`
	// Commit is the checked-out commit, once known.
	Commit *Commit `json:"commit,omitempty"`
	// Exit is set in the last batch: how the run ended.
	Exit *Exit `json:"exit,omitempty"`
}

// Commit is the checkout's commit.
type Commit struct {
	Hash    string `json:"hash"`
	Message string `json:"message"`
}

// Exit is how a run ended. Message says what went wrong before or around
// the program (a failed clone, a bad path), for the task's message.
type Exit struct {
	Code    int    `json:"code"`
	Message string `json:"message,omitempty"`
}

// Reply is the manager's answer to every batch.
type Reply struct {
	// Ack is the highest sequence number up to which every line is stored.
	Ack int64 `json:"ack"`
	// Confirm is true once the user confirmed a task waiting for it.
	Confirm bool `json:"confirm,omitempty"`
	// Stop is "graceful" or "force" once the user stopped the task.
	Stop string `json:"stop,omitempty"`
}
