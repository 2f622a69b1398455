package controllers_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// kubectlTimeout bounds one kubectl invocation, so a hung apiserver fails
// the test instead of hanging it.
const kubectlTimeout = 90 * time.Second

// kubectlRunner runs the real kubectl of the envtest assets against the
// suite's apiserver as a cluster admin.
type kubectlRunner struct {
	t          *testing.T
	binary     string
	kubeconfig string
	cacheDir   string
}

// newKubectl writes a cluster-admin kubeconfig for the suite's apiserver
// into the test's temporary directory. kubectl's discovery cache goes there
// too, so the tests never touch ~/.kube.
func newKubectl(t *testing.T) *kubectlRunner {
	t.Helper()
	binary := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	if _, err := os.Stat(binary); err != nil {
		t.Fatalf("kubectl is not among the envtest assets (run `make envtest-assets`): %v", err)
	}
	user, err := testEnv.AddUser(envtest.User{Name: "kubectl-test", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatalf("creating a kubectl user: %v", err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		t.Fatalf("making a kubeconfig: %v", err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return &kubectlRunner{t: t, binary: binary, kubeconfig: kubeconfig, cacheDir: filepath.Join(dir, "cache")}
}

// run runs kubectl with args and returns its stdout, and stderr on failure
// inside the error text.
func (k *kubectlRunner) run(args ...string) (string, error) {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	full := append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", k.cacheDir}, args...)
	cmd := exec.CommandContext(ctx, k.binary, full...)
	// Run from the module root so paths such as config/samples/ read as
	// they do in the README.
	cmd.Dir = ".."
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &kubectlError{args: args, err: err, stderr: stderr.String()}
	}
	return stdout.String(), nil
}

// mustRun runs kubectl and fails the test if it fails.
func (k *kubectlRunner) mustRun(args ...string) string {
	k.t.Helper()
	out, err := k.run(args...)
	if err != nil {
		k.t.Fatalf("%v\nstdout:\n%s", err, out)
	}
	return out
}

type kubectlError struct {
	args   []string
	err    error
	stderr string
}

func (e *kubectlError) Error() string {
	return "kubectl " + strings.Join(e.args, " ") + ": " + e.err.Error() + "\nstderr:\n" + e.stderr
}
