package apiserver

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/bastion-dev/bastion/internal/hub"
)

// allow signs everyone in and lets them see the projects filter allows.
func allow(filter func(int64) bool) WSAuth {
	return func(*http.Request) (func(int64) bool, bool) { return filter, true }
}

// wsServer serves WSHandler and reports each connection's end: the
// handler returns only when the connection is torn down and unsubscribed.
func wsServer(t testing.TB, h *hub.Hub, auth WSAuth, opts WSOptions) (url string, ended <-chan struct{}) {
	t.Helper()
	ws := WSHandler(h, auth, opts)
	done := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws.ServeHTTP(w, r)
		done <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), done
}

func dial(t *testing.T, url string, header http.Header) *websocket.Conn {
	t.Helper()
	c, resp, err := websocket.DefaultDialer.Dial(url, header)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// refused dials expecting a refusal before the upgrade, with a JSON error.
func refused(t *testing.T, url string, header http.Header) (int, string) {
	t.Helper()
	c, resp, err := websocket.DefaultDialer.Dial(url, header)
	if err == nil {
		_ = c.Close()
		t.Fatal("the upgrade succeeded")
	}
	if resp == nil {
		t.Fatalf("no HTTP answer: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var e errorBody
	if json.Unmarshal(body, &e) != nil || e.Error == "" {
		t.Errorf("body %q is not {\"error\": ...}", body)
	}
	return resp.StatusCode, e.Error
}

func within[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("timed out after %v waiting for %s", d, what)
		panic("unreachable")
	}
}

// readUntilClosed reads and discards frames until the connection ends.
func readUntilClosed(c *websocket.Conn) <-chan error {
	out := make(chan error, 1)
	go func() {
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				out <- err
				return
			}
		}
	}()
	return out
}

func TestWS_answers401BeforeTheUpgradeWithoutAuth(t *testing.T) {
	h := hub.New()
	url, _ := wsServer(t, h, func(*http.Request) (func(int64) bool, bool) { return nil, false }, WSOptions{})
	if code, _ := refused(t, url, nil); code != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", code)
	}
	if h.Len() != 0 {
		t.Errorf("a refused client holds a subscription")
	}
}

func TestWS_refusesCrossOriginAndAcceptsSameOrigin(t *testing.T) {
	url, _ := wsServer(t, hub.New(), allow(hub.All), WSOptions{})
	code, msg := refused(t, url, http.Header{"Origin": {"https://evil.example"}})
	if code != http.StatusForbidden || !strings.Contains(msg, "evil.example") {
		t.Fatalf("cross-origin = %d %q, want 403 naming the origin", code, msg)
	}
	host := strings.TrimPrefix(url, "ws://")
	dial(t, url, http.Header{"Origin": {"http://" + host}})
}

func TestWS_sendsContractFramesOfAllowedProjectsOnly(t *testing.T) {
	h := hub.New()
	url, _ := wsServer(t, h, allow(func(p int64) bool { return p == 1 }), WSOptions{})
	c := dial(t, url, nil)

	at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	hidden, line, update := hub.Log(2, 20, at, "secret of project 2"), hub.Log(1, 10, at, "PLAY [all]"),
		hub.Update(hub.TaskUpdate{TaskID: 10, ProjectID: 1, TemplateID: 3, Status: "success", Start: &at, End: &at})
	for _, m := range []hub.Message{hidden, line, update} {
		h.Publish(m)
	}
	for _, want := range []hub.Message{line, update} {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		kind, frame, err := c.ReadMessage()
		if err != nil || kind != websocket.TextMessage || string(frame) != string(want.Frame) {
			t.Fatalf("read %d %s %v, want text %s", kind, frame, err, want.Frame)
		}
	}
}

func TestWS_dropsAClientThatNeverReadsWhileAnotherReceivesEveryLine(t *testing.T) {
	const lines, batch = 10_000, 100
	h := hub.New()
	url, ended := wsServer(t, h, allow(hub.All), WSOptions{Buffer: 4 * batch})
	stuck := dial(t, url, nil)
	reader := dial(t, url, nil)

	// The reader reports every batch it got, in order, so the publisher
	// goes at the reader's pace, as the runner's stream would.
	progress, failed := make(chan int), make(chan error, 1)
	go func() {
		for i := range lines {
			_, frame, err := reader.ReadMessage()
			var m struct{ Output string }
			if err == nil {
				err = json.Unmarshal(frame, &m)
			}
			if err == nil && !strings.HasPrefix(m.Output, strconv.Itoa(i)+" ") {
				err = errors.New("line " + strconv.Itoa(i) + " is " + m.Output[:min(20, len(m.Output))])
			}
			if err != nil {
				failed <- err
				return
			}
			if (i+1)%batch == 0 {
				progress <- i + 1
			}
		}
	}()

	// 1 KiB lines: 10 MiB in all, more than the stuck client's socket
	// buffers can hide, so its queue on the server must overflow.
	pad := strings.Repeat("x", 1024)
	var slowest time.Duration
	for i := range lines {
		start := time.Now()
		h.Publish(hub.Log(1, 1, start, strconv.Itoa(i)+" "+pad))
		slowest = max(slowest, time.Since(start))
		if (i+1)%batch == 0 {
			select {
			case got := <-progress:
				if got != i+1 {
					t.Fatalf("reader at %d, publisher at %d", got, i+1)
				}
			case err := <-failed:
				t.Fatalf("the reading client: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatalf("the reading client stalled after line %d", i+1-batch)
			}
		}
	}
	t.Logf("slowest Publish: %v", slowest)
	if slowest > time.Second {
		t.Errorf("a Publish took %v: it waited for a client", slowest)
	}
	if h.Len() != 1 {
		t.Fatalf("%d subscriptions open, want 1: the stuck client was not dropped", h.Len())
	}

	// When the stuck client reads at last, what its socket held is followed
	// by the close frame with the reason, and the server ends it.
	err := within(t, readUntilClosed(stuck), 30*time.Second, "the stuck client's close")
	var closeErr *websocket.CloseError
	if !errors.As(err, &closeErr) || closeErr.Code != websocket.CloseTryAgainLater ||
		!strings.HasPrefix(closeErr.Text, "too slow: ") || !strings.HasSuffix(closeErr.Text, "re-read /output") {
		t.Fatalf("stuck client ended with %v, want close 1013 with the reason", err)
	}
	within(t, ended, 30*time.Second, "the server to end the stuck connection")
}

func TestWS_cutsAClientThatNeverReadsAfterTheWriteTimeout(t *testing.T) {
	h := hub.New()
	url, ended := wsServer(t, h, allow(hub.All), WSOptions{Buffer: 16, WriteTimeout: 200 * time.Millisecond})
	stuck := dial(t, url, nil)

	// Fill its socket buffers and then its queue on the server.
	pad := strings.Repeat("x", 1024)
	for i := 0; h.Len() > 0; i++ {
		if i == 1_000_000 {
			t.Fatal("1 GiB published and the client that never reads still holds a subscription")
		}
		h.Publish(hub.Log(1, 1, time.Now(), pad))
	}
	// Whether or not the close frame still fits in its socket, the client
	// never answers it: the server cuts the connection after WriteTimeout.
	within(t, ended, 10*time.Second, "the server to cut the connection")
	within(t, readUntilClosed(stuck), 10*time.Second, "the client to see the end")
}

func TestWS_pingKeepsAnIdleClientAliveAndDropsADeadOne(t *testing.T) {
	h := hub.New()
	const interval = 100 * time.Millisecond
	url, ended := wsServer(t, h, allow(hub.All), WSOptions{PingInterval: interval})

	alive, dead := dial(t, url, nil), dial(t, url, nil)
	pings := make(chan struct{}, 100)
	pong := alive.PingHandler()
	alive.SetPingHandler(func(data string) error {
		pings <- struct{}{}
		return pong(data)
	})
	dead.SetPingHandler(func(string) error { return nil }) // never answers
	aliveFrames := make(chan string, 1)
	go func() {
		if _, frame, err := alive.ReadMessage(); err == nil {
			aliveFrames <- string(frame)
		}
	}()
	deadEnd := readUntilClosed(dead)

	err := within(t, deadEnd, 10*time.Second, "the dead client to be dropped")
	var closeErr *websocket.CloseError
	if !errors.As(err, &closeErr) || closeErr.Code != websocket.ClosePolicyViolation ||
		!strings.Contains(closeErr.Text, "no answer to ping") {
		t.Fatalf("dead client ended with %v, want close 1008 naming the ping", err)
	}
	within(t, ended, 10*time.Second, "the server to end the dead connection")

	// Ten pings are five times the allowance: only pongs kept it open.
	for range 10 {
		within(t, pings, 10*time.Second, "a ping")
	}
	m := hub.Log(1, 1, time.Now(), "still here")
	h.Publish(m)
	if got := within(t, aliveFrames, 10*time.Second, "the idle client's line"); got != string(m.Frame) {
		t.Fatalf("idle client read %s", got)
	}
	if h.Len() != 1 {
		t.Errorf("%d subscriptions, want the idle client's only", h.Len())
	}
}

func TestWS_closesGoingAwayWhenTheHubCloses(t *testing.T) {
	h := hub.New()
	url, ended := wsServer(t, h, allow(hub.All), WSOptions{})
	end := readUntilClosed(dial(t, url, nil))
	h.Close()
	var closeErr *websocket.CloseError
	if err := within(t, end, 10*time.Second, "the close"); !errors.As(err, &closeErr) || closeErr.Code != websocket.CloseGoingAway {
		t.Fatalf("ended with %v, want close 1001", err)
	}
	within(t, ended, 10*time.Second, "the handler to return")
}

func TestWS_releasesTheSubscriptionWhenTheClientLeaves(t *testing.T) {
	h := hub.New()
	url, ended := wsServer(t, h, allow(hub.All), WSOptions{})
	c := dial(t, url, nil)
	_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(5*time.Second))
	within(t, ended, 10*time.Second, "the handler to return")
	if h.Len() != 0 {
		t.Errorf("%d subscriptions after the client left", h.Len())
	}
}

func TestRoutes_mountWSOnlyWithHubAndAuthenticator(t *testing.T) {
	h := hub.New()
	for _, tc := range []struct {
		name string
		opts Options
		code int
	}{
		{"neither", Options{Console: builtConsole}, http.StatusNotFound},
		{"hub without authenticator", Options{Console: builtConsole, Hub: h}, http.StatusNotFound},
		{"both", Options{Console: builtConsole, Hub: h, WSAuth: func(*http.Request) (func(int64) bool, bool) { return nil, false }}, http.StatusUnauthorized},
	} {
		if rec := serve(t, New(tc.opts), http.MethodGet, "/api/ws"); rec.Code != tc.code {
			t.Errorf("%s: GET /api/ws = %d, want %d", tc.name, rec.Code, tc.code)
		}
	}
}

// benchLine is a typical ansible output line.
const benchLine = "ok: [web-01.example.internal] => (item={'name': 'nginx', 'state': 'present'})"

// BenchmarkWSLatency publishes 1,000 lines/s to one client over loopback
// and reports the time from Publish to the client having parsed the frame
// (the frame's "time" is the publish time).
func BenchmarkWSLatency(b *testing.B) {
	h := hub.New()
	url, _ := wsServer(b, h, allow(hub.All), WSOptions{})
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()

	latencies := make(chan []time.Duration, 1)
	go func() {
		lat := make([]time.Duration, 0, b.N)
		for range b.N {
			_, frame, err := c.ReadMessage()
			var m struct{ Time time.Time }
			if err != nil || json.Unmarshal(frame, &m) != nil {
				break
			}
			lat = append(lat, time.Since(m.Time))
		}
		latencies <- lat
	}()

	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	b.ResetTimer()
	for range b.N {
		<-tick.C
		h.Publish(hub.Log(1, 1, time.Now(), benchLine))
	}
	lat := <-latencies
	b.StopTimer()
	if len(lat) != b.N {
		b.Fatalf("the client read %d of %d lines", len(lat), b.N)
	}
	slices.Sort(lat)
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
	b.ReportMetric(ms(1), "max-ms")
}

// BenchmarkWSThroughput sends as many lines as one client takes. The
// publisher stays at most half a client buffer ahead of the client, as a
// paced pipeline would, so no line is dropped; one op is one line.
func BenchmarkWSThroughput(b *testing.B) {
	const buffer = 4096
	h := hub.New()
	url, _ := wsServer(b, h, allow(hub.All), WSOptions{Buffer: buffer})
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()

	var read atomic.Int64
	wake, done := make(chan struct{}, 1), make(chan error, 1)
	go func() {
		buf := make([]byte, 4096)
		for range b.N {
			_, r, err := c.NextReader()
			if err == nil {
				_, err = io.CopyBuffer(io.Discard, r, buf)
			}
			if err != nil {
				done <- err
				return
			}
			read.Add(1)
			select {
			case wake <- struct{}{}:
			default:
			}
		}
		done <- nil
	}()

	m := hub.Log(1, 1, time.Now(), benchLine)
	b.SetBytes(int64(len(m.Frame)))
	b.ResetTimer()
	for i := range int64(b.N) {
		for i-read.Load() >= buffer/2 {
			<-wake
		}
		h.Publish(m)
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
