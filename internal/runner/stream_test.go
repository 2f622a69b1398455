package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bastion-dev/bastion/internal/runproto"
)

// faultyManager stores lines by sequence, as the real store does, and
// misbehaves on purpose: it drops connections before or after storing,
// answers errors, and delays.
type faultyManager struct {
	mu      sync.Mutex
	lines   map[int64]string
	exit    *runproto.Exit
	phases  []string
	commit  *runproto.Commit
	rnd     *rand.Rand
	confirm bool
	faults  bool
}

func (m *faultyManager) ack() int64 {
	var a int64
	for {
		if _, ok := m.lines[a+1]; !ok {
			return a
		}
		a++
	}
}

func (m *faultyManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer tok" {
		http.Error(w, "bad token", http.StatusUnauthorized)
		return
	}
	var b runproto.Batch
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	fault := -1
	if m.faults {
		fault = m.rnd.Intn(10)
	}
	m.mu.Unlock()
	switch fault {
	case 0: // dropped before anything was stored
		hijackClose(w)
		return
	case 1:
		http.Error(w, "store unavailable", http.StatusServiceUnavailable)
		return
	case 2:
		time.Sleep(30 * time.Millisecond)
	}
	m.mu.Lock()
	for _, l := range b.Lines {
		if _, dup := m.lines[l.Seq]; !dup {
			m.lines[l.Seq] = l.Output
		}
	}
	if b.Phase != "" {
		m.phases = append(m.phases, b.Phase)
	}
	if b.Commit != nil {
		m.commit = b.Commit
	}
	if b.Exit != nil {
		m.exit = b.Exit
	}
	reply := runproto.Reply{Ack: m.ack(), Confirm: m.confirm}
	m.mu.Unlock()
	if fault == 3 { // stored, but the answer is lost: the runner must resend
		hijackClose(w)
		return
	}
	_ = json.NewEncoder(w).Encode(reply)
}

func hijackClose(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

func newStreamerFor(t *testing.T, m *faultyManager) (*Streamer, context.CancelFunc) {
	t.Helper()
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	s := NewStreamer(srv.URL, "ns", "task-1", "tok", nil)
	s.Client = &http.Client{Timeout: 5 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	go s.Run(ctx)
	t.Cleanup(cancel)
	return s, cancel
}

func TestStreamer_deliversEveryLineOnceThroughDroppedAndFailedRequests(t *testing.T) {
	m := &faultyManager{lines: map[int64]string{}, rnd: rand.New(rand.NewSource(7)), faults: true}
	s, _ := newStreamerFor(t, m)
	s.SetPhase(runproto.PhaseRunning)
	s.SetCommit("abc123", "the commit")
	const n = 20000
	for i := 1; i <= n; i++ {
		s.Line(time.Now(), fmt.Sprintf("line %d", i))
		if i%5000 == 0 {
			time.Sleep(5 * time.Millisecond) // let a few batches go out mid-run
		}
	}
	if err := s.Finish(runproto.Exit{Code: 3, Message: "boom"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.lines) != n || m.ack() != n {
		t.Fatalf("%d lines stored, contiguous up to %d; want %d", len(m.lines), m.ack(), n)
	}
	for i := int64(1); i <= n; i++ {
		if m.lines[i] != fmt.Sprintf("line %d", i) {
			t.Fatalf("line %d is %q", i, m.lines[i])
		}
	}
	if m.exit == nil || m.exit.Code != 3 || m.exit.Message != "boom" {
		t.Fatalf("exit %+v", m.exit)
	}
	if m.commit == nil || m.commit.Hash != "abc123" || len(m.phases) == 0 || m.phases[0] != runproto.PhaseRunning {
		t.Fatalf("commit %+v, phases %v", m.commit, m.phases)
	}
}

func TestStreamer_heartbeatsBringTheUsersConfirmation(t *testing.T) {
	m := &faultyManager{lines: map[int64]string{}}
	s, _ := newStreamerFor(t, m)
	s.Heartbeat = 20 * time.Millisecond
	confirmed := make(chan struct{})
	var once sync.Once
	s.OnReply = func(r runproto.Reply) {
		if r.Confirm {
			once.Do(func() { close(confirmed) })
		}
	}
	s.SetPhase(runproto.PhaseWaitingConfirmation)
	m.mu.Lock()
	m.confirm = true
	m.mu.Unlock()
	select {
	case <-confirmed:
	case <-time.After(10 * time.Second):
		t.Fatal("an idle runner never heard of the confirmation")
	}
}

func TestStreamer_finishTimesOutWithTheReasonWhenTheManagerIsGone(t *testing.T) {
	s := NewStreamer("http://127.0.0.1:1", "ns", "t", "tok", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	s.Line(time.Now(), "lost?")
	err := s.Finish(runproto.Exit{}, 500*time.Millisecond)
	if err == nil {
		t.Fatal("Finish reported success without a manager")
	}
}

// A manager that refuses the last batch as the task's (it finished the
// task on an earlier copy whose reply was lost) ends the runner's wait at
// once: nothing it sends could be taken any more.
func TestStreamer_finishEndsWhenTheManagerHasFinishedTheTask(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":"the task has finished; its runner's token no longer works"}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	s := NewStreamer(srv.URL, "ns", "t", "tok", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	s.Line(time.Now(), "the last line")
	start := time.Now()
	if err := s.Finish(runproto.Exit{}, time.Minute); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("Finish waited %s for a manager that refuses the task", waited)
	}
}

// A line longer than the manager takes becomes several, cut on rune
// boundaries, that join back to it; a short or empty line stays one.
func TestSplitLine_cutsOnRuneBoundariesAndLosesNothing(t *testing.T) {
	long := "x" + strings.Repeat("é", 5)
	pieces := splitLine(long, 4)
	if strings.Join(pieces, "") != long || len(pieces) != 3 || pieces[0] != "xé" {
		t.Fatalf("splitLine(%q, 4) = %q", long, pieces)
	}
	for _, p := range pieces {
		if len(p) > 4 || !utf8.ValidString(p) {
			t.Fatalf("piece %q is over 4 bytes or cut inside a rune", p)
		}
	}
	if got := splitLine("", 4); len(got) != 1 || got[0] != "" {
		t.Fatalf("splitLine of an empty line = %q", got)
	}
}

// lockedBuffer is an echo target read while the Streamer writes to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The echo (what `kubectl logs` shows) is buffered, not lost: every line
// is there, in order, once Finish returns, and a line is there once the
// batch that carries it has gone, without waiting for the run's end.
func TestStreamer_echoesEveryLineInOrderThoughBuffered(t *testing.T) {
	m := &faultyManager{lines: map[int64]string{}}
	srv := httptest.NewServer(m)
	defer srv.Close()
	echo := &lockedBuffer{}
	s := NewStreamer(srv.URL, "ns", "task-1", "tok", echo)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)

	s.Line(time.Now(), "first")
	deadline := time.Now().Add(10 * time.Second)
	for echo.String() != "first\n" {
		if time.Now().After(deadline) {
			t.Fatalf("the first line was not echoed while the run went on; echo %q", echo.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	var want strings.Builder
	want.WriteString("first\n")
	for i := 1; i <= 3000; i++ {
		s.Line(time.Now(), fmt.Sprintf("line %d", i))
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if err := s.Finish(runproto.Exit{}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := echo.String(); got != want.String() {
		t.Fatalf("echo holds %d bytes, want %d: every line, in order", len(got), want.Len())
	}
}

// fitLines counts on upperBound to skip encoding each line: it must never
// be below a batch's real size, whatever the output holds (escapes, HTML
// characters, invalid UTF-8 turned into U+FFFD, control characters).
func TestUpperBound_isNeverBelowTheEncodedSize(t *testing.T) {
	rnd := rand.New(rand.NewSource(3))
	alphabet := []string{"a", "\"", "\\", "<", ">", "&", "\n", "\t", "\x01", "\x7f", "é", "\u2028", "😀", "\xff"}
	for round := 0; round < 200; round++ {
		lines := make([]runproto.Line, 1+rnd.Intn(50))
		for i := range lines {
			var b strings.Builder
			for n := rnd.Intn(200); n > 0; n-- {
				b.WriteString(alphabet[rnd.Intn(len(alphabet))])
			}
			lines[i] = runproto.Line{Seq: rnd.Int63(), Time: time.Unix(rnd.Int63n(1<<33), rnd.Int63n(1e9)).UTC(), Output: strings.ToValidUTF8(b.String(), "\uFFFD")}
		}
		data, err := json.Marshal(runproto.Batch{Lines: lines})
		if err != nil {
			t.Fatal(err)
		}
		if real := len(data) - len(`{"lines":[]}`); upperBound(lines) < real {
			t.Fatalf("upperBound = %d for lines whose JSON is %d bytes: %+v", upperBound(lines), real, lines)
		}
	}
}

// A run reports that it runs with its commit, in the same batch: each
// batch that brings a fact costs a write to the Task (issue #22).
func TestStreamer_theCommitBringsTheRunningPhaseInTheSameBatch(t *testing.T) {
	var mu sync.Mutex
	var facts []runproto.Batch
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b runproto.Batch
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		if b.Phase != "" || b.Commit != nil {
			facts = append(facts, runproto.Batch{Phase: b.Phase, Commit: b.Commit})
		}
		var ack int64
		for _, l := range b.Lines {
			ack = max(ack, l.Seq)
		}
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(runproto.Reply{Ack: ack})
	}))
	defer srv.Close()
	s := NewStreamer(srv.URL, "ns", "task-1", "tok", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	s.Line(time.Now(), "Cloning into 'repository'...")
	s.SetCommit("abc123", "the commit")
	if err := s.Finish(runproto.Exit{}, time.Minute); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(facts) != 1 || facts[0].Phase != runproto.PhaseRunning || facts[0].Commit == nil || facts[0].Commit.Hash != "abc123" {
		t.Fatalf("batches with facts: %+v; want one with the phase running and the commit", facts)
	}
}
