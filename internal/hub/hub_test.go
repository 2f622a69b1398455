package hub

import (
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"
)

// receive collects what s delivers until it has want messages or closes,
// then sends the messages and the closing error (nil if it got want).
func receive(s *Subscription, want int) <-chan received {
	out := make(chan received, 1)
	go func() {
		var got, batch []Message
		var err error
		for len(got) < want {
			<-s.Ready()
			if batch, err = s.Take(batch); err != nil {
				break
			}
			got = append(got, batch...)
		}
		out <- received{got, err}
	}()
	return out
}

type received struct {
	msgs []Message
	err  error
}

func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func decode(t *testing.T, m Message) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(m.Frame, &v); err != nil {
		t.Fatalf("frame %q: %v", m.Frame, err)
	}
	return v
}

func TestHub_deliversOnlyProjectsTheFilterAllows(t *testing.T) {
	h := New()
	only2 := h.Subscribe(func(p int64) bool { return p == 2 }, 100)
	all := h.Subscribe(All, 100)
	none := h.Subscribe(nil, 100)
	gotOnly2, gotAll := receive(only2, 2), receive(all, 6)

	at := time.Unix(0, 0)
	for _, p := range []int64{1, 2, 3, 2, 1, 3} {
		h.Publish(Log(p, 10*p, at, "line of project "+strconv.FormatInt(p, 10)))
	}

	for _, m := range wait(t, gotOnly2, "project 2's subscriber").msgs {
		if m.ProjectID != 2 || decode(t, m)["project_id"] != 2.0 {
			t.Errorf("filter of project 2 let through %s", m.Frame)
		}
	}
	if r := wait(t, gotAll, "All's subscriber"); len(r.msgs) != 6 {
		t.Errorf("All received %d messages, want 6", len(r.msgs))
	}
	if batch, err := none.Take(nil); len(batch) != 0 || err != nil {
		t.Errorf("a nil filter received %d messages (err %v), want none", len(batch), err)
	}
}

func TestHub_keepsEachTasksOrderAcross10000Messages(t *testing.T) {
	const tasks, perTask = 4, 10_000
	h := New()
	got := receive(h.Subscribe(All, tasks*perTask), tasks*perTask)

	var publishers sync.WaitGroup
	for task := int64(1); task <= tasks; task++ {
		publishers.Go(func() {
			for i := range perTask {
				h.Publish(Log(1, task, time.Now(), strconv.Itoa(i)))
			}
		})
	}
	publishers.Wait()

	r := wait(t, got, "all messages")
	if r.err != nil {
		t.Fatalf("subscription closed: %v", r.err)
	}
	next := map[int64]int{}
	for _, m := range r.msgs {
		line, _ := strconv.Atoi(decode(t, m)["output"].(string))
		if line != next[m.TaskID] {
			t.Fatalf("task %d: line %d arrived when %d was due", m.TaskID, line, next[m.TaskID])
		}
		next[m.TaskID]++
	}
	for task := int64(1); task <= tasks; task++ {
		if next[task] != perTask {
			t.Errorf("task %d: %d lines, want %d", task, next[task], perTask)
		}
	}
}

func TestHub_closesASubscriberThatNeverReadsWithoutBlockingPublishOrOthers(t *testing.T) {
	const lines = 10_000
	h := New()
	stuck := h.Subscribe(All, 100)
	// The reader's queue holds every line, so its delivery does not depend
	// on how the scheduler interleaves it with the publisher.
	got := receive(h.Subscribe(All, lines), lines)

	published := make(chan time.Duration)
	go func() {
		var slowest time.Duration
		for i := range lines {
			start := time.Now()
			h.Publish(Log(1, 7, start, strconv.Itoa(i)))
			slowest = max(slowest, time.Since(start))
		}
		published <- slowest
	}()
	slowest := wait(t, published, "Publish (it blocked)")
	t.Logf("slowest Publish: %v", slowest)
	if slowest > time.Second {
		t.Errorf("a Publish took %v", slowest)
	}

	<-stuck.Done()
	var slow *SlowError
	if err := stuck.Err(); !errors.As(err, &slow) || slow.Behind != 100 ||
		err.Error() != "too slow: 100 messages behind; re-read /output" {
		t.Errorf("stuck subscriber closed with %v", err)
	}
	if _, err := stuck.Take(nil); err != stuck.Err() {
		t.Errorf("Take after the overflow = %v, want the reason", err)
	}

	r := wait(t, got, "the reader's lines")
	if r.err != nil || len(r.msgs) != lines {
		t.Fatalf("reader got %d lines, err %v", len(r.msgs), r.err)
	}
	for i, m := range r.msgs {
		if decode(t, m)["output"] != strconv.Itoa(i) {
			t.Fatalf("line %d is %s", i, m.Frame)
		}
	}
	if h.Len() != 1 {
		t.Errorf("Len = %d, want 1 (the stuck subscriber is closed)", h.Len())
	}
}

func TestHub_unsubscribeAndCloseEndSubscriptions(t *testing.T) {
	h := New()
	a, b := h.Subscribe(All, 10), h.Subscribe(All, 10)
	h.Unsubscribe(a)
	h.Publish(Log(1, 1, time.Now(), "after unsubscribe"))
	if _, err := a.Take(nil); !errors.Is(err, ErrUnsubscribed) {
		t.Errorf("unsubscribed Take = %v", err)
	}
	if len(*h.subs.Load()) != 1 {
		t.Errorf("the hub still holds %d subscriptions, want 1", len(*h.subs.Load()))
	}

	h.Close()
	<-b.Done()
	if !errors.Is(b.Err(), ErrClosed) {
		t.Errorf("after Close, Err = %v", b.Err())
	}
	if late := h.Subscribe(All, 10); !errors.Is(late.Err(), ErrClosed) {
		t.Errorf("a subscription after Close is open: %v", late.Err())
	}
	h.Publish(Log(1, 1, time.Now(), "after close")) // must not panic
}

func TestHub_prunesOverflowedSubscriptionsOnTheNextChange(t *testing.T) {
	h := New()
	h.Subscribe(All, 1)
	h.Publish(Log(1, 1, time.Now(), "one"))
	h.Publish(Log(1, 1, time.Now(), "two: overflows"))
	h.Subscribe(All, 1)
	if n := len(*h.subs.Load()); n != 1 {
		t.Errorf("snapshot holds %d subscriptions, want 1", n)
	}
}
