package ids

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// stopClock freezes the clock of blocks for one test and returns a
// function that moves it on.
func stopClock(t *testing.T) (advance func(time.Duration)) {
	t.Helper()
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	saved := now
	now = func() time.Time { return at }
	t.Cleanup(func() { now = saved })
	return func(d time.Duration) { at = at.Add(d) }
}

// countedAllocator is an allocator on a fake apiserver that counts the
// counter updates, with the clock of blocks stopped: advance moves it.
func countedAllocator(t *testing.T) (alloc *Allocator, updates *atomic.Int64, advance func(time.Duration)) {
	t.Helper()
	advance = stopClock(t)
	updates = &atomic.Int64{}
	c := fake.NewClientBuilder().WithScheme(newScheme()).WithInterceptorFuncs(interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			updates.Add(1)
			return c.Update(ctx, obj, opts...)
		},
	}).Build()
	return &Allocator{Client: c}, updates, advance
}

func nextIDs(t *testing.T, alloc *Allocator, counter string, n int) []int64 {
	t.Helper()
	got := make([]int64, n)
	for i := range got {
		id, err := alloc.Next(context.Background(), ns, counter)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = id
	}
	return got
}

// One client creating templates one after another (issue #22, P3) gets
// the ids 1..n in order, from a few counter updates: blocks of 1, 2, 4...
// up to MaxBlock. The spare ids of the last block are all the counter is
// ahead by.
func TestAllocator_aBusyCounterIsTakenInGrowingBlocks(t *testing.T) {
	alloc, updates, _ := countedAllocator(t)
	const n = 1000
	for i, id := range nextIDs(t, alloc, CounterTemplate, n) {
		if id != int64(i+1) {
			t.Fatalf("allocation %d got id %d, want %d: one process numbers in order", i, id, i+1)
		}
	}
	// 1 (the create) + blocks of 2..64 (6) + (1000-127)/64 rounded up (14).
	if u := updates.Load(); u > 21 {
		t.Errorf("%d counter updates for %d allocations; want at most 21 (blocks up to %d)", u, n, MaxBlock)
	}
	v, err := strconv.ParseInt(counterValue(t, alloc.Client, ns, CounterTemplate), 10, 64)
	if err != nil || v < n || v > n+MaxBlock-1 {
		t.Errorf("counter = %d (%v) after %d allocations, want %d..%d", v, err, n, n, n+MaxBlock-1)
	}
}

// A counter asked once in a while takes one id at a time, as before
// blocks: no gap. A block's spare id older than blockLife is not handed
// out: it is a gap, and the counter starts over with blocks of one.
func TestAllocator_anIdleCounterTakesOneIDAndDropsStaleSpares(t *testing.T) {
	alloc, _, advance := countedAllocator(t)
	var got []int64
	got = append(got, nextIDs(t, alloc, CounterTemplate, 2)...) // 1, then a block of 2: 2 and the spare 3
	advance(2 * blockLife)
	got = append(got, nextIDs(t, alloc, CounterTemplate, 1)...) // 3 is stale: 4
	advance(2 * blockLife)
	got = append(got, nextIDs(t, alloc, CounterTemplate, 1)...) // idle: a block of 1, 5
	want := []int64{1, 2, 4, 5}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ids = %v, want %v", got, want)
		}
	}
	if v := counterValue(t, alloc.Client, ns, CounterTemplate); v != "5" {
		t.Errorf("counter = %s, want 5: an idle counter takes one id at a time", v)
	}
}

// An id that arrives with an object (Reserve) is never handed out from a
// spare block, even when the counter passed it because of that block.
func TestAllocator_reserveDropsTheSpareIDsItCovers(t *testing.T) {
	stopClock(t)
	alloc := &Allocator{Client: newFakeClient()}
	nextIDs(t, alloc, CounterTemplate, 2) // 1, then 2 with the spare 3
	if err := alloc.Reserve(context.Background(), ns, CounterTemplate, 3); err != nil {
		t.Fatal(err)
	}
	if got := nextIDs(t, alloc, CounterTemplate, 1)[0]; got <= 3 {
		t.Fatalf("Next after Reserve(3) = %d; want above 3", got)
	}
}

// Concurrent callers of one allocator share its blocks and its batches:
// every id is handed out once.
func TestAllocator_concurrentCallersOfABlockCounterGetDistinctIDs(t *testing.T) {
	stopClock(t)
	alloc := &Allocator{Client: newFakeClient()}
	const n = 500
	got := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = alloc.Next(context.Background(), ns, CounterInventory) })
	}
	wg.Wait()
	seen := map[int64]bool{}
	for i, id := range got {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if id < 1 || seen[id] {
			t.Fatalf("id %d handed out twice (or not positive)", id)
		}
		seen[id] = true
	}
}

// A client slower than one create per blockLife/2 but steady (a loaded
// machine) keeps its block: spare ids live while the counter is asked,
// and the blocks still grow. The ids stay dense.
func TestAllocator_aSteadyButSlowClientKeepsItsBlock(t *testing.T) {
	alloc, updates, advance := countedAllocator(t)
	var got []int64
	for range 20 {
		got = append(got, nextIDs(t, alloc, CounterTemplate, 1)...)
		advance(blockLife * 6 / 10)
	}
	for i, id := range got {
		if id != int64(i+1) {
			t.Fatalf("ids = %v, want 1..20", got)
		}
	}
	// Blocks of 1, 2, 4, 8 and 16 cover 31 ids: five updates for 20.
	if u := updates.Load(); u > 5 {
		t.Errorf("%d counter updates for 20 steady allocations; want at most 5", u)
	}
}
