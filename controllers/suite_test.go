package controllers_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers"
	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/controlplane"
	"github.com/bastion-dev/bastion/internal/nsaccess"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/taskpods"
)

// suiteOptions configure the reconcilers under test. Schedules may read
// repositories of this host, as under bastion dev (the refusal without
// the flag is TestCheckCommit_*).
var suiteOptions = controllers.Options{ManagerNamespace: "bastion-system", Clock: suiteClock, ManagerURL: suiteManagerURL,
	AllowLocalRepositories: true, TaskPods: suiteTaskPods}

// suiteTaskPods are what the cluster admin lets projects choose for their
// task pods, as the chart's tasks.runnerImages and tasks.serviceAccounts
// set them (task_pod_settings_test.go).
var suiteTaskPods = taskpods.Policy{
	Images:          []taskpods.Image{{Name: "ansible-gpu", Image: "registry.example.com/runner-ansible-gpu:1.2"}},
	ServiceAccounts: []string{"deployer"},
}

// suiteManagerURL is the stream endpoint runners are told, as the Helm
// chart sets it (--runner-url: the manager's Service).
const suiteManagerURL = "http://bastion.bastion-system.svc:80"

// suiteClock is the reconcilers' clock: tests step it instead of waiting.
var suiteClock = clocktesting.NewFakeClock(time.Now())

// suiteStore is the output store the reconcilers write summaries to.
var suiteStore store.Store

// k8sClient talks to the suite's real kube-apiserver, with the reconcilers
// running against it in the background.
var k8sClient client.Client

// suiteCache is the manager's own client, which reads its cache and its
// indexes, as the API server's does.
var suiteCache client.Client

// suiteCacheSynced waits until the manager's cache has started and synced.
var suiteCacheSynced func(context.Context) bool

// testEnv is the suite's envtest environment (kubectl_test.go makes
// kubeconfigs from it).
var testEnv *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	// Only errors: the reconcilers' info lines would bury the test output.
	logLevel := uberzap.NewAtomicLevelAt(zapcore.ErrorLevel)
	ctrl.SetLogger(zap.New(zap.WriteTo(io.MultiWriter(os.Stderr, suiteLogs)), zap.Level(logLevel)))
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		os.Setenv("KUBEBUILDER_ASSETS", controlplane.DefaultAssetsDir())
	}
	if err := controlplane.CheckAssets(os.Getenv("KUBEBUILDER_ASSETS")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	testEnv = env
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()

	ctx, cancel := context.WithCancel(context.Background())
	stopped, err := startManager(ctx, cfg)
	if err != nil {
		cancel()
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	// Stop the reconcilers before the apiserver, so they don't log the
	// apiserver's disappearance as errors.
	// Reconciles cut off by the stop report "context canceled"; that is
	// the stop working, not an error worth printing.
	logLevel.SetLevel(zapcore.FatalLevel)
	cancel()
	<-stopped
	return code
}

func startManager(ctx context.Context, cfg *rest.Config) (<-chan struct{}, error) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(bastionv1.AddToScheme(scheme))

	// As the manager command does: no client-side rate limit.
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Cache: controllers.CacheOptions(suiteOptions.ManagerNamespace), Client: controllers.ClientOptions(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return nil, err
	}
	// A real SQLite store keeps finished tasks' summaries.
	dir, err := os.MkdirTemp("", "bastion-suite-store")
	if err != nil {
		return nil, err
	}
	if suiteStore, err = store.Open(ctx, "sqlite://"+filepath.Join(dir, "suite.db")); err != nil {
		return nil, err
	}
	suiteOptions.Store = suiteStore
	if suiteOptions.Alerts, err = startAlerts(mgr, dir); err != nil {
		return nil, err
	}
	// envtest has no kubelet: Jobs are created for real, and tests set
	// their status as the kubelet would.
	suiteOptions.Launcher = &launch.JobLauncher{Client: mgr.GetClient(), Options: launch.DefaultJobOptions()}
	// As on a cluster: every project namespace gets the manager's
	// namespace role. The suite's credentials are an administrator's, so
	// the role need not exist for the binding to be made.
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	// As the chart configures it (--runner-network-policy), with rules
	// that would reach the cloud metadata service (task_pods_test.go).
	suiteOptions.RunnerNetworkPolicy = suiteRunnerEgress()
	suiteOptions.Namespaces = &nsaccess.Granter{Client: direct, Role: "bastion-namespace", ServiceAccount: "bastion-manager", Namespace: "bastion-system"}
	if err := controllers.Setup(mgr, suiteOptions); err != nil {
		return nil, err
	}
	suiteCache, suiteCacheSynced = mgr.GetClient(), mgr.GetCache().WaitForCacheSync
	// Tests read through a direct client so they see the apiserver, not a
	// cache that may lag.
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return stopped, nil
}
