package controllers

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	metadatafake "k8s.io/client-go/metadata/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// The keys and Secrets a task refers to are checked against the project
// namespace's watch; only what the watch has not seen is read from the
// apiserver, so a Secret made a moment ago is found all the same.
func TestGetInput_readsSecretsFromTheWatchAndTheAPIServerOnlyForWhatItHasNotSeen(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	watched := secretMetadata()
	watched.Namespace, watched.Name = "ns", "deploy"
	watched.Labels = map[string]string{bastionv1.LabelKeyType: "ssh"}
	w := &SecretWatches{client: metadatafake.NewSimpleMetadataClient(scheme, watched), watching: map[string]*keyWatch{}}
	watchUntilListed(t, w, "ns")
	ctx := t.Context()

	// The apiserver knows a Secret the watch has not seen yet.
	fresh := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "just-made",
		Labels: map[string]string{bastionv1.LabelKeyType: "none"}}}
	apiReads := 0
	c := interceptor.NewClient(fake.NewClientBuilder().WithObjects(fresh).Build(), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			apiReads++
			return c.Get(ctx, key, obj, opts...)
		},
	})
	r := &TaskReconciler{Client: c, Secrets: w}

	got := secretMetadata()
	if err := r.getInput(ctx, client.ObjectKey{Namespace: "ns", Name: "deploy"}, got); err != nil {
		t.Fatal(err)
	}
	if apiReads != 0 || got.Labels[bastionv1.LabelKeyType] != "ssh" || got.GroupVersionKind() != secretGVK {
		t.Fatalf("a watched Secret: %d apiserver reads, labels %v, kind %v; want none, the key label, Secret", apiReads, got.Labels, got.GroupVersionKind())
	}

	got = secretMetadata()
	if err := r.getInput(ctx, client.ObjectKey{Namespace: "ns", Name: "just-made"}, got); err != nil {
		t.Fatalf("a Secret the watch has not seen yet: %v", err)
	}
	if apiReads != 1 || got.Labels[bastionv1.LabelKeyType] != "none" {
		t.Fatalf("a Secret the watch has not seen: %d apiserver reads, labels %v", apiReads, got.Labels)
	}

	if err := r.getInput(ctx, client.ObjectKey{Namespace: "ns", Name: "absent"}, secretMetadata()); !apierrors.IsNotFound(err) {
		t.Fatalf("a Secret that exists nowhere: %v, want not found", err)
	}

	// Without watches every check is a read of the apiserver.
	r.Secrets = nil
	if err := r.getInput(ctx, client.ObjectKey{Namespace: "ns", Name: "deploy"}, secretMetadata()); !apierrors.IsNotFound(err) {
		t.Fatalf("without the watch, a Secret only the watch had: %v, want the apiserver's not found", err)
	}
}

// The task's input Secret: the watch answers when it has listed and the
// Secret is absent or this task's; a Secret of the name that is another
// task's, or a namespace it does not follow, is left to the apiserver.
func TestWatchedInput_answersOnlyForAbsentOrOwnSecrets(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	task := &bastionv1.Task{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t1", UID: "uid-now"}}
	input := func(name string, uid types.UID) *metav1.PartialObjectMetadata {
		s := secretMetadata()
		s.Namespace, s.Name = "ns", name
		yes := true
		s.OwnerReferences = []metav1.OwnerReference{{APIVersion: bastionv1.GroupVersion.String(), Kind: "Task", Name: "t1", UID: uid, Controller: &yes}}
		return s
	}
	w := &SecretWatches{client: metadatafake.NewSimpleMetadataClient(scheme, input("ours", "uid-now"), input("earlier", "uid-before")),
		watching: map[string]*keyWatch{}}
	r := &TaskReconciler{Secrets: w}
	if own, known := r.watchedInput(task, "ours"); known || own != nil {
		t.Fatalf("before the watch lists: known %v own %v, want neither", known, own)
	}
	watchUntilListed(t, w, "ns")
	for _, c := range []struct {
		ns, name   string
		known, own bool
	}{
		{"ns", "ours", true, true},
		{"ns", "absent", true, false},
		{"ns", "earlier", false, false}, // an earlier task's: ownInput deletes it
		{"other", "ours", false, false}, // a namespace not followed
	} {
		task := task.DeepCopy()
		task.Namespace = c.ns
		if own, known := r.watchedInput(task, c.name); known != c.known || (own != nil) != c.own {
			t.Errorf("%s/%s: known %v own %v, want %v %v", c.ns, c.name, known, own, c.known, c.own)
		}
	}
	if got, _ := r.watchedInput(task, "ours"); got == nil || got.Name != "ours" {
		t.Errorf("watchedInput(ours) = %v", got)
	}
	if got, _ := r.watchedInput(task, "earlier"); got != nil {
		t.Errorf("watchedInput(earlier) = %v, want nil: another task's", got)
	}
}

// watchUntilListed starts w on namespace ns for the rest of the test and
// waits until it has listed the namespace's Secrets.
func watchUntilListed(t *testing.T, w *SecretWatches, ns string) {
	t.Helper()
	w.Watch(ns)
	go func() { _ = w.Start(t.Context()) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, _, synced := w.Lookup(ns, ""); synced {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Secret watch of %s never listed", ns)
		}
	}
}
