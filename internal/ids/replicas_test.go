package ids

import (
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/bastion-dev/bastion/internal/controlplane"
)

// TestAllocator_threeReplicasHandOutDistinctIDsWithoutAConflict: three
// allocators, each with its own connection to a real kube-apiserver (as
// three manager replicas are), serve 1,000 allocations of one counter
// spread over them: 500 at once, and 500 by 30 callers in a row each. Every allocation succeeds (none loses its
// retries to the others), the ids are 1..1000 with none twice, and the
// counter holds 1000. Each replica coalesces its callers, so at most
// three writers meet per round, far inside Backoff's budget. Then the
// same over a block counter (templates): distinct ids, from few updates,
// and no more than a block's spare ids per replica left unused.
func TestAllocator_threeReplicasHandOutDistinctIDsWithoutAConflict(t *testing.T) {
	cfg := startAPIServer(t)
	const replicas, n = 3, 1000
	var conflicts, updates atomic.Int64
	var allocs []*Allocator
	for range replicas {
		c, err := client.NewWithWatch(rest.CopyConfig(cfg), client.Options{Scheme: newScheme()})
		if err != nil {
			t.Fatal(err)
		}
		counted := interceptor.NewClient(c, interceptor.Funcs{
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				updates.Add(1)
				err := c.Update(ctx, obj, opts...)
				if err != nil && retriable(err) {
					conflicts.Add(1)
				}
				return err
			},
		})
		allocs = append(allocs, &Allocator{Client: counted})
	}
	mustCreateNamespace(t, allocs[0].Client, "ids-replicas")

	start := time.Now()
	got := allocateAcross(t, allocs, CounterTask, n)
	took := time.Since(start)
	seen := map[int64]bool{}
	for i, id := range got {
		if id < 1 || id > n || seen[id] {
			t.Fatalf("allocation %d got id %d: out of 1..%d or handed out twice", i, id, n)
		}
		seen[id] = true
	}
	if v := counterValue(t, allocs[0].Client, "ids-replicas", CounterTask); v != "1000" {
		t.Fatalf("counter = %s after %d allocations, want 1000", v, n)
	}
	t.Logf("%d allocations over %d replicas in %s: %d counter updates, %d lost a race and were retried",
		n, replicas, took, updates.Load(), conflicts.Load())

	// A block counter (templates): each replica takes growing blocks, and
	// hands their ids out itself. Ids stay distinct; spare ids a replica
	// did not use are gaps, so only the counter bounds them.
	updates.Store(0)
	got = allocateAcross(t, allocs, CounterTemplate, n)
	counter, err := strconv.ParseInt(counterValue(t, allocs[0].Client, "ids-replicas", CounterTemplate), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	seen = map[int64]bool{}
	for i, id := range got {
		if id < 1 || id > counter || seen[id] {
			t.Fatalf("template allocation %d got id %d: out of 1..%d (the counter) or handed out twice", i, id, counter)
		}
		seen[id] = true
	}
	if counter > n+replicas*MaxBlock {
		t.Errorf("counter = %d after %d allocations: more than %d spare ids per replica", counter, n, MaxBlock)
	}
	if u := updates.Load(); u >= n/10 {
		t.Errorf("%d counter updates for %d template allocations; want blocks", u, n)
	}
	t.Logf("%d template allocations over %d replicas: %d counter updates, counter %d (%d spare ids unused)",
		n, replicas, updates.Load(), counter, counter-n)
}

// allocateAcross makes n allocations of counter spread over allocs: half
// all at once, then the rest by 30 callers (10 a replica) one after the
// other, so that the replicas' updates keep meeting round after round.
// Every allocation must succeed.
func allocateAcross(t *testing.T, allocs []*Allocator, counter string, n int) []int64 {
	t.Helper()
	replicas := len(allocs)

	// All at once, then in a steady stream: 30 callers (10 a replica)
	// allocating one after the other, so that the replicas' updates keep
	// meeting round after round.
	got := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n / 2 {
		wg.Go(func() { got[i], errs[i] = allocs[i%replicas].Next(t.Context(), "ids-replicas", counter) })
	}
	const workers = 30
	for w := range workers {
		wg.Go(func() {
			for i := n/2 + w; i < n; i += workers {
				got[i], errs[i] = allocs[w%replicas].Next(t.Context(), "ids-replicas", counter)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("allocation %d of %s on replica %d failed: %v", i, counter, i%replicas+1, err)
		}
	}
	return got
}

// startAPIServer starts a kube-apiserver and etcd (envtest) for one test.
func startAPIServer(t *testing.T) *rest.Config {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = controlplane.DefaultAssetsDir()
	}
	if err := controlplane.CheckAssets(assets); err != nil {
		t.Fatal(err)
	}
	te := &envtest.Environment{BinaryAssetsDirectory: assets}
	cfg, err := te.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = te.Stop() })
	return cfg
}

func mustCreateNamespace(t *testing.T, c client.Client, name string) {
	t.Helper()
	if err := c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}
