package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gorilla/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/apiserver"
	"github.com/bastion-dev/bastion/controllers"
	"github.com/bastion-dev/bastion/internal/hub"
	"github.com/bastion-dev/bastion/internal/runproto"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/store/pgtest"
)

// Issue #21, item 3: live output across replicas. Each test runs several
// API servers as replicas: each has its own manager cache over the one
// envtest kube-apiserver, its own hub and its own store over one real
// PostgreSQL database, as separate processes would. The harness's manager
// runs the reconcilers (the leader); the replicas serve the runner
// endpoint and /api/ws.

// replica is one API server of several.
type replica struct {
	name  string
	url   string
	cache client.Client // its own cache, as a replica's
	store store.Store
}

// haPostgres starts a PostgreSQL server for one test and returns the DSN
// of a fresh database on it.
func haPostgres(t *testing.T) (*pgtest.Server, string) {
	t.Helper()
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatalf("PostgreSQL for the replica test: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv, srv.NewDatabase(t)
}

// startReplica starts an API server over the env's cluster and the store
// at dsn, wired as the manager wires one (internal/cmd/manager.go).
func startReplica(t *testing.T, e *apiEnv, name, dsn string) *replica {
	t.Helper()
	mgr, ctx := newReplicaManager(t, e, name, ctrl.Options{}, nil)
	st, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	live := hub.New()
	if err := apiserver.PublishLive(ctx, mgr.GetCache(), st, live); err != nil {
		t.Fatal(err)
	}
	all := func(*http.Request) (func(int64) bool, bool) { return hub.All, true }
	srv := httptest.NewServer(apiserver.New(apiserver.Options{Console: fstest.MapFS{}, Client: mgr.GetClient(),
		Reader: mgr.GetAPIReader(), Informers: mgr.GetCache(), Store: st, Hub: live, WSAuth: all}))
	t.Cleanup(func() {
		live.Close() // ends the websockets, so the server's Close does not wait on them
		srv.Close()
		st.Close()
	})
	return &replica{name: name, url: srv.URL, cache: mgr.GetClient(), store: st}
}

// newReplicaManager is a manager of its own over the env's cluster, as
// another process would have: its own cache, informers and handlers (and
// what setup registers, when set), started now and stopped when the test
// ends (after the cleanups registered later, such as its servers'), so
// that nothing it holds outlives the test.
func newReplicaManager(t *testing.T, e *apiEnv, name string, opts ctrl.Options, setup func(ctrl.Manager) error) (ctrl.Manager, context.Context) {
	t.Helper()
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(bastionv1.AddToScheme(scheme))
	opts.Scheme, opts.Cache, opts.Client = scheme, controllers.CacheOptions(managerNamespace), controllers.ClientOptions()
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	mgr, err := ctrl.NewManager(e.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		if err := setup(mgr); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("replica %s: %v", name, err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatalf("replica %s: the cache did not sync", name)
	}
	return mgr, ctx
}

// wsWatch is a websocket client of one replica: it records every log line
// and every update status, per task, in arrival order.
type wsWatch struct {
	name    string
	mu      sync.Mutex
	lines   map[int64][]string
	updates map[int64][]string
	err     error
	changed chan struct{}
}

func watchReplica(t *testing.T, r *replica) *wsWatch {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(r.url, "http")+"/api/ws", http.Header{"Origin": {r.url}})
	if err != nil {
		t.Fatalf("websocket to replica %s: %v", r.name, err)
	}
	t.Cleanup(func() { conn.Close() })
	w := &wsWatch{name: r.name, lines: map[int64][]string{}, updates: map[int64][]string{}, changed: make(chan struct{}, 1)}
	go func() {
		for {
			_, data, err := conn.ReadMessage()
			var frame struct {
				Type   string `json:"type"`
				TaskID int64  `json:"task_id"`
				Output string `json:"output"`
				Status string `json:"status"`
			}
			if err == nil {
				err = json.Unmarshal(data, &frame)
			}
			w.mu.Lock()
			switch {
			case err != nil:
				w.err = err
			case frame.Type == "log":
				w.lines[frame.TaskID] = append(w.lines[frame.TaskID], frame.Output)
			case frame.Type == "update":
				w.updates[frame.TaskID] = append(w.updates[frame.TaskID], frame.Status)
			}
			w.mu.Unlock()
			select {
			case w.changed <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return w
}

// until waits until cond holds of what the client received, or fails
// after timeout. cond runs under the client's lock.
func (w *wsWatch) until(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !w.within(timeout, cond) {
		w.mu.Lock()
		defer w.mu.Unlock()
		t.Fatalf("replica %s's client: %s not seen within %s (error %v)", w.name, what, timeout, w.err)
	}
}

// within reports whether cond comes to hold before timeout.
func (w *wsWatch) within(timeout time.Duration, cond func() bool) bool {
	deadline := time.After(timeout)
	for {
		w.mu.Lock()
		ok, failed := cond(), w.err != nil
		w.mu.Unlock()
		if ok || failed {
			return ok
		}
		select {
		case <-w.changed:
		case <-deadline:
			return false
		}
	}
}

func (w *wsWatch) linesOf(task int64) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines[task]...)
}

// probeTask is a task no test project has (the clients here tell tasks
// by task id alone, so both ids are out of reach): lines appended to it
// straight into the store show that a replica's feed is live.
var probeTask = store.TaskKey{ProjectID: 1 << 40, TaskID: 1 << 40}

// waitLive appends probe lines through st until the client of a replica
// receives one: from then on, that replica's listener hears every
// notification. (Before it listens, a task's first lines would be, for
// that replica, lines stored before it heard of the task.)
func waitLive(t *testing.T, st store.Store, w *wsWatch) {
	t.Helper()
	last, err := st.LastSeq(t.Context(), probeTask)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for seq := last + 1; ; seq++ {
		if err := st.AppendLines(t.Context(), probeTask, []store.Line{{Seq: seq, Time: time.Now(), Output: "probe"}}); err != nil {
			t.Fatal(err)
		}
		if w.within(200*time.Millisecond, func() bool { return len(w.lines[probeTask.TaskID]) > 0 }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s never published a probe line", w.name)
		}
	}
}

// post sends a batch to a replica's runner endpoint as the task's runner.
func (r *replica) post(t *testing.T, lt liveTask, b runproto.Batch) {
	t.Helper()
	body, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, r.url+lt.eventsRoute, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+lt.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a batch to replica %s = %d %s", r.name, resp.StatusCode, answer)
	}
}

// waitTask waits until the replica's cache holds the task, as a runner's
// first batch would find it after its retries.
func (r *replica) waitTask(t *testing.T, lt liveTask) {
	t.Helper()
	eventually(t, 20*time.Second, func() (bool, string) {
		err := r.cache.Get(t.Context(), client.ObjectKey{Namespace: lt.ns, Name: lt.name}, &bastionv1.Task{})
		return err == nil, fmt.Sprintf("replica %s's cache has no task %s: %v", r.name, lt.name, err)
	})
}

// batchLines is lines from..to of a test task, "line N".
func batchLines(from, to int64) runproto.Batch {
	var b runproto.Batch
	for seq := from; seq <= to; seq++ {
		b.Lines = append(b.Lines, lineAt(seq, fmt.Sprintf("line %d", seq)))
	}
	return b
}

// checkLines fails unless got is "line 1".."line n", each once, in order.
func checkLines(t *testing.T, who string, got []string, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%s received %d lines, want %d", who, len(got), n)
	}
	for i, out := range got {
		if want := fmt.Sprintf("line %d", i+1); out != want {
			t.Fatalf("%s: line %d is %q, want %q (a line missing, repeated or out of order)", who, i+1, out, want)
		}
	}
}

// A runner posts its batches to replicas A and B in turn, out of order
// and with resends; a client of replica C, which never receives a batch,
// gets every line once and in order, as do the clients of A and B, and
// every replica's client gets the task's update frames up to its final
// status, each from its own replica's Task informer.
func TestHALive_everyReplicasClientsGetEveryLineOnceInOrderAndTheUpdates(t *testing.T) {
	e := startEnv(t)
	_, dsn := haPostgres(t)
	a, b, c := startReplica(t, e, "A", dsn), startReplica(t, e, "B", dsn), startReplica(t, e, "C", dsn)
	watches := []*wsWatch{watchReplica(t, a), watchReplica(t, b), watchReplica(t, c)}
	for _, w := range watches {
		waitLive(t, a.store, w)
	}
	p := newTplProject(t, e)
	tpl := p.createTemplate(t, "Across replicas", nil)
	lt := startLiveTask(t, p, tpl.ID)
	for _, r := range []*replica{a, b, c} {
		r.waitTask(t, lt)
	}

	// 20 batches of 10 lines. Each pair goes to B first (a gap: nothing is
	// published), then to A (which fills it), then again to B (a resend
	// after a lost ack: nothing new).
	const batches, size = 20, 10
	for i := int64(0); i < batches; i += 2 {
		first, second := batchLines(i*size+1, (i+1)*size), batchLines((i+1)*size+1, (i+2)*size)
		b.post(t, lt, second)
		a.post(t, lt, first)
		b.post(t, lt, first)
	}
	a.post(t, lt, runproto.Batch{Exit: &runproto.Exit{Code: 0}})

	const n = batches * size
	for _, w := range watches {
		w.until(t, 30*time.Second, "the final update", func() bool {
			u := w.updates[lt.id]
			return len(u) > 0 && bastionv1.TaskStatusValue(u[len(u)-1]).Finished()
		})
		w.until(t, 30*time.Second, fmt.Sprintf("%d lines", n), func() bool { return len(w.lines[lt.id]) >= n })
	}
	for _, w := range watches {
		checkLines(t, "replica "+w.name+"'s client", w.linesOf(lt.id), n)
		w.mu.Lock()
		updates := w.updates[lt.id]
		w.mu.Unlock()
		if last := updates[len(updates)-1]; last != string(bastionv1.TaskSuccess) {
			t.Errorf("replica %s's client: updates %v, want them to end with success", w.name, updates)
		}
	}
}

// A replica cut off from PostgreSQL misses the notifications of every
// batch stored meanwhile (its listener cannot reconnect, and it receives
// no batch itself); once it is back, its listener reconnects, its
// publisher catches up from the store, and its client gets every line
// once and in order, although no batch comes after the partition.
func TestHALive_aReplicaThatMissedNotificationsCatchesUpFromTheStore(t *testing.T) {
	e := startEnv(t)
	t.Cleanup(func() {
		if t.Failed() {
			for _, l := range strings.Split(e.Log.String(), "\n") {
				if strings.Contains(l, "line") {
					t.Log(l)
				}
			}
		}
	})
	pg, dsn := haPostgres(t)
	link := newCuttableLink(t, fmt.Sprintf("127.0.0.1:%d", pg.Port()))
	a := startReplica(t, e, "A", dsn)
	c := startReplica(t, e, "C", strings.Replace(dsn, fmt.Sprintf(":%d/", pg.Port()), ":"+link.port()+"/", 1))
	wc := watchReplica(t, c)
	waitLive(t, a.store, wc)
	p := newTplProject(t, e)
	tpl := p.createTemplate(t, "Partitioned", nil)
	lt := startLiveTask(t, p, tpl.ID)
	a.waitTask(t, lt)
	c.waitTask(t, lt)

	a.post(t, lt, batchLines(1, 50))
	wc.until(t, 30*time.Second, "50 lines", func() bool { return len(wc.lines[lt.id]) >= 50 })

	link.cut(true)
	for from := int64(51); from <= 200; from += 50 {
		a.post(t, lt, batchLines(from, from+49))
	}
	// C cannot have them: it got no batch, and it reaches no database.
	if got := len(wc.linesOf(lt.id)); got != 50 {
		t.Fatalf("replica C's client got %d lines while C was cut off, want the 50 from before", got)
	}
	link.cut(false)
	wc.until(t, 30*time.Second, "200 lines", func() bool { return len(wc.lines[lt.id]) >= 200 })

	a.post(t, lt, runproto.Batch{Exit: &runproto.Exit{Code: 0}})
	wc.until(t, 30*time.Second, "the final update", func() bool {
		u := wc.updates[lt.id]
		return len(u) > 0 && bastionv1.TaskStatusValue(u[len(u)-1]).Finished()
	})
	checkLines(t, "replica C's client", wc.linesOf(lt.id), 200)
}

// cuttableLink is a TCP relay to PostgreSQL that a test can cut: every
// connection through it is closed, and new ones are closed at once, until
// it is restored. It is one replica's network to the database.
type cuttableLink struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]struct{}
}

func newCuttableLink(t *testing.T, target string) *cuttableLink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &cuttableLink{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { ln.Close(); l.cut(true) })
	go l.serve()
	return l
}

func (l *cuttableLink) port() string {
	return fmt.Sprint(l.ln.Addr().(*net.TCPAddr).Port)
}

func (l *cuttableLink) serve() {
	for {
		in, err := l.ln.Accept()
		if err != nil {
			return
		}
		go l.relay(in)
	}
}

func (l *cuttableLink) relay(in net.Conn) {
	out, err := net.Dial("tcp", l.target)
	if err != nil {
		in.Close()
		return
	}
	if !l.track(in, out) {
		in.Close()
		out.Close()
		return
	}
	go func() { io.Copy(out, in); out.Close() }()
	io.Copy(in, out)
	in.Close()
}

// track records a relayed pair; false when the link is cut.
func (l *cuttableLink) track(conns ...net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return false
	}
	for _, c := range conns {
		l.conns[c] = struct{}{}
	}
	return true
}

func (l *cuttableLink) cut(down bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.down = down
	if down {
		for c := range l.conns {
			c.Close()
		}
		l.conns = map[net.Conn]struct{}{}
	}
}

// A task whose project is deleted while it runs is deleted after its
// Project is gone from the cache (the Project's finalizer goes as soon as
// the namespace's deletion is asked): the publisher must still forget it,
// or every such task stays followed, and read at every catch-up, for the
// life of the replica.
func TestHALive_aTaskOfADeletedProjectIsForgotten(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	tpl := p.createTemplate(t, "Deleted with its project", nil)
	lt := startLiveTask(t, p, tpl.ID)

	st, err := store.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "lines.db"))
	if err != nil {
		t.Fatal(err)
	}
	live := hub.New()
	t.Cleanup(func() { live.Close(); st.Close() })
	var follows func(store.TaskKey) bool
	mgr, _ := newReplicaManager(t, e, "deleted-project", ctrl.Options{}, func(mgr ctrl.Manager) (err error) {
		follows, err = apiserver.StartLinePublisher(t.Context(), mgr.GetCache(), mgr.GetCache(), st, live)
		return err
	})

	if err := st.AppendLines(t.Context(), lt.key, []store.Line{{Seq: 1, Time: time.Now(), Output: "line 1"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() (bool, string) { return follows(lt.key), "the task is not followed" })

	project := e.projectObject(t, p.pid)
	if err := e.K8s.Delete(t.Context(), project); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() (bool, string) {
		err := mgr.GetClient().Get(t.Context(), client.ObjectKeyFromObject(project), &bastionv1.Project{})
		return apierrors.IsNotFound(err), fmt.Sprintf("the project is still in the cache: %v", err)
	})
	task := &bastionv1.Task{}
	if err := e.K8s.Get(t.Context(), client.ObjectKey{Namespace: lt.ns, Name: lt.name}, task); err != nil {
		t.Fatal(err)
	}
	if err := e.K8s.Delete(t.Context(), task); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() (bool, string) {
		return !follows(lt.key), "the deleted task of a deleted project is still followed"
	})
}
