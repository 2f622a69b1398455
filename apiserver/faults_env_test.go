package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-logr/logr/funcr"
	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/hub"
	"github.com/bastion-dev/bastion/internal/runner"
	"github.com/bastion-dev/bastion/internal/store"
)

// Issue #11, items 2, 3 and 5 (the websocket half): the path of a line
// from the runner's real Streamer, over HTTP, through the manager's real
// runner endpoint, into a real store (SQLite or PostgreSQL), out through
// the real hub and /api/ws to websocket clients. The test feeds the
// Streamer itself (the Pipeline benchmarks run a real runner process
// instead). As there, only the endpoint's Kubernetes reads (the task, its
// project, its token) are answered from memory: what is under test is the
// stream, not the cluster.

// soak reports whether the long versions run (`make soak` sets it).
func soak() bool { return os.Getenv("BASTION_SOAK") != "" }

// pick is short in `make test`, long under `make soak`.
func pick[T any](short, long T) T {
	if soak() {
		return long
	}
	return short
}

const relNamespace = "bastion-rel" // the project "rel"
const relProjectID = 3

// relTask is one task the fake cluster knows, with its runner's token.
type relTask struct {
	name  string
	id    int64
	token string
}

// relEnv is the manager's side of the pipeline.
type relEnv struct {
	t     *testing.T
	url   string
	store store.Store
	hub   *hub.Hub
	tasks []relTask
	log   *lockedLog
}

// lockedLog collects what the runner endpoint logs.
type lockedLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLog) add(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, prefix+" "+args)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// newRelEnv serves /api/runner and /api/ws over st for n tasks. The
// websocket options are the production defaults unless ws says otherwise.
// A non-zero sndbuf fixes the kernel send buffer of every accepted
// connection (Linux grows it up to 4 MiB on loopback).
func newRelEnv(t *testing.T, st store.Store, n int, ws WSOptions, sndbuf int) *relEnv {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = bastionv1.AddToScheme(scheme)
	objs := []client.Object{&bastionv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "rel",
		Labels: map[string]string{bastionv1.LabelID: strconv.Itoa(relProjectID)}}}}
	var tasks []relTask
	var withStatus []client.Object
	for i := 1; i <= n; i++ {
		rt := relTask{name: fmt.Sprintf("t%d", i), id: int64(i), token: fmt.Sprintf("token-%d", i)}
		tasks = append(tasks, rt)
		task := &bastionv1.Task{
			ObjectMeta: metav1.ObjectMeta{Name: rt.name, Namespace: relNamespace, UID: types.UID("uid-" + rt.name),
				Labels: map[string]string{bastionv1.LabelID: strconv.FormatInt(rt.id, 10)}},
			Status: bastionv1.TaskStatus{Status: bastionv1.TaskRunning, RunName: rt.name},
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: rt.name + "-input", Namespace: relNamespace,
			OwnerReferences: []metav1.OwnerReference{taskController(task)}},
			Data: map[string][]byte{"token": []byte(rt.token)}}
		objs = append(objs, task, secret)
		withStatus = append(withStatus, task)
	}
	k8s := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(withStatus...).Build()

	live := hub.New()
	if err := PublishLines(t.Context(), nil, nil, st, live); err != nil {
		t.Fatal(err)
	}
	logs := &lockedLog{}
	events := newRunnerEvents(Options{Client: k8s, Reader: k8s, Store: st})
	events.log = funcr.New(logs.add, funcr.Options{})
	mux := chi.NewRouter()
	mux.Mount("/api/runner", events.routes())
	all := func(*http.Request) (func(int64) bool, bool) { return hub.All, true }
	mux.Handle("/api/ws", WSHandler(live, all, ws))
	srv := httptest.NewUnstartedServer(mux)
	if sndbuf > 0 {
		srv.Listener = sndbufListener{srv.Listener, sndbuf}
	}
	srv.Start()
	t.Cleanup(func() {
		live.Close() // ends the websocket connections, so Close does not wait on them
		srv.Close()
	})
	return &relEnv{t: t, url: srv.URL, store: st, hub: live, tasks: tasks, log: logs}
}

// sndbufListener sets the send buffer of each connection it accepts.
type sndbufListener struct {
	net.Listener
	size int
}

func (l sndbufListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tcp, ok := c.(*net.TCPConn); ok {
		err = tcp.SetWriteBuffer(l.size)
	}
	return c, err
}

// line is what task prints as its line seq: the task and the number let a
// reader check order, the padding makes it a realistic size.
func line(task string, seq int, pad string) string {
	return task + " line " + strconv.Itoa(seq) + pad
}

// runnerFor starts task i's Streamer against url (the manager or a proxy
// in front of it); its client records every error answer.
func (e *relEnv) runnerFor(i int, url string) (*runner.Streamer, *answers) {
	e.t.Helper()
	rt := e.tasks[i]
	s := runner.NewStreamer(url, relNamespace, rt.name, rt.token, nil)
	a := &answers{}
	s.Client = &http.Client{Timeout: 10 * time.Second, Transport: a}
	s.MaxBatch = 200 // many requests, so that every fault meets some
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	e.t.Cleanup(func() { cancel(); <-done })
	return s, a
}

// answers is a RoundTripper that keeps the error answers the runner got.
type answers struct {
	mu     sync.Mutex
	errors []string
}

func (a *answers) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		a.mu.Lock()
		a.errors = append(a.errors, fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(body)))
		a.mu.Unlock()
	}
	return resp, err
}

func (a *answers) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.errors...)
}

// checkStored insists that the store holds exactly lines 1..n of task i,
// in order, each once.
func (e *relEnv) checkStored(i, n int, pad string) {
	e.t.Helper()
	rt := e.tasks[i]
	key := store.TaskKey{ProjectID: relProjectID, TaskID: rt.id}
	seq := 0
	err := e.store.StreamLines(context.Background(), key, func(l store.Line) error {
		seq++
		if l.Seq != int64(seq) || l.Output != line(rt.name, seq, pad) {
			return fmt.Errorf("stored line %d is seq %d %.40q", seq, l.Seq, l.Output)
		}
		return nil
	})
	if err != nil {
		e.t.Fatalf("task %s: %v", rt.name, err)
	}
	if seq != n {
		e.t.Fatalf("task %s: %d lines stored, want %d", rt.name, seq, n)
	}
	if last, err := e.store.LastSeq(context.Background(), key); err != nil || last != int64(n) {
		e.t.Fatalf("task %s: LastSeq %d, %v; want %d", rt.name, last, err, n)
	}
}

// follower is a websocket client that checks, per task, that the lines
// arrive in order, each once, and counts them.
type follower struct {
	conn    *websocket.Conn
	mu      sync.Mutex
	next    map[int64]int // task id → next line number expected
	got     int
	err     error
	maxLag  time.Duration // longest time from print to arrival
	changed chan struct{}
	ended   chan error
}

// follow dials /api/ws. A nil rcvbuf keeps the system's socket buffer.
func (e *relEnv) follow(rcvbuf int) *follower {
	e.t.Helper()
	dialer := *websocket.DefaultDialer
	if rcvbuf > 0 {
		// A client that never reads must not hide megabytes in its kernel
		// buffer: set before connecting, so the TCP window stays small.
		dialer.NetDial = func(network, addr string) (net.Conn, error) {
			d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
				var serr error
				err := c.Control(func(fd uintptr) {
					serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
				})
				if err != nil {
					return err
				}
				return serr
			}}
			return d.Dial(network, addr)
		}
	}
	c, _, err := dialer.Dial("ws"+strings.TrimPrefix(e.url, "http")+"/api/ws", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return &follower{conn: c, next: map[int64]int{}, changed: make(chan struct{}, 1), ended: make(chan error, 1)}
}

var (
	logPrefix    = []byte(`{"type":"log","task_id":`)
	outputMarker = []byte(`,"output":"`)
	timeMarker   = []byte(`,"time":"`)
)

// read reads frames until the connection ends. It parses only what it
// checks, by hand: 200 of these share two cores with the server.
func (f *follower) read(tasks []relTask, pad string) {
	names := map[int64]string{}
	for _, rt := range tasks {
		names[rt.id] = rt.name
	}
	var buf bytes.Buffer
	for {
		_, r, err := f.conn.NextReader()
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(r)
		}
		if err != nil {
			f.ended <- err
			return
		}
		frame := buf.Bytes()
		if !bytes.HasPrefix(frame, logPrefix) {
			continue
		}
		rest := frame[len(logPrefix):]
		comma := bytes.IndexByte(rest, ',')
		id, _ := strconv.ParseInt(string(rest[:comma]), 10, 64)
		ti := bytes.Index(rest, timeMarker)
		oi := bytes.Index(rest, outputMarker)
		printed, _ := time.Parse(time.RFC3339Nano, string(rest[ti+len(timeMarker):oi-1]))
		output := string(rest[oi+len(outputMarker) : len(rest)-2])
		f.mu.Lock()
		want := f.next[id] + 1
		if f.err == nil && output != line(names[id], want, pad) {
			f.err = fmt.Errorf("task %d: line %d is %.40q", id, want, output)
		}
		f.next[id] = want
		f.got++
		f.maxLag = max(f.maxLag, time.Since(printed))
		f.mu.Unlock()
		select {
		case f.changed <- struct{}{}:
		default:
		}
	}
}

// waitFor waits until the follower has n lines in all, or fails.
func (f *follower) waitFor(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		f.mu.Lock()
		got, err := f.got, f.err
		f.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if got > n {
			t.Fatalf("a follower got %d lines, want %d", got, n)
		}
		select {
		case <-f.changed:
		case err := <-f.ended:
			t.Fatalf("a follower was cut after %d of %d lines: %v", got, n, err)
		case <-deadline:
			t.Fatalf("a follower has %d of %d lines after %s", got, n, timeout)
		}
	}
}

// faultProxy stands between runners and the manager and reads each HTTP
// request whole, then, by a seeded draw: passes it; delays it; splits it
// into small writes; drops it before the manager sees it; drops the
// manager's answer; or takes it away from the runner (who resends on a new
// connection) and delivers it to the manager later, once or twice, after
// newer batches: the out-of-order and duplicate batches a runner retrying
// through a flaky network causes.
type faultProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	rnd   *rand.Rand
	seen  map[string]int
	open  map[net.Conn]bool
	ended bool

	replays  sync.WaitGroup
	conns    sync.WaitGroup
	stale    atomic.Int64 // replays whose answer acknowledged past their last line
	replayed atomic.Int64
	failures chan string
}

func startFaultProxy(t *testing.T, target string, seed int64) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{ln: ln, target: strings.TrimPrefix(target, "http://"), rnd: rand.New(rand.NewSource(seed)),
		seen: map[string]int{}, open: map[net.Conn]bool{}, failures: make(chan string, 100)}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *faultProxy) URL() string { return "http://" + p.ln.Addr().String() }

// close stops accepting, waits for the late copies to be delivered, and
// ends the connections (idle keep-alive ones would stay open for minutes).
func (p *faultProxy) close() {
	p.ln.Close()
	p.replays.Wait()
	p.mu.Lock()
	p.ended = true
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.conns.Wait()
}

func (p *faultProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.ended {
			p.mu.Unlock()
			c.Close()
			return
		}
		p.open[c] = true
		p.conns.Add(1)
		p.mu.Unlock()
		go func() {
			defer p.conns.Done()
			p.forward(c)
			p.mu.Lock()
			delete(p.open, c)
			p.mu.Unlock()
		}()
	}
}

// faults a request may meet, by weight out of 20; the rest pass.
var faultKinds = []struct {
	name   string
	weight int
}{{"delay", 3}, {"split", 2}, {"drop-request", 2}, {"drop-answer", 2}, {"replay-later", 2}, {"replay-twice", 1}}

func (p *faultProxy) draw() (kind string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, d := p.rnd.Intn(20), time.Duration(p.rnd.Intn(40))*time.Millisecond
	for _, k := range faultKinds {
		if n < k.weight {
			p.seen[k.name]++
			return k.name, d
		}
		n -= k.weight
	}
	p.seen["pass"]++
	return "pass", d
}

func (p *faultProxy) counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.seen {
		out[k] = v
	}
	return out
}

func (p *faultProxy) forward(client net.Conn) {
	defer client.Close()
	var server net.Conn
	var fromServer *bufio.Reader
	defer func() {
		if server != nil {
			server.Close()
		}
	}()
	fromClient := bufio.NewReader(client)
	for {
		req, err := http.ReadRequest(fromClient)
		if err != nil {
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		kind, d := p.draw()
		switch kind {
		case "drop-request":
			return
		case "replay-later", "replay-twice":
			copies := 1
			if kind == "replay-twice" {
				copies = 2
			}
			p.replayLater(req, body, copies, 100*time.Millisecond+4*d)
			return // the runner sees its connection end and resends
		}
		if server == nil {
			if server, err = net.Dial("tcp", p.target); err != nil {
				return
			}
			fromServer = bufio.NewReader(server)
		}
		var wire bytes.Buffer
		req.Body = io.NopCloser(bytes.NewReader(body))
		if err := req.Write(&wire); err != nil {
			return
		}
		if kind == "delay" {
			time.Sleep(d)
		}
		if kind == "split" {
			// Small writes with pauses: the manager reads the request in
			// pieces, as over a congested link.
			piece := 64 + int(d/time.Millisecond)*32 // 64 B to 1.3 kB
			for b := wire.Bytes(); len(b) > 0; {
				n := min(len(b), piece)
				if _, err := server.Write(b[:n]); err != nil {
					return
				}
				b = b[n:]
				time.Sleep(time.Millisecond)
			}
		} else if _, err := server.Write(wire.Bytes()); err != nil {
			return
		}
		resp, err := http.ReadResponse(fromServer, req)
		if err != nil {
			return
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || kind == "drop-answer" {
			return // stored, but the runner never hears of it
		}
		if kind == "delay" {
			time.Sleep(d)
		}
		resp.Body = io.NopCloser(bytes.NewReader(answer))
		if err := resp.Write(client); err != nil {
			return
		}
	}
}

// fail records a problem with a late copy; past 100 the rest are dropped.
func (p *faultProxy) fail(msg string) {
	select {
	case p.failures <- msg:
	default:
	}
}

// replayLater delivers a copy of a request the runner gave up on, after
// the runner has resent it and moved on.
func (p *faultProxy) replayLater(req *http.Request, body []byte, copies int, after time.Duration) {
	var last int64
	if i := bytes.LastIndex(body, []byte(`"seq":`)); i >= 0 {
		rest := body[i+len(`"seq":`):]
		last, _ = strconv.ParseInt(string(rest[:bytes.IndexByte(rest, ',')]), 10, 64)
	}
	header := req.Header.Clone()
	path := req.URL.Path
	p.replays.Add(1)
	go func() {
		defer p.replays.Done()
		time.Sleep(after)
		for range copies {
			r, _ := http.NewRequest(http.MethodPost, "http://"+p.target+path, bytes.NewReader(body))
			r.Header = header.Clone()
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				p.fail("replay: " + err.Error())
				return
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				p.fail(fmt.Sprintf("a replayed batch was answered %d %s", resp.StatusCode, answer))
				return
			}
			p.replayed.Add(1)
			var ack struct{ Ack int64 }
			if i := bytes.Index(answer, []byte(`"ack":`)); i >= 0 {
				rest := answer[i+len(`"ack":`):]
				end := bytes.IndexAny(rest, ",}")
				ack.Ack, _ = strconv.ParseInt(string(rest[:end]), 10, 64)
			}
			if last > 0 && ack.Ack > last {
				p.stale.Add(1) // newer lines were stored before this batch arrived
			}
		}
	}()
}

// taskController is the owner reference by which a task's input Secret is
// its own (the runner endpoint takes a token from no other Secret).
func taskController(task *bastionv1.Task) metav1.OwnerReference {
	return *metav1.NewControllerRef(task, bastionv1.GroupVersion.WithKind("Task"))
}
