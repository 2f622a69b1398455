package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/apiserver"
	"github.com/bastion-dev/bastion/controllers"
	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/controlplane"
	"github.com/bastion-dev/bastion/internal/hub"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/runtoken"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/taskpods"
	"github.com/bastion-dev/bastion/internal/users"
)

// The API tests run against a real kube-apiserver and etcd (envtest), the
// real reconcilers and a real SQLite store, through real HTTP. The
// environment starts on first use, once per test binary, so the unit tests
// of this package run without it.

const managerNamespace = "bastion-system"

// harnessTaskPods are the runner images and service accounts the cluster
// admin allows, as the chart's tasks.runnerImages and
// tasks.serviceAccounts set them (task_pods_test.go).
var harnessTaskPods = taskpods.Policy{
	Images:          []taskpods.Image{{Name: "ansible-gpu", Image: "registry.example.com/runner-ansible-gpu:1.2"}, {Name: "tf-1.9", Image: "registry.example.com/runner-terraform:1.9"}},
	ServiceAccounts: []string{"deployer"},
}

type apiEnv struct {
	URL   string
	K8s   client.Client // direct: tests see the apiserver, not a cache
	Store store.Store
	Users *users.Store
	Log   *syncBuffer // everything the API and the reconcilers logged
	Clock *testClock
	// Config reaches the same kube-apiserver (for watches).
	Config *rest.Config
	// opts is the shared server's configuration; serve makes variants.
	opts apiserver.Options
}

// serve starts another API server over the same cluster and store, with
// options changed by change (single sign-on, password sign-in off), and
// returns its URL.
func (e *apiEnv) serve(t *testing.T, change func(srvURL string, o *apiserver.Options)) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	opts := e.opts
	opts.PublicURL = "http://" + srv.Listener.Addr().String()
	change(opts.PublicURL, &opts)
	srv.Config.Handler = apiserver.New(opts)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

var (
	envOnce sync.Once
	envErr  error
	env     *apiEnv
	envStop func()
)

func TestMain(m *testing.M) {
	code := m.Run()
	if envStop != nil {
		envStop()
	}
	stopReplicas()
	apiserver.RemoveBenchBastion()
	os.Exit(code)
}

// testClock is the sessions' and rate limiter's clock; tests move it.
type testClock struct{ offset atomic.Int64 }

func (c *testClock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *testClock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// syncBuffer collects log output from many goroutines.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	discard bool // a benchmark keeps no log
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.discard {
		return len(p), nil
	}
	return b.buf.Write(p)
}

// Discard makes the buffer drop what is written from now on.
func (b *syncBuffer) Discard() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.discard = true
}

// harnessLogs is everything this test binary logs through
// controller-runtime's logger. The logger is set when the binary starts:
// controller-runtime takes only the first SetLogger, and on the first log
// line after 30 s without one it settles for a logger that drops
// everything. The package's own unit tests run first and can take that
// long, and then the canary tests, which search the log for secrets,
// found nothing to search.
var harnessLogs = &syncBuffer{}

func init() { ctrl.SetLogger(newTestLogger(harnessLogs)) }

// Cap is the memory the buffer holds.
func (b *syncBuffer) Cap() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Cap()
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startEnv returns the shared environment, starting it on first use.
func startEnv(t *testing.T) *apiEnv {
	t.Helper()
	envOnce.Do(func() { env, envStop, envErr = bootEnv() })
	if envErr != nil {
		t.Fatalf("starting the API environment: %v", envErr)
	}
	return env
}

func bootEnv() (*apiEnv, func(), error) {
	logs := harnessLogs
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		os.Setenv("KUBEBUILDER_ASSETS", controlplane.DefaultAssetsDir())
	}
	if err := controlplane.CheckAssets(os.Getenv("KUBEBUILDER_ASSETS")); err != nil {
		return nil, nil, err
	}
	te := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := te.Start()
	if err != nil {
		return nil, nil, err
	}
	stops := []func(){func() { _ = te.Stop() }}
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	e, more, err := bootManager(cfg, logs)
	stops = append(stops, more...)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return e, stop, nil
}

func bootManager(cfg *rest.Config, logs *syncBuffer) (*apiEnv, []func(), error) {
	var stops []func()
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(bastionv1.AddToScheme(scheme))
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme, Cache: controllers.CacheOptions(managerNamespace), Client: controllers.ClientOptions(),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return nil, stops, err
	}
	dir, err := os.MkdirTemp("", "bastion-api-test")
	if err != nil {
		return nil, stops, err
	}
	stops = append(stops, func() { _ = os.RemoveAll(dir) })
	st, err := store.Open(context.Background(), "sqlite://"+filepath.Join(dir, "api.db"))
	if err != nil {
		return nil, stops, err
	}
	stops = append(stops, func() { _ = st.Close() })
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, stops, err
	}
	alloc := &ids.Allocator{Client: direct}
	keys, err := controllers.NewSecretWatches(cfg)
	if err != nil {
		return nil, stops, err
	}
	if err := mgr.Add(keys); err != nil {
		return nil, stops, err
	}
	// As the manager command wires them: the reconciler hands the tokens
	// of the runs it starts to this server's runner endpoint.
	tokens := &runtoken.Book{}
	err = controllers.Setup(mgr, controllers.Options{
		ManagerNamespace: managerNamespace, IDs: alloc, Store: st, Keys: keys, RunTokens: tokens,
		Launcher: &launch.JobLauncher{Client: mgr.GetClient(), Options: launch.DefaultJobOptions()},
		TaskPods: harnessTaskPods,
	})
	if err != nil {
		return nil, stops, err
	}
	clock := &testClock{}
	userStore := &users.Store{Client: mgr.GetClient(), Namespace: managerNamespace, IDs: alloc, Now: clock.Now}
	live := hub.New()
	if err := apiserver.PublishLines(context.Background(), mgr.GetCache(), mgr.GetCache(), st, live); err != nil {
		return nil, stops, err
	}
	srv := httptest.NewUnstartedServer(nil)
	opts := apiserver.Options{
		Version: "test", PublicURL: "http://" + srv.Listener.Addr().String(),
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Informers: mgr.GetCache(), Keys: keys, Store: st, Hub: live,
		RunTokens: tokens, Users: userStore, IDs: alloc, ManagerNamespace: managerNamespace,
		Auth:     apiserver.AuthOptions{Now: clock.Now},
		TaskPods: harnessTaskPods,
	}
	srv.Config.Handler = apiserver.New(opts)
	srv.Start()
	stops = append(stops, srv.Close)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	stops = append(stops, func() { cancel(); <-done })
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, stops, fmt.Errorf("the cache did not sync")
	}
	return &apiEnv{URL: srv.URL, K8s: direct, Store: st, Users: userStore, Log: logs, Clock: clock, Config: cfg, opts: opts}, stops, nil
}

var userSeq atomic.Int64

// newUser makes a user with a unique login and returns it with its
// password. Tests share one cluster, so names never repeat.
func (e *apiEnv) newUser(t *testing.T, prefix string, admin bool) (*bastionv1.User, string) {
	t.Helper()
	n := userSeq.Add(1)
	login := fmt.Sprintf("%s-%d", prefix, n)
	password := users.RandomPassword(12)
	u, err := e.Users.Create(t.Context(), bastionv1.UserSpec{
		Username: login, Name: strings.ToUpper(prefix[:1]) + prefix[1:] + fmt.Sprint(n),
		Email: login + "@example.test", Admin: admin,
	}, password)
	if err != nil {
		t.Fatal(err)
	}
	return u, password
}

// userIDOf is the API id of a user.
func userIDOf(t *testing.T, u *bastionv1.User) int64 {
	t.Helper()
	id, ok := ids.FromLabels(u)
	if !ok {
		t.Fatalf("user %s has no id", u.Name)
	}
	return id
}

// browser is an HTTP client with a cookie jar, like a console tab.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
	// header is sent with every request (a bearer token, an Origin).
	header http.Header
}

func (e *apiEnv) browser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, base: e.URL, c: &http.Client{Jar: jar, Timeout: 30 * time.Second}, header: http.Header{}}
}

// signIn returns a browser signed in as login.
func (e *apiEnv) signIn(t *testing.T, login, password string) *browser {
	t.Helper()
	b := e.browser(t)
	if code, body := b.call("POST", "/api/auth/login", map[string]string{"auth": login, "password": password}); code != http.StatusNoContent {
		t.Fatalf("sign in as %s = %d %s", login, code, body)
	}
	return b
}

// call sends a request; body is JSON-encoded unless it is []byte.
func (b *browser) call(method, path string, body any) (int, []byte) {
	b.t.Helper()
	var r io.Reader
	switch v := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(v)
	default:
		data, err := json.Marshal(v)
		if err != nil {
			b.t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(b.t.Context(), method, b.base+path, r)
	if err != nil {
		b.t.Fatal(err)
	}
	for k, v := range b.header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// must sends a request, insists on the status and decodes the answer.
func (b *browser) must(method, path string, body any, want int, out any) {
	b.t.Helper()
	code, data := b.call(method, path, body)
	if code != want {
		b.t.Fatalf("%s %s = %d %s, want %d", method, path, code, data, want)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			b.t.Fatalf("%s %s: decoding %s: %v", method, path, data, err)
		}
	}
}

// errorOf is the error message of an answer.
func errorOf(t *testing.T, data []byte) string {
	t.Helper()
	var body struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(data, &body); err != nil || body.Error == "" {
		t.Fatalf("answer %q is not {\"error\": ...}", data)
	}
	return body.Error
}
