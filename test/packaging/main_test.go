// Package packaging tests how Bastion installs: the Helm chart
// (config/helm/bastion) and kustomize's config/default are rendered with
// the Helm SDK and kustomize's Go API, and what they produce is applied to a
// real kube-apiserver (envtest) with server-side dry run, so every object
// is validated by the API it will meet on a cluster: schemas, CRDs, RBAC
// and admission.
//
// It is its own Go module so that Helm's and kustomize's dependencies stay
// out of the bastion binary's module; the k8s.io and controller-runtime
// versions are the same as the main module's (go.mod pins them).
package packaging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// repoRoot is the bastion checkout this module lives in.
const repoRoot = "../.."

var (
	cfg       *rest.Config
	k8sClient client.Client
)

func TestMain(m *testing.M) {
	env := &envtest.Environment{
		CRDInstallOptions: envtest.CRDInstallOptions{
			Paths:              []string{filepath.Join(repoRoot, "config", "crd", "bases"), filepath.Join("testdata", "servicemonitor-crd.yaml")},
			ErrorIfPathMissing: true,
		},
	}
	var err error
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "starting envtest (is KUBEBUILDER_ASSETS set?): %v\n", err)
		os.Exit(1)
	}
	if k8sClient, err = client.New(cfg, client.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

// decodeAll splits a multi-document YAML stream into objects, skipping
// empty documents.
func decodeAll(t *testing.T, source string, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// ensureNamespace creates a namespace for real: a dry-run object cannot be
// created in a namespace that does not exist.
func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	if err := k8sClient.Create(context.Background(), ns); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
}

// dryRunApply sends each object as a server-side apply with dryRun=All:
// the apiserver validates and admits it, and stores nothing.
func dryRunApply(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, obj := range objs {
		apply := client.ApplyConfigurationFromUnstructured(obj.DeepCopy())
		if err := k8sClient.Apply(context.Background(), apply, client.DryRunAll, client.ForceOwnership, client.FieldOwner("packaging-test")); err != nil {
			t.Errorf("%s %s/%s was refused: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
	}
}

// kinds counts objects by kind, for asserting what a render produced.
func kinds(objs []*unstructured.Unstructured) map[string]int {
	out := map[string]int{}
	for _, o := range objs {
		out[o.GetKind()]++
	}
	return out
}

// find returns the object of that kind whose name ends with suffix.
func find(t *testing.T, objs []*unstructured.Unstructured, kind, suffix string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && strings.HasSuffix(o.GetName(), suffix) {
			return o
		}
	}
	t.Fatalf("no %s named *%s in %v", kind, suffix, kinds(objs))
	return nil
}

// assertRestrictedPod dry-runs the Deployment's pod in a namespace that
// enforces the restricted Pod Security Standard: the apiserver's
// PodSecurity admission refuses the pod if any field falls short.
func assertRestrictedPod(t *testing.T, deploy *unstructured.Unstructured) {
	t.Helper()
	const ns = "restricted-check"
	namespace := &unstructured.Unstructured{}
	namespace.SetAPIVersion("v1")
	namespace.SetKind("Namespace")
	namespace.SetName(ns)
	namespace.SetLabels(map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	if err := k8sClient.Create(context.Background(), namespace); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	spec, found, err := unstructured.NestedMap(deploy.Object, "spec", "template", "spec")
	if !found || err != nil {
		t.Fatalf("%s has no pod template: %v", deploy.GetName(), err)
	}
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": spec}}
	pod.SetName(deploy.GetName())
	pod.SetNamespace(ns)
	if err := k8sClient.Create(context.Background(), pod, client.DryRunAll); err != nil {
		t.Errorf("the %s pod does not meet the restricted Pod Security Standard: %v", deploy.GetName(), err)
	}
}
