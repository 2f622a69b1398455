package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/runproto"
	"github.com/bastion-dev/bastion/internal/store"
)

func openRelSQLite(t *testing.T, dir string) store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), "sqlite://"+filepath.Join(dir, "bastion.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Item 2: three runners stream through a proxy that delays, splits, drops
// requests, drops answers, and takes batches away to deliver them later,
// once or twice, after newer ones. The store ends with exactly what each
// runner printed, and a websocket client saw every line once, in order.
func TestStreamFaults_dropDelaySplitAndLateDuplicateBatchesLeaveTheOutputExact(t *testing.T) {
	const runners = 3
	lines := pick(3000, 40000)
	const seed = 11
	e := newRelEnv(t, openRelSQLite(t, t.TempDir()), runners, WSOptions{}, 0)
	ws := e.follow(0)
	go ws.read(e.tasks, "")
	proxy := startFaultProxy(t, e.url, seed)

	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, runners)
	for i := range runners {
		s, _ := e.runnerFor(i, proxy.URL())
		wg.Go(func() {
			s.SetPhase(runproto.PhaseRunning)
			for n := 1; n <= lines; n++ {
				s.Line(time.Now(), line(e.tasks[i].name, n, ""))
				if n%100 == 0 {
					time.Sleep(2 * time.Millisecond) // a busy task, not one burst
				}
			}
			if err := s.Finish(runproto.Exit{Code: 0}, 2*time.Minute); err != nil {
				errs <- fmt.Errorf("runner %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	proxy.close() // every late copy has been delivered
	close(proxy.failures)
	for f := range proxy.failures {
		t.Error(f)
	}
	for i := range runners {
		e.checkStored(i, lines, "")
	}
	ws.waitFor(t, runners*lines, 30*time.Second)

	counts := proxy.counts()
	t.Logf("seed %d, %d lines per runner in %v; requests: %v; %d late copies delivered, %d of them after newer lines were stored",
		seed, lines, elapsed.Round(time.Millisecond), counts, proxy.replayed.Load(), proxy.stale.Load())
	for _, k := range faultKinds {
		if counts[k.name] == 0 {
			t.Errorf("no request met %q: the test proved nothing about it", k.name)
		}
	}
	if proxy.stale.Load() == 0 {
		t.Error("no batch arrived after newer ones: nothing was reordered")
	}
}

// Item 2, the protocol's view of reordering: batches reach the manager in
// a shuffled order, with gaps, overlaps and exact duplicates (what several
// retries through different connections can deliver). Each answer
// acknowledges exactly the lines stored without a gap, and the store and
// a websocket client end with every line once, in order.
func TestStreamFaults_shuffledOverlappingAndRepeatedBatchesAckOnlyWhatIsContiguous(t *testing.T) {
	const total = 1000
	e := newRelEnv(t, openRelSQLite(t, t.TempDir()), 1, WSOptions{}, 0)
	ws := e.follow(0)
	go ws.read(e.tasks, "")
	rt := e.tasks[0]

	type span struct{ from, to int }
	var batches []span
	for from := 1; from <= total; from += 100 {
		batches = append(batches, span{from, from + 99})
	}
	rnd := rand.New(rand.NewSource(5))
	for range 10 { // overlapping resends
		from := 1 + rnd.Intn(total-150)
		batches = append(batches, span{from, from + 20 + rnd.Intn(130)})
	}
	batches = append(batches, batches[:5]...) // exact duplicates
	rnd.Shuffle(len(batches), func(i, j int) { batches[i], batches[j] = batches[j], batches[i] })

	stored := map[int]bool{}
	contiguous := func() int64 {
		n := 0
		for stored[n+1] {
			n++
		}
		return int64(n)
	}
	url := e.url + runproto.EventsPath(relNamespace, rt.name)
	for _, b := range batches {
		var batch runproto.Batch
		for seq := b.from; seq <= b.to; seq++ {
			batch.Lines = append(batch.Lines, runproto.Line{Seq: int64(seq), Time: time.Now(), Output: line(rt.name, seq, "")})
			stored[seq] = true
		}
		body, _ := json.Marshal(batch)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+rt.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var reply runproto.Reply
		err = json.NewDecoder(resp.Body).Decode(&reply)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("batch %d..%d: %d %v", b.from, b.to, resp.StatusCode, err)
		}
		if want := contiguous(); reply.Ack != want {
			t.Fatalf("batch %d..%d acknowledged %d, want %d (lines stored without a gap)", b.from, b.to, reply.Ack, want)
		}
	}
	e.checkStored(0, total, "")
	ws.waitFor(t, total, 30*time.Second)
}

// errorsMention reports whether some answer holds every word.
func errorsMention(answers []string, words ...string) bool {
next:
	for _, a := range answers {
		for _, w := range words {
			if !strings.Contains(a, w) {
				continue next
			}
		}
		return true
	}
	return false
}
