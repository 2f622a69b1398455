package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/bastion-dev/bastion/internal/runproto"
)

// Streamer sends a run's output and phases to the manager (see
// internal/runproto) and echoes each line to a writer, so that
// `kubectl logs` shows it too. Lines stay in memory until the manager
// acknowledges them, and are sent again after any failure. The echo is
// buffered and flushed with each batch (and at Finish): a system call
// per line was a quarter of the runner's CPU at 100,000 lines/s (issue
// #22), and `kubectl logs` sees each line within a flush interval still.
type Streamer struct {
	URL   string // the manager's events URL for this task
	Token string
	Echo  io.Writer
	// OnReply sees every reply (confirm and stop reach the runner here).
	OnReply func(runproto.Reply)

	Client     *http.Client
	FlushEvery time.Duration // how long a line may wait to be sent
	Heartbeat  time.Duration // how often an idle runner asks for news
	MaxBatch   int

	mu         sync.Mutex
	confirmed  chan struct{}   // closed when a reply carries the confirmation
	pending    []runproto.Line // not yet acknowledged, in order
	nextSeq    int64
	phase      string
	phaseSent  bool
	commit     *runproto.Commit
	exit       *runproto.Exit
	exitAcked  bool
	acked      chan struct{} // closed once exitAcked
	echo       *bufio.Writer // buffers Echo; nil without one
	lastSent   time.Time
	wake       chan struct{}
	lastErr    error
	echoFailed bool
	// bodySize is the last batch's size, to size the next one's buffer. The
	// buffer itself is not reused: the HTTP client may still be reading a
	// request's body after the reply came (a reply sent before the body
	// was read).
	bodySize int
}

// NewStreamer returns a Streamer for one task with sensible defaults.
func NewStreamer(managerURL, namespace, task, token string, echo io.Writer) *Streamer {
	return &Streamer{
		URL: strings.TrimRight(managerURL, "/") + runproto.EventsPath(namespace, task), Token: token, Echo: echo,
		Client: &http.Client{Timeout: 30 * time.Second}, FlushEvery: 20 * time.Millisecond,
		Heartbeat: time.Second, MaxBatch: 1000, confirmed: make(chan struct{}),
	}
}

// echoLine buffers text for Echo. s.mu must be held.
func (s *Streamer) echoLine(text string) {
	if s.Echo == nil || s.echoFailed {
		return
	}
	if s.echo == nil {
		s.echo = bufio.NewWriterSize(s.Echo, 64<<10)
	}
	_, _ = s.echo.WriteString(text)
	if s.echo.WriteByte('\n') != nil { // a bufio.Writer's error sticks
		s.echoFailed = true // stdout gone: the manager still gets every line
	}
}

// flushEcho writes what the echo holds. s.mu must be held.
func (s *Streamer) flushEcho() {
	if s.echo != nil && !s.echoFailed && s.echo.Flush() != nil {
		s.echoFailed = true // stdout gone: the manager still gets every line
	}
}

// WaitConfirmation waits until a reply carries the user's confirmation.
func (s *Streamer) WaitConfirmation(ctx context.Context) error {
	select {
	case <-s.confirmed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Line queues one output line: several, in order, when it is longer than
// the manager takes (runproto.MaxLineBytes). Invalid UTF-8 becomes U+FFFD
// here rather than in the JSON encoder, so a piece never grows past the
// cap on its way.
func (s *Streamer) Line(at time.Time, text string) { s.queue(at, text, "") }

// StderrLine queues a line of the program's stderr, flagged as such.
func (s *Streamer) StderrLine(at time.Time, text string) { s.queue(at, text, runproto.StreamStderr) }

// queue numbers the line (its pieces): the Streamer is the run's one
// sequencer, so Seq follows the order lines reach it.
func (s *Streamer) queue(at time.Time, text, stream string) {
	text = strings.ToValidUTF8(text, "\uFFFD")
	s.mu.Lock()
	pieces := []string{text} // most lines: one piece, and this slice stays on the stack
	if len(text) > runproto.MaxLineBytes {
		pieces = splitLine(text, runproto.MaxLineBytes)
	}
	for _, piece := range pieces {
		s.nextSeq++
		s.pending = append(s.pending, runproto.Line{Seq: s.nextSeq, Time: at.UTC(), Output: piece, Stream: stream})
	}
	full := len(s.pending) >= s.MaxBatch
	s.echoLine(text)
	s.mu.Unlock()
	if full {
		s.poke()
	}
}

// splitLine cuts text into pieces of at most max bytes, each ending on a
// rune boundary; "" is one empty piece (an empty line is a line).
func splitLine(text string, max int) []string {
	pieces := []string{}
	for len(text) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		pieces = append(pieces, text[:cut])
		text = text[cut:]
	}
	return append(pieces, text)
}

// clip cuts a message (a commit's, an exit's) to what the manager takes.
func clip(message string) string {
	if len(message) <= runproto.MaxLineBytes {
		return message
	}
	return splitLine(strings.ToValidUTF8(message, "\uFFFD"), runproto.MaxLineBytes)[0]
}

// SetPhase reports a phase change.
func (s *Streamer) SetPhase(phase string) {
	s.mu.Lock()
	s.phase, s.phaseSent = phase, false
	s.mu.Unlock()
	s.poke()
}

// SetCommit reports the checked-out commit and, unless a phase was set
// already, that the run is running: both in one batch, since each batch
// that brings a fact is a write to the Task and a reconcile (issue #22).
// The launcher tells the run's start already (the local process, the
// Job's pod); the phase is the runner's word for it.
func (s *Streamer) SetCommit(hash, message string) {
	s.mu.Lock()
	s.commit = &runproto.Commit{Hash: hash, Message: clip(message)}
	if s.phase == "" {
		s.phase, s.phaseSent = runproto.PhaseRunning, false
	}
	s.mu.Unlock()
	s.poke()
}

func (s *Streamer) poke() {
	s.mu.Lock()
	w := s.wake
	s.mu.Unlock()
	if w != nil {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// Run sends batches until ctx ends or Finish was acknowledged.
func (s *Streamer) Run(ctx context.Context) {
	s.mu.Lock()
	s.wake = make(chan struct{}, 1)
	s.mu.Unlock()
	backoff := 100 * time.Millisecond
	timer := time.NewTimer(s.FlushEvery)
	defer timer.Stop()
	backlog := false
	for {
		if !backlog {
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			case <-s.wake:
			}
		} else if ctx.Err() != nil {
			return
		}
		backlog = false
		if !s.due() {
			timer.Reset(s.FlushEvery)
			continue
		}
		if err := s.send(ctx); err != nil {
			s.mu.Lock()
			s.lastErr = err
			s.mu.Unlock()
			timer.Reset(backoff)
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		if s.finished() {
			return
		}
		// Lines that queued up while this batch travelled go at once: the
		// flush interval is for a trickle, not a backlog.
		backlog = s.queued() > 0
		timer.Reset(s.FlushEvery)
	}
}

// due reports whether there is something to send, or a heartbeat is due.
func (s *Streamer) due() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending) > 0 || !s.phaseSent && s.phase != "" || s.commit != nil ||
		s.exit != nil && !s.exitAcked || time.Since(s.lastSent) >= s.Heartbeat
}

// send posts one batch and applies the reply.
func (s *Streamer) send(ctx context.Context) error {
	s.mu.Lock()
	batch := runproto.Batch{}
	if !s.phaseSent {
		batch.Phase = s.phase
	}
	batch.Commit = s.commit
	batch.Exit = s.exit
	head, err := json.Marshal(batch)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	n := fitLines(s.pending[:min(len(s.pending), s.MaxBatch)], runproto.MaxBatchBytes-len(head))
	batch.Lines = append(batch.Lines, s.pending[:n]...)
	if n < len(s.pending) {
		batch.Exit = nil // the end goes only with (or after) the last line
	}
	s.lastSent = time.Now()
	s.flushEcho()
	s.mu.Unlock()

	body, err := batch.AppendJSON(make([]byte, 0, s.bodySize))
	if err != nil {
		return err
	}
	s.bodySize = len(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := s.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized && batch.Exit != nil {
		// The manager no longer takes this task's batches: it finished the
		// task, which it does once it has recorded the exit (from an
		// earlier copy of this batch whose reply was lost), or the task was
		// stopped or deleted. Retrying could only keep the run alive.
		s.mu.Lock()
		s.ackExit()
		s.mu.Unlock()
		return nil
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("manager answered %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	var reply runproto.Reply
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
		return fmt.Errorf("reading the manager's reply: %w", err)
	}

	s.mu.Lock()
	drop := 0
	for drop < len(s.pending) && s.pending[drop].Seq <= reply.Ack {
		drop++
	}
	s.pending = s.pending[drop:]
	if batch.Phase == s.phase {
		s.phaseSent = true
	}
	if batch.Commit == s.commit {
		s.commit = nil
	}
	if batch.Exit != nil && len(s.pending) == 0 {
		s.ackExit()
	}
	if reply.Confirm {
		select {
		case <-s.confirmed:
		default:
			close(s.confirmed)
		}
	}
	s.mu.Unlock()
	if s.OnReply != nil {
		s.OnReply(reply)
	}
	return nil
}

// fitLines is how many of lines, from the first, fit in budget bytes of
// a batch's JSON: the manager refuses a body over runproto.MaxBatchBytes.
// At least one line goes (a line is at most MaxLineBytes, so it fits).
func fitLines(lines []runproto.Line, budget int) int {
	budget -= len(`,"lines":[]`)
	if upperBound(lines) <= budget {
		return len(lines) // the usual case, without encoding every line twice
	}
	for i, l := range lines {
		size, err := json.Marshal(l)
		if err != nil {
			return max(i, 1)
		}
		if budget -= len(size) + 1; budget < 0 { // +1: the comma
			return max(i, 1)
		}
	}
	return len(lines)
}

// lineJSONMax bounds a line's JSON beside its output: the field names,
// an int64, a time in RFC 3339 with nanoseconds, and the comma after it.
const lineJSONMax = len(`{"seq":,"time":"","output":""},`) + 20 + len("2006-01-02T15:04:05.999999999Z07:00")

// upperBound is at least the size of lines in a batch's JSON: a byte of
// output takes at most 6 in JSON (\u00XX).
func upperBound(lines []runproto.Line) int {
	n := 0
	for _, l := range lines {
		n += lineJSONMax + 6*len(l.Output)
	}
	return n
}

func (s *Streamer) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// ackExit records that the manager has the end and every line. s.mu must
// be held.
func (s *Streamer) ackExit() {
	if !s.exitAcked {
		s.exitAcked = true
		close(s.exitAckedCh())
	}
}

// exitAckedCh is closed once the manager has the end. s.mu must be held.
func (s *Streamer) exitAckedCh() chan struct{} {
	if s.acked == nil {
		s.acked = make(chan struct{})
	}
	return s.acked
}

func (s *Streamer) finished() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitAcked
}

// Finish reports how the run ended and waits until the manager has every
// line and the end, or until timeout; Run must be running.
func (s *Streamer) Finish(exit runproto.Exit, timeout time.Duration) error {
	exit.Message = clip(exit.Message)
	s.mu.Lock()
	s.exit = &exit
	s.flushEcho()
	acked := s.exitAckedCh()
	s.mu.Unlock()
	s.poke()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-acked:
	case <-timer.C:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushEcho()
	if !s.exitAcked {
		return fmt.Errorf("the manager did not acknowledge the last %d lines within %s: %w", len(s.pending), timeout, errors.Join(s.lastErr))
	}
	return nil
}
