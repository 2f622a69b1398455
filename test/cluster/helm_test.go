package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	releaseName = "bastion"
	releaseNS   = "bastion-system"
	// The manager's Service gets this fixed ClusterIP, and task pods reach
	// it by address: the throwaway cluster runs no cluster DNS.
	managerIP = "10.96.0.100"
)

// env is what make e2e-cluster passes in; the test refuses to run without
// it rather than skip.
type env struct {
	kubeconfig, registry, tag, work string
}

func mustEnv(t *testing.T) env {
	t.Helper()
	e := env{os.Getenv("KUBECONFIG"), os.Getenv("BASTION_REGISTRY"), os.Getenv("BASTION_IMAGE_TAG"), os.Getenv("CLUSTER_WORK")}
	if e.kubeconfig == "" || e.registry == "" || e.tag == "" || e.work == "" {
		t.Fatal("run through `make e2e-cluster`: KUBECONFIG, BASTION_REGISTRY, BASTION_IMAGE_TAG and CLUSTER_WORK must be set")
	}
	return e
}

func clientset(t *testing.T, e env) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func helmConfig(t *testing.T, e env) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &e.kubeconfig
	ns := releaseNS
	flags.Namespace = &ns
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := cfg.Init(flags, releaseNS, "secret"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// values installs the just-built images, never pulled (there is no
// registry), and points the runners at the manager's fixed ClusterIP.
func values(e env) map[string]any {
	runner := func(app string) map[string]any {
		return map[string]any{"repository": e.registry + "/bastion-runner-" + app, "tag": e.tag}
	}
	return map[string]any{
		"image":     map[string]any{"repository": e.registry + "/bastion", "tag": e.tag, "pullPolicy": "Never"},
		"runner":    map[string]any{"imagePullPolicy": "Never", "images": map[string]any{"ansible": runner("ansible"), "terraform": runner("terraform"), "bash": runner("bash")}},
		"service":   map[string]any{"clusterIP": managerIP},
		"runnerURL": "http://" + managerIP,
		"publicURL": "http://" + managerIP,
		// Short, so that the test sees the Job go.
		"tasks": map[string]any{"jobTTL": "20s"},
	}
}

// install runs `helm install` of vals through the Helm SDK and returns the
// uninstall.
func install(t *testing.T, e env, vals map[string]any) func() {
	t.Helper()
	chart, err := loader.Load(filepath.Join("..", "..", "config", "helm", "bastion"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := helmConfig(t, e)
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace = releaseName, releaseNS, true
	in.WaitStrategy, in.Timeout = kube.HookOnlyStrategy, 2*time.Minute
	in.ServerSideApply = true
	if _, err := in.RunWithContext(t.Context(), chart, vals); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	return func() {
		un := action.NewUninstall(helmConfig(t, e))
		un.WaitStrategy, un.Timeout = kube.HookOnlyStrategy, time.Minute
		if _, err := un.Run(releaseName); err != nil {
			t.Errorf("helm uninstall: %v", err)
		}
		// The chart keeps the store's claim and the users (Secrets) on
		// uninstall: delete the namespace, so the next install starts empty.
		cs := clientset(t, e)
		if err := cs.CoreV1().Namespaces().Delete(context.Background(), releaseNS, metav1.DeleteOptions{}); err != nil && !gone(err) {
			t.Errorf("deleting namespace %s: %v", releaseNS, err)
		}
	}
}

func describe(p *corev1.Pod) string {
	s := fmt.Sprintf("pod %s phase %s", p.Name, p.Status.Phase)
	for _, c := range p.Status.ContainerStatuses {
		switch {
		case c.State.Waiting != nil:
			s += fmt.Sprintf("; %s waiting: %s %s", c.Name, c.State.Waiting.Reason, c.State.Waiting.Message)
		case c.State.Terminated != nil:
			s += fmt.Sprintf("; %s terminated: %s (%d)", c.Name, c.State.Terminated.Reason, c.State.Terminated.ExitCode)
		}
	}
	return s
}

func adminPassword(t *testing.T, cs *kubernetes.Clientset) string {
	t.Helper()
	s, err := cs.CoreV1().Secrets(releaseNS).Get(t.Context(), releaseName+"-initial-admin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(s.Data["password"])
}

func gone(err error) bool { return apierrors.IsNotFound(err) }

func exists(err error) bool { return apierrors.IsAlreadyExists(err) }
