package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/hub"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/store/pgtest"
)

// pipeline is the whole path of a line: a real runner process (the
// `bastion runner` of this tree) running a bash script from a git
// repository, the script's stdout and stderr on the runner's pipe, the
// runner's masking sink and Streamer, HTTP, the manager's runner endpoint,
// the store, its line feed, the publisher, the hub and a websocket client.
// Only the Kubernetes reads of the endpoint (the task, its project and its
// token: three reads a batch) are answered from memory.
type pipeline struct {
	runnerURL string // where the runner posts: a replica, or a proxy in front of several
	ws        *websocket.Conn
}

// newPipeline is one manager on SQLite.
func newPipeline(b *testing.B) *pipeline {
	b.Helper()
	return newPipelineOver(b, []string{"sqlite://" + filepath.Join(b.TempDir(), "bench.db")}, []int{0}, 0)
}

// newPipelineOver runs one API server per DSN, as replicas (PostgreSQL:
// the same database). The runner posts to the replicas runnerTo, in turn
// batch after batch; the websocket client is on replica clientOn.
func newPipelineOver(b *testing.B, dsns []string, runnerTo []int, clientOn int) *pipeline {
	b.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = bastionv1.AddToScheme(scheme)
	task := &bastionv1.Task{
		ObjectMeta: metav1.ObjectMeta{Name: "t1", Namespace: "bastion-bench", UID: "uid-1", Labels: map[string]string{bastionv1.LabelID: "7"}},
		Status:     bastionv1.TaskStatus{Status: bastionv1.TaskRunning, RunName: "t1"},
	}
	project := &bastionv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "bench", Labels: map[string]string{bastionv1.LabelID: "3"}}}
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "t1-input", Namespace: "bastion-bench",
		OwnerReferences: []metav1.OwnerReference{taskController(task)}}, Data: map[string][]byte{"token": []byte("tok")}}
	k8s := fake.NewClientBuilder().WithScheme(scheme).WithObjects(task, project, token).WithStatusSubresource(task).Build()

	var urls []string
	var stores []store.Store
	for _, dsn := range dsns {
		output, err := store.Open(context.Background(), dsn)
		if err != nil {
			b.Fatal(err)
		}
		live := hub.New()
		if err := PublishLines(b.Context(), nil, nil, output, live); err != nil {
			b.Fatal(err)
		}
		allow := func(*http.Request) (func(int64) bool, bool) { return func(int64) bool { return true }, true }
		// The client's queue is raised from 4,096 messages: a benchmark client
		// sharing the two cores with the whole pipeline falls that far behind
		// during a 200,000 lines/s burst, and the server rightly drops such a
		// client (it would re-read /output). What is measured here is the
		// pipeline's rate, not that policy.
		srv := httptest.NewServer(New(Options{Console: fstest.MapFS{}, Client: k8s, Reader: k8s, Store: output, Hub: live,
			WSAuth: allow, WS: WSOptions{Buffer: 2_000_000}}))
		b.Cleanup(func() {
			live.Close()
			srv.Close()
			output.Close()
		})
		urls, stores = append(urls, srv.URL), append(stores, output)
	}

	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(urls[clientOn], "http")+"/api/ws", http.Header{"Origin": {urls[clientOn]}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ws.Close() })
	waitFeedLive(b, stores[runnerTo[0]], ws)
	var targets []string
	for _, i := range runnerTo {
		targets = append(targets, urls[i])
	}
	return &pipeline{runnerURL: roundRobin(b, targets), ws: ws}
}

// benchProbe is a task of no benchmark: lines stored for it show that the
// client's replica hears the feed.
var benchProbe = store.TaskKey{ProjectID: 3, TaskID: 1 << 40}

// waitFeedLive stores probe lines until the client receives one: from
// then on the client's replica hears every report (a PostgreSQL listener
// connects after the server starts). readLogs counts the task's lines
// only, so a late probe line does not count.
func waitFeedLive(b *testing.B, st store.Store, ws *websocket.Conn) {
	b.Helper()
	probe := []byte(fmt.Sprintf(`{"type":"log","task_id":%d,`, benchProbe.TaskID))
	seen := make(chan error, 1)
	go func() {
		for {
			_, data, err := ws.ReadMessage()
			if err != nil || bytes.HasPrefix(data, probe) {
				seen <- err
				return
			}
		}
	}()
	for seq := int64(1); seq <= 100; seq++ {
		if err := st.AppendLines(b.Context(), benchProbe, []store.Line{{Seq: seq, Time: time.Now(), Output: "probe"}}); err != nil {
			b.Fatal(err)
		}
		select {
		case err := <-seen:
			if err != nil {
				b.Fatal(err)
			}
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
	b.Fatal("the client's replica published no probe line in 100 tries")
}

// roundRobin is the URL a runner posts to: a single target itself, else a
// proxy that sends each request to the next target in turn, as a load
// balancer in front of replicas does.
func roundRobin(b *testing.B, targets []string) string {
	if len(targets) == 1 {
		return targets[0]
	}
	var next atomic.Uint64
	parsed := make([]*url.URL, len(targets))
	for i, t := range targets {
		parsed[i], _ = url.Parse(t)
	}
	proxy := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(parsed[next.Add(1)%uint64(len(parsed))]) },
		// The runner's last request is cut when the benchmark ends; the
		// runner would retry, so it is no news.
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, err.Error(), http.StatusBadGateway)
		},
	})
	b.Cleanup(proxy.Close)
	return proxy.URL
}

// readLogs reads the task's log frames until counts has accepted n of
// them (the runner's own lines, git's for the checkout, are not the
// script's). It notes when the first log frame arrived in *first, if
// given. It runs on its own goroutine, so it returns its error.
func (p *pipeline) readLogs(n int, counts func(frame []byte) bool, first *time.Time) error {
	logPrefix := []byte(`{"type":"log","task_id":7,`) // the server writes "type" first
	for got := 0; got < n; {
		_, data, err := p.ws.ReadMessage()
		if err != nil {
			return fmt.Errorf("after %d lines: %w", got, err)
		}
		if !bytes.HasPrefix(data, logPrefix) {
			continue
		}
		if first != nil && first.IsZero() {
			*first = time.Now()
		}
		if counts(data) {
			got++
		}
	}
	return nil
}

// BenchmarkPipelineThroughput: one task prints 1,000,000 lines; the clock
// runs until the websocket client has read the last. Issue #4's target is
// at least 200,000 lines/s.
//
//	go test ./apiserver -run '^$' -bench PipelineThroughput -benchtime 1x
func BenchmarkPipelineThroughput(b *testing.B) {
	benchThroughput(b, 1_000_000, newPipeline)
}

// BenchmarkHAPipelineThroughput: three replicas on one PostgreSQL; the
// runner's batches go to each in turn (a round-robin balancer), the client
// is on the third. 200,000 lines: PostgreSQL runs on the same two cores.
// replicas=1 is one manager on PostgreSQL, for comparison.
//
//	go test ./apiserver -run '^$' -bench HAPipelineThroughput -benchtime 1x
func BenchmarkHAPipelineThroughput(b *testing.B) {
	b.Run("replicas=1", func(b *testing.B) {
		dsn := benchPostgres(b)
		benchThroughput(b, 200_000, func(b *testing.B) *pipeline { return newPipelineOver(b, []string{dsn}, []int{0}, 0) })
	})
	b.Run("replicas=3", func(b *testing.B) {
		dsn := benchPostgres(b)
		benchThroughput(b, 200_000, func(b *testing.B) *pipeline {
			return newPipelineOver(b, []string{dsn, dsn, dsn}, []int{0, 1, 2}, 2)
		})
	})
}

// benchThroughput runs a script printing lines lines through a real
// runner; the clock runs from the runner's start (its clone included)
// until the websocket client has read the last line.
func benchThroughput(b *testing.B, lines int, newPipeline func(*testing.B) *pipeline) {
	for i := 0; i < b.N; i++ {
		p := newPipeline(b)
		var first time.Time
		done := make(chan error, 1)
		start := time.Now()
		// The client only looks for the script's text, so that it spends its
		// share of the two cores on reading, not parsing.
		floodLine := []byte("ok: [web-")
		go func() {
			done <- p.readLogs(lines, func(frame []byte) bool { return bytes.Contains(frame, floodLine) }, &first)
		}()
		wait := p.startRunner(b, floodScript(lines))
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		if err := wait(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(lines)/elapsed.Seconds(), "lines/s")
		toFirst := first.Sub(start)
		b.ReportMetric(float64(lines)/(elapsed-toFirst).Seconds(), "lines/s-after-first")
		b.ReportMetric(float64(toFirst)/1e6, "first-line-ms")
	}
}

// BenchmarkPipelineLatency: a task prints 1,000 lines/s; each line carries
// the time it was printed, and the websocket client measures how long it
// took to arrive. Issue #4's target is p99 under 50 ms.
//
//	go test ./apiserver -run '^$' -bench PipelineLatency -benchtime 1x
func BenchmarkPipelineLatency(b *testing.B) {
	benchLatency(b, newPipeline)
}

// BenchmarkHAPipelineLatency: the same on PostgreSQL with two replicas,
// the runner posting to the first. client=other: the client is on the
// second, which learns of each batch from the line feed (NOTIFY) and reads
// it from the database; client=same: on the first, for comparison.
//
//	go test ./apiserver -run '^$' -bench HAPipelineLatency -benchtime 1x
func BenchmarkHAPipelineLatency(b *testing.B) {
	for _, c := range []struct {
		name     string
		clientOn int
	}{{"client=other", 1}, {"client=same", 0}} {
		b.Run(c.name, func(b *testing.B) {
			dsn := benchPostgres(b)
			benchLatency(b, func(b *testing.B) *pipeline { return newPipelineOver(b, []string{dsn, dsn}, []int{0}, c.clientOn) })
		})
	}
}

// benchPostgres starts a PostgreSQL server for a benchmark and returns
// the DSN of a fresh database.
func benchPostgres(b *testing.B) string {
	srv, err := pgtest.Start()
	if err != nil {
		b.Fatalf("PostgreSQL for the benchmark: %v", err)
	}
	b.Cleanup(func() { srv.Close() })
	return srv.NewDatabase(b)
}

// benchLatency runs a script printing 1,000 lines/s, each the time it was
// printed, through a real runner; the client measures how long each took
// to arrive.
func benchLatency(b *testing.B, newPipeline func(*testing.B) *pipeline) {
	const lines = 5000 // five seconds at 1,000 lines/s
	for i := 0; i < b.N; i++ {
		p := newPipeline(b)
		latencies := make([]time.Duration, 0, lines)
		done := make(chan error, 1)
		go func() {
			var frame struct {
				Output string `json:"output"`
			}
			done <- p.readLogs(lines, func(data []byte) bool {
				if json.Unmarshal(data, &frame) != nil {
					return false
				}
				printed, err := strconv.ParseInt(frame.Output, 10, 64)
				if err != nil {
					return false // git's lines for the checkout
				}
				latencies = append(latencies, time.Since(time.UnixMicro(printed)))
				return true
			}, nil)
		}()
		wait := p.startRunner(b, tickScript(lines))
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		if err := wait(); err != nil {
			b.Fatal(err)
		}
		sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
		ms := func(q float64) float64 { return float64(latencies[int(q*float64(len(latencies)-1))]) / 1e6 }
		b.ReportMetric(ms(0.50), "p50-ms")
		b.ReportMetric(ms(0.99), "p99-ms")
		b.ReportMetric(ms(1), "max-ms")
	}
}
