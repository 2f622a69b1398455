package cachewait

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// A write the cache has ends the wait at once; an object the cache does
// not have is waited for after a create (Written) and not after an update
// (Updated: it was deleted meanwhile, and will not come).
func TestWaits_endAsSoonAsTheCacheAnswers(t *testing.T) {
	ctx := context.Background()
	have := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "have"}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(have).Build()
	if err := c.Get(ctx, client.ObjectKeyFromObject(have), have); err != nil {
		t.Fatal(err)
	}
	const bound = 300 * time.Millisecond
	took := func(wait func() error) time.Duration {
		t.Helper()
		start := time.Now()
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	gone := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gone", ResourceVersion: "7"}}

	if d := took(func() error { return Written(ctx, c, have, bound) }); d > bound/3 {
		t.Errorf("Written of what the cache has took %s", d)
	}
	if d := took(func() error { return Updated(ctx, c, gone, bound) }); d > bound/3 {
		t.Errorf("Updated of a deleted object took %s, want no wait", d)
	}
	if d := took(func() error { return Written(ctx, c, gone, bound) }); d < bound {
		t.Errorf("Written of an object not yet cached took %s, want the bound %s", d, bound)
	}
}
