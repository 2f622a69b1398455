package ids

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

const ns = "bastion-demo"

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(bastionv1.AddToScheme(s))
	return s
}

func newFakeClient(objs ...client.Object) client.WithWatch {
	return fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(objs...).Build()
}

func counterValue(t *testing.T, c client.Client, namespace, counter string) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: ConfigMapName}, cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data[counter]
}

func TestParse_acceptsOnlyCanonicalPositiveIntegers(t *testing.T) {
	for value, want := range map[string]int64{"1": 1, "42": 42, "9223372036854775807": 1<<63 - 1} {
		if got, ok := Parse(value); !ok || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d, true", value, got, ok, want)
		}
	}
	for _, value := range []string{"", "0", "-1", "007", "+5", "5 ", "abc", "1.0", "9223372036854775808"} {
		if got, ok := Parse(value); ok {
			t.Errorf("Parse(%q) = %d, true; want not ok", value, got)
		}
	}
}

func TestAllocator_countsFromOnePerCounterAndNamespace(t *testing.T) {
	ctx := context.Background()
	c := newFakeClient()
	alloc := &Allocator{Client: c}
	next := func(namespace, counter string) int64 {
		t.Helper()
		id, err := alloc.Next(ctx, namespace, counter)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	got := []int64{
		next(ns, CounterTemplate), next(ns, CounterTemplate), next(ns, CounterTask),
		next("bastion-other", CounterTemplate), next(ns, CounterTemplate),
	}
	want := []int64{1, 2, 1, 1, 3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ids = %v, want %v", got, want)
		}
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ConfigMapName}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Labels[LabelManagedBy] != ManagedBy {
		t.Errorf("labels = %v, want %s=%s", cm.Labels, LabelManagedBy, ManagedBy)
	}
	if cm.Data[CounterTemplate] != "3" || cm.Data[CounterTask] != "1" {
		t.Errorf("data = %v", cm.Data)
	}
}

// allocateDense makes n concurrent allocations of the task counter and
// fails unless they got exactly the ids 1..n.
func allocateDense(t *testing.T, alloc *Allocator, n int) {
	t.Helper()
	got := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = alloc.Next(context.Background(), ns, CounterTask) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	for i, id := range got {
		if id != int64(i+1) {
			t.Fatalf("ids = %v, want 1..%d", got, n)
		}
	}
}

func TestAllocator_concurrentAllocationsAreDistinct(t *testing.T) {
	alloc := &Allocator{Client: newFakeClient()}
	const n = 50
	allocateDense(t, alloc, n)
}

// Concurrent callers in one process share counter updates instead of
// fighting over the ConfigMap: while an update is in flight the others
// gather, and one update serves them all. The ids stay dense: 1..n.
func TestAllocator_coalescesConcurrentAllocationsIntoFewUpdates(t *testing.T) {
	var updates atomic.Int64
	c := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(newConfigMap(ns, CounterTask, 0)).
		WithInterceptorFuncs(interceptor.Funcs{
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				updates.Add(1)
				time.Sleep(20 * time.Millisecond) // a round trip to the apiserver
				return c.Update(ctx, obj, opts...)
			},
		}).Build()
	alloc := &Allocator{Client: c}
	const n = 100
	allocateDense(t, alloc, n)
	if u := updates.Load(); u >= n/4 {
		t.Errorf("%d counter updates for %d concurrent allocations; want them coalesced", u, n)
	}
	if v := counterValue(t, c, ns, CounterTask); v != "100" {
		t.Errorf("counter = %s, want 100", v)
	}
}

// A caller that gives up while its batch's update is in flight fails with
// its context, and the others of its batch still get their ids.
func TestAllocator_aCancelledCallerDoesNotFailItsBatch(t *testing.T) {
	release := make(chan struct{})
	c := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(newConfigMap(ns, CounterTask, 7)).
		WithInterceptorFuncs(interceptor.Funcs{
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				<-release
				return c.Update(ctx, obj, opts...)
			},
		}).Build()
	alloc := &Allocator{Client: c}
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { _, err := alloc.Next(ctx, ns, CounterTask); first <- err }()
	cancel()
	if err := <-first; err != context.Canceled {
		t.Fatalf("the cancelled caller got %v, want context.Canceled", err)
	}
	close(release)
	id, err := alloc.Next(context.Background(), ns, CounterTask)
	if err != nil || id < 9 {
		t.Fatalf("the next caller got %d, %v; want an id after the cancelled one's (9 or more)", id, err)
	}
}

// Two writers may both find no ConfigMap; the one that loses the create
// must retry as an update rather than fail or restart the count.
func TestAllocator_retriesWhenAnotherWriterCreatesTheConfigMapFirst(t *testing.T) {
	ctx := context.Background()
	raced := false
	c := fake.NewClientBuilder().WithScheme(newScheme()).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok && !raced {
				raced = true
				if err := c.Create(ctx, newConfigMap(ns, CounterView, 7)); err != nil {
					return err
				}
				return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, ConfigMapName)
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	id, err := (&Allocator{Client: c}).Next(ctx, ns, CounterView)
	if err != nil {
		t.Fatal(err)
	}
	if id != 8 {
		t.Fatalf("id = %d, want 8 (after the other writer's 7)", id)
	}
}

func TestAllocator_refusesACounterThatIsNotANumber(t *testing.T) {
	cm := newConfigMap(ns, CounterKey, 0)
	cm.Data[CounterKey] = "twelve"
	_, err := (&Allocator{Client: newFakeClient(cm)}).Next(context.Background(), ns, CounterKey)
	if err == nil {
		t.Fatal("Next succeeded on a corrupt counter; it must never restart the count")
	}
}

func TestAllocator_reserveRaisesButNeverLowersTheCounter(t *testing.T) {
	ctx := context.Background()
	c := newFakeClient()
	alloc := &Allocator{Client: c}
	if err := alloc.Reserve(ctx, ns, CounterInventory, 10); err != nil {
		t.Fatal(err)
	}
	if err := alloc.Reserve(ctx, ns, CounterInventory, 4); err != nil {
		t.Fatal(err)
	}
	if got := counterValue(t, c, ns, CounterInventory); got != "10" {
		t.Fatalf("counter = %s, want 10", got)
	}
	if id, err := alloc.Next(ctx, ns, CounterInventory); err != nil || id != 11 {
		t.Fatalf("Next = %d, %v; want 11", id, err)
	}
}

func newView(name string, labels map[string]string) *bastionv1.View {
	return &bastionv1.View{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       bastionv1.ViewSpec{Title: name},
	}
}

func TestAssign_labelsAnObjectWithoutAnID(t *testing.T) {
	ctx := context.Background()
	c := newFakeClient(newView("ops", map[string]string{"team": "ops"}))
	alloc := &Allocator{Client: c}
	view := &bastionv1.View{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ops"}, view); err != nil {
		t.Fatal(err)
	}
	id, err := Assign(ctx, c, alloc, view, ns, CounterView)
	if err != nil || id != 1 {
		t.Fatalf("Assign = %d, %v; want 1", id, err)
	}
	stored := &bastionv1.View{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(view), stored); err != nil {
		t.Fatal(err)
	}
	if stored.Labels[bastionv1.LabelID] != "1" || stored.Labels["team"] != "ops" || stored.Spec.Title != "ops" {
		t.Fatalf("stored = %v %+v; want the id label added and nothing else changed", stored.Labels, stored.Spec)
	}
	if view.Labels[bastionv1.LabelID] != "1" {
		t.Fatalf("the caller's object was not updated: %v", view.Labels)
	}
}

// A label that is not a canonical id would never match a lookup by id.
func TestAssign_replacesALabelThatIsNotAnID(t *testing.T) {
	ctx := context.Background()
	c := newFakeClient(newView("ops", map[string]string{bastionv1.LabelID: "007"}))
	view := &bastionv1.View{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ops"}, view); err != nil {
		t.Fatal(err)
	}
	if id, err := Assign(ctx, c, &Allocator{Client: c}, view, ns, CounterView); err != nil || id != 1 {
		t.Fatalf("Assign = %d, %v; want 1", id, err)
	}
	if view.Labels[bastionv1.LabelID] != "1" {
		t.Fatalf("label = %q, want 1", view.Labels[bastionv1.LabelID])
	}
}

func TestAssign_keepsAnExistingIDAndReservesIt(t *testing.T) {
	ctx := context.Background()
	c := newFakeClient(newView("ops", map[string]string{bastionv1.LabelID: "17"}))
	alloc := &Allocator{Client: c}
	view := &bastionv1.View{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ops"}, view); err != nil {
		t.Fatal(err)
	}
	if id, err := Assign(ctx, c, alloc, view, ns, CounterView); err != nil || id != 17 {
		t.Fatalf("Assign = %d, %v; want 17", id, err)
	}
	if id, err := alloc.Next(ctx, ns, CounterView); err != nil || id != 18 {
		t.Fatalf("Next after a kept id 17 = %d, %v; want 18", id, err)
	}
}

// A reconcile that read the object from a cache before an earlier reconcile's
// id landed must not give it a second id.
func TestAssign_staleCopyKeepsTheIDThatLandedFirst(t *testing.T) {
	ctx := context.Background()
	c := newFakeClient(newView("ops", nil))
	alloc := &Allocator{Client: c}
	stale := &bastionv1.View{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ops"}, stale); err != nil {
		t.Fatal(err)
	}
	fresh := stale.DeepCopy()
	first, err := Assign(ctx, c, alloc, fresh, ns, CounterView)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Assign(ctx, c, alloc, stale, ns, CounterView)
	if err != nil {
		t.Fatal(err)
	}
	if second != first || stale.Labels[bastionv1.LabelID] != Format(first) {
		t.Fatalf("second Assign = %d (label %q), want the first id %d", second, stale.Labels[bastionv1.LabelID], first)
	}
}

// recordingIndexer keeps the extractors that IndexByID registers.
type recordingIndexer map[string]client.IndexerFunc

func (r recordingIndexer) IndexField(_ context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	r[fmt.Sprintf("%s on %T", field, obj)] = fn
	return nil
}

func TestIndexByID_indexesValidIDsOnly(t *testing.T) {
	indexer := recordingIndexer{}
	if err := IndexByID(context.Background(), indexer, &bastionv1.View{}, &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
	if len(indexer) != 2 {
		t.Fatalf("registered %d indexes, want 2", len(indexer))
	}
	for name, fn := range indexer {
		if got := fn(newView("a", map[string]string{bastionv1.LabelID: "5"})); len(got) != 1 || got[0] != "5" {
			t.Errorf("%s: index of id 5 = %v", name, got)
		}
		if got := fn(newView("b", map[string]string{bastionv1.LabelID: "05"})); got != nil {
			t.Errorf("%s: index of a non-canonical id = %v, want none", name, got)
		}
		if got := fn(newView("c", nil)); got != nil {
			t.Errorf("%s: index of no id = %v, want none", name, got)
		}
	}
	if MatchingID(5)[IDField] != "5" {
		t.Errorf("MatchingID(5) = %v", MatchingID(5))
	}
}

// The retry budget is Backoff.Steps tries, whatever Cap is: a counter
// update that loses 30 races in a row still gets its id, and one that
// loses every race gives up after Steps tries with the conflict. (Before,
// reaching Cap ended the retries after about 15 tries, and concurrent task
// starts got a 409.)
func TestAllocator_retriesEveryStepEvenOnceTheWaitReachesItsCap(t *testing.T) {
	saved := Backoff
	t.Cleanup(func() { Backoff = saved })
	Backoff.Duration, Backoff.Cap = 100*time.Microsecond, 2*time.Millisecond

	for _, tc := range []struct {
		lose    int
		wantErr bool
	}{{30, false}, {1000, true}} {
		updates := 0
		c := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(newConfigMap(ns, CounterTask, 4)).
			WithInterceptorFuncs(interceptor.Funcs{
				Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
					if updates++; updates <= tc.lose {
						return apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, ConfigMapName, fmt.Errorf("lost a race"))
					}
					return c.Update(ctx, obj, opts...)
				},
			}).Build()
		id, err := (&Allocator{Client: c}).Next(context.Background(), ns, CounterTask)
		switch {
		case tc.wantErr && (err == nil || !apierrors.IsConflict(err) || updates != Backoff.Steps):
			t.Errorf("losing every race: id %d, %v after %d tries; want the conflict after %d", id, err, updates, Backoff.Steps)
		case !tc.wantErr && (err != nil || id != 5 || updates != tc.lose+1):
			t.Errorf("losing %d races: id %d, %v after %d tries; want id 5 on try %d", tc.lose, id, err, updates, tc.lose+1)
		}
	}
}
