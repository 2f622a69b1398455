package backup

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/controlplane"
	"github.com/bastion-dev/bastion/internal/objname"
)

// k8sClient talks to a real kube-apiserver with Bastion's CRDs, so that
// restores meet the CRDs' schemas and CEL rules. No controllers run: a
// restore must not depend on them.
var (
	k8sClient  client.WithWatch
	restConfig *rest.Config
	testScheme *runtime.Scheme
)

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	flag.Parse()
	if fuzzing() {
		// `go test -fuzz` runs the parser alone, in several worker
		// processes: none of them needs (or should start) a cluster.
		return m.Run()
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		os.Setenv("KUBEBUILDER_ASSETS", controlplane.DefaultAssetsDir())
	}
	if err := controlplane.CheckAssets(os.Getenv("KUBEBUILDER_ASSETS")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	restConfig = cfg

	testScheme = runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(testScheme))
	utilruntime.Must(bastionv1.AddToScheme(testScheme))
	if k8sClient, err = client.NewWithWatch(cfg, client.Options{Scheme: testScheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// fuzzing reports a `go test -fuzz` run (or one of its workers).
func fuzzing() bool {
	for _, name := range []string{"test.fuzz", "test.fuzzworker"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			return true
		}
	}
	return false
}

// createProject is what the API's create does, minus the controller: a
// Project with a name generated from its display name, and its namespace,
// labelled for it as the Project controller would adopt it.
func createProject(c client.Client) CreateProject {
	return func(ctx context.Context, spec bastionv1.ProjectSpec) (*bastionv1.Project, error) {
		project := &bastionv1.Project{
			ObjectMeta: metav1.ObjectMeta{GenerateName: objname.GenerateName(spec.DisplayName, "project")},
			Spec:       spec,
		}
		if err := c.Create(ctx, project); err != nil {
			return nil, err
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:   bastionv1.ProjectNamespace(project.Name),
			Labels: map[string]string{bastionv1.LabelProject: project.Name},
		}}
		if err := c.Create(ctx, ns); err != nil {
			return nil, err
		}
		return project, nil
	}
}

// clusterState is what a failed restore must leave as it found: the
// Projects and the namespaces (by name, with whether they are being
// deleted, since envtest runs no namespace controller to finish it).
func clusterState(t *testing.T) (projects, namespaces []string) {
	t.Helper()
	ctx := context.Background()
	var pl bastionv1.ProjectList
	if err := k8sClient.List(ctx, &pl); err != nil {
		t.Fatal(err)
	}
	for _, p := range pl.Items {
		projects = append(projects, p.Name)
	}
	var nl corev1.NamespaceList
	if err := k8sClient.List(ctx, &nl); err != nil {
		t.Fatal(err)
	}
	for _, n := range nl.Items {
		namespaces = append(namespaces, fmt.Sprintf("%s(deleting=%v)", n.Name, !n.DeletionTimestamp.IsZero()))
	}
	return projects, namespaces
}
