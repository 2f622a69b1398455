package apiserver

import (
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/bastion-dev/bastion/internal/runner"
	"github.com/bastion-dev/bastion/internal/runproto"
)

// Item 5: 200 websocket clients follow 10 busy tasks while one more client
// never reads, with the production websocket settings. Nobody waits for
// the stuck client: it is closed with 1013 and its reason, and each of the
// 200 others receives every line of every task, once, in order.
func TestLoad_200FollowersOf10BusyTasksGetEveryLineAndAStuckOneIsDropped(t *testing.T) {
	const tasks, followers = 10, 200
	seconds := pick(8, 60)
	const perSecond = 100 // lines per task per second
	pad := " " + strings.Repeat("ok: [web-01.example.internal] => (item=nginx) ", 4)
	// The stuck client counts as slow once its 4,096-message queue is full,
	// which happens only after the kernel's socket buffers are: Linux grows
	// a loopback connection's send buffer up to 4 MiB, and 200 followers
	// reading that much each would take this machine's two cores for the
	// test's own clients. A 64 KiB send buffer (still more than a loopback
	// connection needs) lets 8,000 lines prove the policy.
	e := newRelEnv(t, openRelSQLite(t, t.TempDir()), tasks, WSOptions{}, 64<<10)

	stuck := e.follow(4096) // connects and never reads
	fs := make([]*follower, followers)
	for i := range fs {
		fs[i] = e.follow(0)
		go fs[i].read(e.tasks, pad)
	}
	if n := e.hub.Len(); n != followers+1 {
		t.Fatalf("%d subscriptions, want %d", n, followers+1)
	}

	// Each task prints perSecond lines a second in bursts of ten, as
	// ansible does, for the given time.
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, tasks)
	streamers := make([]*runner.Streamer, tasks)
	for i := range tasks {
		streamers[i], _ = e.runnerFor(i, e.url)
	}
	lines := seconds * perSecond
	for i := range tasks {
		wg.Go(func() {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for n := 0; n < lines; {
				<-tick.C
				for range perSecond / 10 {
					n++
					streamers[i].Line(time.Now(), line(e.tasks[i].name, n, pad))
				}
			}
			if err := streamers[i].Finish(runproto.Exit{}, time.Minute); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	printed := time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := tasks * lines
	for _, f := range fs {
		f.waitFor(t, total, 30*time.Second)
	}
	caughtUp := time.Since(start)

	lags := make([]time.Duration, len(fs))
	for i, f := range fs {
		lags[i] = f.maxLag
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	t.Logf("%d lines (%d tasks × %d/s × %ds) to %d followers: printed in %v, all delivered after %v; "+
		"worst delay from print to a follower: median follower %v, worst follower %v",
		total, tasks, perSecond, seconds, followers, printed.Round(time.Millisecond), caughtUp.Round(time.Millisecond),
		lags[len(lags)/2].Round(time.Millisecond), lags[len(lags)-1].Round(time.Millisecond))
	// No stall: no follower fell behind the others (the delay every one
	// sees is the machine's; 200 followers share its two cores with the
	// server), and none took more than 30 s to see a line.
	if median, worst := lags[len(lags)/2], lags[len(lags)-1]; worst > 2*median+2*time.Second || worst > 30*time.Second {
		t.Errorf("a follower got a line %v after it was printed (median follower %v)", worst, median)
	}

	// The stuck client's queue overflowed long ago; when it reads at last,
	// it finds the close frame with the reason after what its socket held.
	if n := e.hub.Len(); n != followers {
		t.Fatalf("%d subscriptions open, want the %d followers: the stuck client was not dropped", n, followers)
	}
	end := make(chan error, 1)
	go func() {
		for {
			if _, _, err := stuck.conn.ReadMessage(); err != nil {
				end <- err
				return
			}
		}
	}()
	// Its end is the close frame with the reason, unless the frame could
	// not be written behind a frame already stuck in the socket (then the
	// server cut the connection after its write timeout).
	var closeErr *websocket.CloseError
	select {
	case err := <-end:
		if !errors.As(err, &closeErr) || !(closeErr.Code == websocket.CloseTryAgainLater && strings.HasPrefix(closeErr.Text, "too slow: ") ||
			closeErr.Code == websocket.CloseAbnormalClosure) {
			t.Fatalf("the stuck client ended with %v, want close 1013 \"too slow: …\" or a cut connection", err)
		}
		t.Logf("the stuck client's end: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the stuck client never saw its end")
	}
}
