package controllers_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// idTimeout bounds waits on many objects at once (50 concurrent creates).
const idTimeout = 60 * time.Second

// newIDProject creates a Project and waits for its namespace, so that the
// test counts in a namespace of its own and its ids start from 1.
func newIDProject(t *testing.T, name string) string {
	t.Helper()
	g := NewWithT(t)
	g.Expect(k8sClient.Create(context.Background(), newProject(name))).To(Succeed())
	ns := bastionv1.ProjectNamespace(name)
	g.Eventually(func() error {
		return k8sClient.Get(context.Background(), client.ObjectKey{Name: ns}, &corev1.Namespace{})
	}, timeout, interval).Should(Succeed())
	return ns
}

// waitForID waits until obj carries an id label and returns the id.
func waitForID(t *testing.T, obj client.Object) int64 {
	t.Helper()
	var id int64
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		var ok bool
		id, ok = ids.FromLabels(obj)
		g.Expect(ok).To(BeTrue(), "%s has no id yet: labels %v", obj.GetName(), obj.GetLabels())
	}, idTimeout, interval).Should(Succeed())
	return id
}

func newView(ns, name string, labels map[string]string) *bastionv1.View {
	return &bastionv1.View{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       bastionv1.ViewSpec{Title: name},
	}
}

func newKeySecret(ns, name string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name,
			Labels: map[string]string{bastionv1.LabelKeyType: string(bastionv1.KeyTypeNone)},
		},
		Type: corev1.SecretTypeOpaque,
	}
}

func TestIDs_fiftyConcurrentCreatesGetFiftyDistinctIDs(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ids-concurrent"}}
	g.Expect(k8sClient.Create(ctx, ns)).To(Succeed())

	alloc := &ids.Allocator{Client: k8sClient}
	const n = 50
	got := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = alloc.Next(ctx, ns.Name, ids.CounterTask) })
	}
	wg.Wait()

	for _, err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}
	slices.Sort(got)
	want := make([]int64, n)
	for i := range want {
		want[i] = int64(i + 1)
	}
	g.Expect(got).To(Equal(want))

	cm := &corev1.ConfigMap{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: ids.ConfigMapName}, cm)).To(Succeed())
	g.Expect(cm.Data).To(HaveKeyWithValue(ids.CounterTask, "50"))
	g.Expect(cm.Labels).To(HaveKeyWithValue(ids.LabelManagedBy, ids.ManagedBy))
}

func TestIDs_fiftyConcurrentlyCreatedInventoriesGetDistinctIDs(t *testing.T) {
	g := NewWithT(t)
	ns := newIDProject(t, "ids-inventories")
	const n = 50
	inventories := make([]*bastionv1.Inventory, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		inventories[i] = &bastionv1.Inventory{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "inv-" + ids.Format(int64(i))},
			Spec: bastionv1.InventorySpec{
				DisplayName: "Inventory", Type: bastionv1.InventoryStatic,
				SSHKeyRef: bastionv1.ObjectRef{Name: "deploy-key"},
			},
		}
		wg.Go(func() { errs[i] = k8sClient.Create(context.Background(), inventories[i]) })
	}
	wg.Wait()
	for _, err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}

	seen := map[int64]string{}
	for _, inv := range inventories {
		id := waitForID(t, inv)
		g.Expect(seen).NotTo(HaveKey(id), "%s and %s share id %d", seen[id], inv.Name, id)
		seen[id] = inv.Name
	}
	g.Expect(seen).To(HaveLen(n))
}

func TestIDs_objectWithoutIDGetsOneAndAnIDGivenIsKeptAndReserved(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newIDProject(t, "ids-kept")

	plain := newView(ns, "plain", nil)
	g.Expect(k8sClient.Create(ctx, plain)).To(Succeed())
	g.Expect(waitForID(t, plain)).To(Equal(int64(1)))

	given := newView(ns, "given", map[string]string{bastionv1.LabelID: "40"})
	g.Expect(k8sClient.Create(ctx, given)).To(Succeed())
	g.Eventually(func(g Gomega) {
		// The reservation shows in the counter once the reconciler has
		// seen the object; only then can a later allocation be checked.
		cm := &corev1.ConfigMap{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: ids.ConfigMapName}, cm)).To(Succeed())
		g.Expect(cm.Data).To(HaveKeyWithValue(ids.CounterView, "40"))
	}, timeout, interval).Should(Succeed())
	g.Expect(waitForID(t, given)).To(Equal(int64(40)))

	later := newView(ns, "later", nil)
	g.Expect(k8sClient.Create(ctx, later)).To(Succeed())
	g.Expect(waitForID(t, later)).To(Equal(int64(41)))
}

func TestIDs_areNeverReusedAfterADelete(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newIDProject(t, "ids-reuse")

	for i, name := range []string{"first", "second", "third"} {
		view := newView(ns, name, nil)
		g.Expect(k8sClient.Create(ctx, view)).To(Succeed())
		g.Expect(waitForID(t, view)).To(Equal(int64(i + 1)))
	}
	g.Expect(k8sClient.Delete(ctx, newView(ns, "third", nil))).To(Succeed())
	g.Eventually(func() error {
		return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "third"}, &bastionv1.View{})
	}, timeout, interval).ShouldNot(Succeed())

	fourth := newView(ns, "fourth", nil)
	g.Expect(k8sClient.Create(ctx, fourth)).To(Succeed())
	g.Expect(waitForID(t, fourth)).To(Equal(int64(4)))
}

func TestIDs_projectsUsersAndKeysGetIDs(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	ns := newIDProject(t, "ids-global-a")
	newIDProject(t, "ids-global-b")
	a := waitForID(t, &bastionv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "ids-global-a"}})
	b := waitForID(t, &bastionv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "ids-global-b"}})
	g.Expect(a).NotTo(Equal(b))

	user := &bastionv1.User{
		ObjectMeta: metav1.ObjectMeta{Name: "ids-someone"},
		Spec:       bastionv1.UserSpec{Username: "ids-someone", Name: "Someone", Email: "someone@example.com"},
	}
	g.Expect(k8sClient.Create(ctx, user)).To(Succeed())
	waitForID(t, user)

	// The plain Secret goes first: by the time the key has its id, the
	// plain one would have had one too if the controller took it.
	plain := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "not-a-key"}}
	g.Expect(k8sClient.Create(ctx, plain)).To(Succeed())
	key := newKeySecret(ns, "deploy-key")
	g.Expect(k8sClient.Create(ctx, key)).To(Succeed())
	g.Expect(waitForID(t, key)).To(Equal(int64(1)))
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(plain), plain)).To(Succeed())
	g.Expect(plain.Labels).NotTo(HaveKey(bastionv1.LabelID))
}

// The API finds "view 2" through the id index of a cache, never by listing
// the namespace; Secrets are indexed as metadata, so keys are found without
// their data ever being cached.
func TestIDs_lookupByIDGoesThroughTheCacheIndex(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := newIDProject(t, "ids-index")

	informers, err := cache.New(testEnv.Config, cache.Options{Scheme: k8sClient.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	keyMeta := &metav1.PartialObjectMetadata{}
	keyMeta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	g.Expect(ids.IndexByID(ctx, informers, &bastionv1.View{}, keyMeta)).To(Succeed())
	go func() { _ = informers.Start(ctx) }()
	g.Expect(informers.WaitForCacheSync(ctx)).To(BeTrue())

	for _, name := range []string{"one", "two", "three"} {
		view := newView(ns, name, nil)
		g.Expect(k8sClient.Create(ctx, view)).To(Succeed())
		waitForID(t, view)
	}
	key := newKeySecret(ns, "deploy-key")
	g.Expect(k8sClient.Create(ctx, key)).To(Succeed())
	keyID := waitForID(t, key)

	g.Eventually(func(g Gomega) {
		views := &bastionv1.ViewList{}
		g.Expect(informers.List(ctx, views, client.InNamespace(ns), ids.MatchingID(2))).To(Succeed())
		g.Expect(views.Items).To(HaveLen(1))
		g.Expect(views.Items[0].Name).To(Equal("two"))

		keys := &metav1.PartialObjectMetadataList{}
		keys.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		g.Expect(informers.List(ctx, keys, client.InNamespace(ns), ids.MatchingID(keyID))).To(Succeed())
		g.Expect(keys.Items).To(HaveLen(1))
		g.Expect(keys.Items[0].Name).To(Equal("deploy-key"))
	}, timeout, interval).Should(Succeed())
}
