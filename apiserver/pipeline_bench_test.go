package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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
	"github.com/bastion-dev/bastion/internal/runner"
	"github.com/bastion-dev/bastion/internal/store"
)

// pipeline is the whole path of a line: the runner's Streamer, HTTP, the
// manager's runner endpoint, the SQLite store, the hub and a websocket
// client. Only the Kubernetes reads of the endpoint (the task, its project
// and its token: three reads a batch) are answered from memory.
type pipeline struct {
	streamer *runner.Streamer
	ws       *websocket.Conn
	cancel   context.CancelFunc
}

func newPipeline(b *testing.B) *pipeline {
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

	output, err := store.Open(context.Background(), "sqlite://"+filepath.Join(b.TempDir(), "bench.db"))
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

	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/api/ws", http.Header{"Origin": {srv.URL}})
	if err != nil {
		b.Fatal(err)
	}
	s := runner.NewStreamer(srv.URL, "bastion-bench", "t1", "tok", io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	go s.Run(ctx)
	b.Cleanup(func() {
		cancel()
		ws.Close()
		srv.Close()
		live.Close()
		output.Close()
	})
	return &pipeline{streamer: s, ws: ws, cancel: cancel}
}

// readLogs reads n log frames and calls fn with each output; with a nil
// fn it only recognises log frames (the server writes "type" first), so
// the client spends its share of the two cores on reading, not parsing.
// It runs on its own goroutine, so it returns its error.
func (p *pipeline) readLogs(n int, fn func(output string)) error {
	logPrefix := []byte(`{"type":"log"`)
	var frame struct {
		Type   string `json:"type"`
		Output string `json:"output"`
	}
	for got := 0; got < n; {
		_, data, err := p.ws.ReadMessage()
		if err != nil {
			return fmt.Errorf("after %d lines: %w", got, err)
		}
		if fn == nil {
			if bytes.HasPrefix(data, logPrefix) {
				got++
			}
			continue
		}
		if err := json.Unmarshal(data, &frame); err != nil {
			return err
		}
		if frame.Type == "log" {
			got++
			fn(frame.Output)
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
	const lines = 1_000_000
	for i := 0; i < b.N; i++ {
		p := newPipeline(b)
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- p.readLogs(lines, nil) }()
		for n := 1; n <= lines; n++ {
			p.streamer.Line(time.Now(), "TASK [deploy] ok: [web-"+strconv.Itoa(n%50)+"] => changed=false")
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		b.ReportMetric(lines/elapsed.Seconds(), "lines/s")
		b.ReportMetric(elapsed.Seconds(), "s/1M-lines")
	}
}

// BenchmarkPipelineLatency: a task prints 1,000 lines/s; each line carries
// the time it was printed, and the websocket client measures how long it
// took to arrive. Issue #4's target is p99 under 50 ms.
//
//	go test ./apiserver -run '^$' -bench PipelineLatency -benchtime 1x
func BenchmarkPipelineLatency(b *testing.B) {
	const lines = 5000 // five seconds at 1,000 lines/s
	for i := 0; i < b.N; i++ {
		p := newPipeline(b)
		latencies := make([]time.Duration, 0, lines)
		done := make(chan error, 1)
		go func() {
			done <- p.readLogs(lines, func(output string) {
				sent, _ := strconv.ParseInt(output, 10, 64)
				latencies = append(latencies, time.Since(time.Unix(0, sent)))
			})
		}()
		tick := time.NewTicker(time.Millisecond)
		for n := 0; n < lines; n++ {
			<-tick.C
			now := time.Now()
			p.streamer.Line(now, strconv.FormatInt(now.UnixNano(), 10))
		}
		tick.Stop()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
		ms := func(q float64) float64 { return float64(latencies[int(q*float64(len(latencies)-1))]) / 1e6 }
		b.ReportMetric(ms(0.50), "p50-ms")
		b.ReportMetric(ms(0.99), "p99-ms")
		b.ReportMetric(ms(1), "max-ms")
	}
}
