package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// benchFloor is P3's floor: n Template objects created one after another
// straight through the kube-apiserver of the same `bastion dev`, as
// `kubectl create` would, while the controllers do for each what they do
// during P3 (its Ready status). No id, no cache wait, no event: what every
// create through /api pays at least, on this machine, because every object
// is a custom resource.
func benchFloor(ctx context.Context, kubeconfig string, n int, serverCPU func() time.Duration) error {
	ctrllog.SetLogger(logr.Discard()) // the client's own warnings are not figures
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit
	scheme := runtime.NewScheme()
	if err := bastionv1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	// A template P3 made through /api, copied: the same spec, references
	// that exist, in the same namespace.
	var existing bastionv1.TemplateList
	if err := c.List(ctx, &existing, client.Limit(1)); err != nil {
		return err
	}
	if len(existing.Items) == 0 {
		return fmt.Errorf("the floor copies a template of P3: run it with p3")
	}
	model := existing.Items[0]
	fmt.Printf("\nP3 floor: %d templates created one after another straight through the kube-apiserver (client-go, as kubectl)\n", n)
	lat := make([]time.Duration, 0, n)
	cpu0 := serverCPU()
	t0 := time.Now()
	for i := range n {
		t := &bastionv1.Template{ObjectMeta: metav1.ObjectMeta{Namespace: model.Namespace, GenerateName: "floor-",
			// Ids far above P3's, so that the controllers assign none.
			Labels: map[string]string{bastionv1.LabelID: strconv.Itoa(1_000_000 + i)}}, Spec: model.Spec}
		t.Spec.DisplayName = fmt.Sprintf("Floor %04d", i+1)
		start := time.Now()
		if err := c.Create(ctx, t); err != nil {
			return err
		}
		lat = append(lat, time.Since(start))
	}
	total := time.Since(t0)
	time.Sleep(time.Second) // the controllers' trailing status writes count too
	cpu := serverCPU() - cpu0
	slices.Sort(lat)
	fmt.Printf("  %d creates in %s: %.0f creates/s; per create p50 %s, p90 %s, p99 %s\n", n, ms(total), rate(n, total),
		ms(pct(lat, 50)), ms(pct(lat, 90)), ms(pct(lat, 99)))
	fmt.Printf("  server CPU (bastion dev, etcd, kube-apiserver): %s, %.1f ms per create\n", ms(cpu), perItem(cpu, n))
	return nil
}
