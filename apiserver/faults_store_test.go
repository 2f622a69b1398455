package apiserver

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/runner"
	"github.com/bastion-dev/bastion/internal/runproto"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/store/pgtest"
)

// ackWatch follows the acknowledgements a runner receives, so that a test
// can check that nothing acknowledged goes missing.
type ackWatch struct {
	acked atomic.Int64
	seen  chan struct{}
}

func watchAcks(s *runner.Streamer) *ackWatch {
	w := &ackWatch{seen: make(chan struct{}, 1)}
	s.OnReply = func(r runproto.Reply) {
		if r.Ack > w.acked.Load() {
			w.acked.Store(r.Ack)
		}
		select {
		case w.seen <- struct{}{}:
		default:
		}
	}
	return w
}

// waitAck waits until the runner holds an acknowledgement of at least n.
func (w *ackWatch) waitAck(t *testing.T, n int64, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for w.acked.Load() < n {
		select {
		case <-w.seen:
		case <-deadline:
			t.Fatalf("acknowledged %d after %s, want %d", w.acked.Load(), timeout, n)
		}
	}
}

// checkKept insists that the store still holds every line acknowledged.
func (e *relEnv) checkKept(t *testing.T, i int, acked int64, when string) {
	t.Helper()
	key := store.TaskKey{ProjectID: relProjectID, TaskID: e.tasks[i].id}
	var last int64
	var err error
	for try := 0; try < 200; try++ { // the store may be coming back
		if last, err = e.store.LastSeq(t.Context(), key); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || last < acked {
		t.Fatalf("%s: the store holds lines up to %d (%v), but %d were acknowledged", when, last, err, acked)
	}
}

// printer prints lines steadily until stopped, and says how many.
func printer(s *runner.Streamer, task string, pad string, every time.Duration) (stop func() int) {
	var n atomic.Int64
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				for range 10 {
					s.Line(time.Now(), line(task, int(n.Add(1)), pad))
				}
			}
		}
	}()
	return func() int { close(quit); <-done; return int(n.Load()) }
}

// Item 3: PostgreSQL is restarted, then killed (SIGKILL, a crash) and
// started again, while two runners stream. The runners get a 503 naming
// the store, the manager logs the outage once and its end once, every
// line acknowledged before a fault is still there after it, and the
// output ends exact.
func TestStoreFaults_postgresRestartAndCrashDuringARunLoseNothingAcknowledged(t *testing.T) {
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatalf("PostgreSQL for the store fault test: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	st, err := store.Open(t.Context(), srv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newRelEnv(t, st, 2, WSOptions{}, 0)
	const runners = 2
	var streamers []*runner.Streamer
	var acks []*ackWatch
	var answered []*answers
	var stops []func() int
	for i := range runners {
		s, a := e.runnerFor(i, e.url)
		streamers, answered, acks = append(streamers, s), append(answered, a), append(acks, watchAcks(s))
		stops = append(stops, printer(s, e.tasks[i].name, "", 5*time.Millisecond))
	}
	faults := pick(2, 6) // restart and crash, alternately
	for f := range faults {
		for i := range runners {
			acks[i].waitAck(t, acks[i].acked.Load()+500, time.Minute)
		}
		before := make([]int64, runners)
		for i := range runners {
			before[i] = acks[i].acked.Load()
		}
		if f%2 == 0 {
			err = srv.Restart()
		} else {
			if err = srv.Kill(); err == nil {
				time.Sleep(500 * time.Millisecond) // down for a while: the runners retry
				err = srv.Restart()
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range runners {
			e.checkKept(t, i, before[i], fmt.Sprintf("after fault %d", f+1))
		}
	}
	for i := range runners {
		n := stops[i]()
		if err := streamers[i].Finish(runproto.Exit{}, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		e.checkStored(i, n, "")
		if !errorsMention(answered[i].list(), "503", "storing output: postgres store 127.0.0.1:") {
			t.Errorf("runner %d never heard why its lines were not stored; answers: %q", i, answered[i].list())
		}
		for _, a := range answered[i].list() {
			if strings.Contains(a, e.tasks[i].name+" line") {
				t.Errorf("an error answer holds output: %q", a)
			}
		}
	}
	logs := e.log.String()
	down := strings.Count(logs, "cannot store a runner's output")
	up := strings.Count(logs, "storing a runner's output again")
	if down == 0 || down != up || down > runners*faults {
		t.Errorf("the manager logged %d outages and %d recoveries (want one of each per runner and fault, at most %d):\n%s",
			down, up, runners*faults, logs)
	}
	t.Logf("%d faults; the manager logged %d outages and %d recoveries", faults, down, up)
}

// mountTmpfs mounts a tmpfs of size bytes at dir (the tests run as root,
// as CI does) and unmounts it when the test ends.
func mountTmpfs(t *testing.T, dir string, size int) {
	t.Helper()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0700", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("a small tmpfs for the disk-full test (needs root, as in CI): %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v\n%s", dir, err, out)
		}
	})
}

// fillDisk writes dir/filler until the file system is full.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return path
		}
	}
}

// Item 3: the SQLite file's disk fills up during a run. The runner gets a
// 503 that says the disk is full, the manager logs it once, nothing
// acknowledged is lost, and once space is freed the runner's retries
// store the rest: the output ends exact.
func TestStoreFaults_sqliteDiskFullDuringARunLosesNothingAndRecovers(t *testing.T) {
	dir := t.TempDir()
	mountTmpfs(t, dir, 8<<20)
	st := openRelSQLite(t, dir)
	e := newRelEnv(t, st, 1, WSOptions{}, 0)
	s, a := e.runnerFor(0, e.url)
	acks := watchAcks(s)
	pad := " " + strings.Repeat("x", 200)
	stop := printer(s, e.tasks[0].name, pad, 5*time.Millisecond)

	rounds := pick(1, 3)
	for r := range rounds {
		acks.waitAck(t, acks.acked.Load()+1000, time.Minute)
		filler := fillDisk(t, dir)
		acked := acks.acked.Load()
		// The runner keeps printing; the manager cannot store: it answers
		// 503 and names the problem.
		deadline := time.Now().Add(time.Minute)
		for !errorsMention(a.list(), "503", "storing output: sqlite store", "full") {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no 503 saying the disk is full within a minute; answers %q", r+1, a.list())
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // a few more retries against the full disk
		e.checkKept(t, 0, acked, fmt.Sprintf("round %d, disk full", r+1))
		stuck := acks.acked.Load()
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		acks.waitAck(t, stuck+1, time.Minute) // the retries get through
		e.checkKept(t, 0, stuck, fmt.Sprintf("round %d, space freed", r+1))
	}
	n := stop()
	if err := s.Finish(runproto.Exit{}, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	e.checkStored(0, n, pad)
	logs := e.log.String()
	if down := strings.Count(logs, "cannot store a runner's output"); down != rounds ||
		strings.Count(logs, "storing a runner's output again") != rounds || !strings.Contains(logs, "full") {
		t.Errorf("want %d outages logged, each once, naming the full disk:\n%s", rounds, logs)
	}
	t.Logf("%d lines, %d disk-full rounds; first error answer: %.300s", n, rounds, firstOf(a.list()))
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
