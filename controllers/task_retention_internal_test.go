package controllers

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Of the task workers finishing tasks side by side, one prunes a given
// task, and the others learn whether that prune was made; a prune that
// failed, or one older than pruneMemory, may be made again.
func TestPrunedSet_oneFinishPrunesATaskUntilItFailsOrIsForgotten(t *testing.T) {
	var p prunedSet
	now := time.Unix(1_800_000_000, 0)
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if claimed, _ := p.claim("old-1", now); claimed {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d of 16 workers pruned the same task, want 1", won.Load())
	}
	if claimed, done := p.claim("old-1", now); claimed || done {
		t.Errorf("a prune under way: claimed %v, done %v; want neither", claimed, done)
	}
	p.done("old-1")
	if claimed, done := p.claim("old-1", now.Add(pruneMemory-time.Second)); claimed || !done {
		t.Errorf("a prune made a moment ago: claimed %v, done %v; want done only", claimed, done)
	}

	if claimed, _ := p.claim("old-2", now); !claimed {
		t.Error("another task could not be pruned")
	}
	p.release("old-2")
	if claimed, _ := p.claim("old-2", now.Add(time.Second)); !claimed {
		t.Error("a task whose prune failed could not be pruned again")
	}

	later := now.Add(pruneMemory)
	if claimed, _ := p.claim("old-1", later); !claimed {
		t.Error("a task pruned pruneMemory ago, still shown undeleted, could not be pruned again")
	}
	p.claim("old-3", later.Add(pruneMemory))
	if _, held := p.uids[types.UID("old-2")]; held {
		t.Error("an expired claim is still held after a sweep")
	}
}
