package controllers_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Every sample in config/samples must be accepted by the real apiserver,
// so that `kubectl apply -f config/samples/` works for a newcomer.
func TestSamples_areAcceptedByTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	files, err := filepath.Glob(filepath.Join("..", "config", "samples", "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	checked := 0
	for _, file := range files {
		if filepath.Base(file) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(file)
		g.Expect(err).NotTo(HaveOccurred())
		for _, doc := range strings.Split(string(data), "\n---\n") {
			obj := &unstructured.Unstructured{}
			g.Expect(yaml.Unmarshal([]byte(doc), &obj.Object)).To(Succeed(), file)
			if len(obj.Object) == 0 {
				continue
			}
			err := k8sClient.Create(context.Background(), obj, client.DryRunAll)
			g.Expect(err).NotTo(HaveOccurred(), "%s: %s %s", file, obj.GetKind(), obj.GetName())
			checked++
		}
	}
	g.Expect(checked).To(BeNumerically(">=", 2))
}
