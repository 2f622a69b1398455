package controllers_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers"
)

// writeStatus returns once the manager's cache has the write: a reconcile
// queued meanwhile then reads the object as written, not the copy before
// it, whose write would meet a conflict (docs/architecture.md, "One writer
// of a task's state").
func TestWriteStatus_returnsOnceTheCacheHasTheWrite(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newIDProject(t, "write-status")
	view := &bastionv1.View{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cached"}, Spec: bastionv1.ViewSpec{Title: "Cached"}}
	g.Expect(k8sClient.Create(ctx, view)).To(Succeed())
	key := client.ObjectKeyFromObject(view)

	checked := 0
	for i := 0; i < 20 && checked < 5; i++ {
		before := &bastionv1.View{}
		g.Eventually(func() error { return suiteCache.Get(ctx, key, before) }, timeout, interval).Should(Succeed())
		obj := before.DeepCopy()
		meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{Type: "WriteStatusTest", Status: metav1.ConditionTrue,
			Reason: "Written", Message: fmt.Sprint("write ", i)})
		var result ctrl.Result
		var err error
		controllers.WriteStatus(ctx, suiteCache, before, obj, &result, &err)
		g.Expect(err).NotTo(HaveOccurred())
		if result.Requeue {
			continue // met the View controller's own write: another try
		}
		cached := &bastionv1.View{}
		g.Expect(suiteCache.Get(ctx, key, cached)).To(Succeed())
		have, _ := strconv.ParseUint(cached.ResourceVersion, 10, 64)
		want, _ := strconv.ParseUint(obj.ResourceVersion, 10, 64)
		g.Expect(have).To(BeNumerically(">=", want), "the cache has resourceVersion %d just after the write of %d", have, want)
		checked++
	}
	g.Expect(checked).To(BeNumerically(">", 0), "every write met a conflict")
}
