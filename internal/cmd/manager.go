package cmd

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/apiserver"
	"github.com/bastion-dev/bastion/console"
	"github.com/bastion-dev/bastion/controllers"
	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/alert"
	"github.com/bastion-dev/bastion/internal/cli"
	"github.com/bastion-dev/bastion/internal/demorepo"
	"github.com/bastion-dev/bastion/internal/hub"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/metrics"
	"github.com/bastion-dev/bastion/internal/nsaccess"
	"github.com/bastion-dev/bastion/internal/oidc"
	"github.com/bastion-dev/bastion/internal/runtoken"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/taskpods"
	"github.com/bastion-dev/bastion/internal/users"
	"github.com/bastion-dev/bastion/internal/version"
)

// managerOptions configure `bastion manager` (and the manager inside dev).
type managerOptions struct {
	Listen    string // API and console
	PublicURL string // how users reach the console (web_host)
	// TrustedProxies are the reverse proxies whose X-Forwarded-For and
	// X-Forwarded-Host are believed (--trusted-proxies).
	TrustedProxies []netip.Prefix
	MetricsAddr    string // "0" disables
	ProbeAddr      string // "0" disables
	// ShutdownDelay is how long the API keeps serving after SIGTERM, not
	// ready meanwhile; Draining closes at that SIGTERM (stopOnSignal).
	ShutdownDelay time.Duration
	Draining      <-chan struct{}
	// Probes answers on ProbeAddr, bound by the command before the store
	// opens (nil: none).
	Probes      *probes
	LeaderElect bool
	// LeaderElection times the Lease of --leader-elect (leader.go).
	LeaderElection leaderElection
	Namespace      string // the manager's own namespace (user password Secrets)
	// NamespaceRole and ServiceAccount, when set, make the manager bind
	// that ClusterRole to its ServiceAccount in each project namespace
	// (internal/nsaccess): its only rights on Secrets.
	NamespaceRole, ServiceAccount string

	GlobalMaxParallelTasks int
	// AllowLocalRepositories lets the manager itself read repositories
	// given as paths or file:// URLs of its host (schedules that run only
	// on a new commit); on in bastion dev, off by default.
	AllowLocalRepositories bool
	TaskKeepLast           int
	// TaskInputGrace is how long a new task waits for its template and
	// inputs (an apply has no order) before it fails.
	TaskInputGrace time.Duration
	// StoreDSN names the output store (internal/store.Open).
	StoreDSN string
	// RunnerURL is where runners reach the manager (default PublicURL):
	// in a cluster, the Service's address rather than the users' one.
	RunnerURL string
	// Launcher runs tasks; nil means Jobs with JobOptions, or local
	// processes when LocalRunsDir is set.
	Launcher   launch.Launcher
	JobOptions launch.JobOptions
	// LocalRunsDir, when set, runs tasks as `bastion runner` processes of
	// this host, with their files under it (--local-runs).
	LocalRunsDir string
	// DisablePasswordLogin leaves only single sign-on.
	DisablePasswordLogin bool
	// OIDC is the single sign-on providers, from flags and a config file.
	OIDC []oidc.ProviderConfig
	// OIDCCookieKeyFile holds a key shared by replicas for the sign-in
	// cookie; without it each process draws its own.
	OIDCCookieKeyFile string
	// DemoRepo, when set, serves the demo repository (internal/demorepo).
	DemoRepo net.Listener
	// DemoRepoURL is where runners clone the demo repository (default
	// git://<runner URL's host>:<DemoRepo's port>/demo.git); without it
	// and DemoRepo, demo projects are refused.
	DemoRepoURL string
	// EditManagedObjects lets the API edit and delete objects that a
	// GitOps tool manages (--allow-gitops-edits; docs/gitops.md).
	EditManagedObjects bool
	// Alerts configure alerts on task results (no sender: none are sent).
	Alerts alert.Config
	// InitialAdmin, when its password is set, is created if there are no
	// users at all, so a fresh install can be signed in to.
	InitialAdmin initialAdmin
	// RunnerNetworkPolicy, when set, is applied to every project namespace
	// to confine task pods (--runner-network-policy).
	RunnerNetworkPolicy *networkingv1.NetworkPolicySpec
	// TaskPods is what projects and templates may choose for their task
	// pods (--runner-images, --task-service-accounts).
	TaskPods taskpods.Policy
	// alertFlags are the parsed alert flags, turned into Alerts once the
	// public URL is known.
	alertFlags *alertFlags
}

func defaultNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "bastion-system"
}

func runManagerCommand(args []string, _, stderr io.Writer) error {
	opts, demoRepoListen, err := parseManagerFlags(args, stderr)
	if err != nil {
		return err
	}
	ctrl.SetLogger(zap.New())
	if limit, ok := setMemoryLimit("/sys/fs/cgroup", os.Getenv); ok {
		ctrl.Log.Info("soft memory limit set from the container's", "bytes", limit)
	}

	// Before anything else: a second manager on one SQLite file stops
	// here, having touched nothing.
	storeLock, err := lockSQLiteStore(opts.StoreDSN)
	if err != nil {
		return err
	}
	if storeLock != nil {
		defer storeLock.Close()
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("no cluster to talk to: %w", err)
	}
	ln, err := listen(opts.Listen)
	if err != nil {
		return err
	}
	// From now until the process ends, whatever the manager does.
	if opts.Probes, err = serveProbes(opts.ProbeAddr); err != nil {
		_ = ln.Close()
		return err
	}
	defer opts.Probes.Close()
	if opts.DemoRepo, err = listenDemoRepo(demoRepoListen); err != nil {
		_ = ln.Close()
		return err
	}
	if opts.PublicURL == "" {
		opts.PublicURL = "http://" + ln.Addr().String()
	}
	if opts.Alerts, err = opts.alertFlags.config(opts.PublicURL); err == nil {
		var mgr manager.Manager
		draining := make(chan struct{})
		opts.Draining = draining
		if mgr, err = newManager(cfg, ln, opts); err == nil {
			return mgr.Start(stopOnSignal(opts.ShutdownDelay, opts.Probes, draining))
		}
	}
	_ = ln.Close()
	if opts.DemoRepo != nil {
		_ = opts.DemoRepo.Close()
	}
	return err
}

// parseManagerFlags reads the manager's flags; it also returns the demo
// repository's listen address, which runManagerCommand binds.
func parseManagerFlags(args []string, stderr io.Writer) (managerOptions, string, error) {
	opts := managerOptions{}
	fs := cli.NewFlagSet("manager", stderr)
	fs.StringVar(&opts.Listen, "listen", ":3000", "address of the API and the console")
	fs.StringVar(&opts.PublicURL, "public-url", "", "URL users reach the console at (default http://<listen>)")
	fs.StringVar(&opts.PublicURL, "external-url", "", "the same as --public-url (Semaphore's web_host): browsers' Origin may name it behind a proxy that rewrites Host")
	fs.Func("trusted-proxies", trustedProxiesUsage, func(v string) (err error) {
		opts.TrustedProxies, err = apiserver.ParseTrustedProxies(v)
		return err
	})
	fs.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8080", `metrics address ("0" disables)`)
	fs.StringVar(&opts.ProbeAddr, "health-probe-bind-address", ":8081", `health probe address ("0" disables)`)
	fs.Func("shutdown-delay", "after SIGTERM, keep serving the API this long while /readyz answers 503, so that the Service's proxies stop sending this replica requests before it closes (the chart sets 5s; default 0: close at once). The pod's terminationGracePeriodSeconds must hold it and about 45 s more for the stop after it", func(v string) (err error) {
		opts.ShutdownDelay, err = time.ParseDuration(v)
		if err == nil && (opts.ShutdownDelay < 0 || opts.ShutdownDelay > maxShutdownDelay) {
			err = fmt.Errorf("want a duration from 0 to %s, not %s", maxShutdownDelay, v)
		}
		return err
	})
	fs.BoolVar(&opts.LeaderElect, "leader-elect", false, "use leader election, for more than one replica: every replica serves the API, the one holding the Lease runs the controllers")
	opts.LeaderElection.register(fs)
	fs.StringVar(&opts.Namespace, "namespace", defaultNamespace(), "the manager's namespace")
	fs.StringVar(&opts.NamespaceRole, "namespace-role", "", "ClusterRole giving the manager Secrets and ConfigMaps, bound to --service-account in each project namespace (empty: the manager's credentials already allow them)")
	fs.StringVar(&opts.ServiceAccount, "service-account", "", "the manager's ServiceAccount in --namespace, for --namespace-role")
	fs.IntVar(&opts.GlobalMaxParallelTasks, "global-max-parallel-tasks", 0, "running tasks across all projects (0 = no limit)")
	fs.BoolVar(&opts.AllowLocalRepositories, "allow-local-repositories", false, "let the manager itself read repositories given as a path or file:// URL of its host (schedules that run only on a new commit); off, such a schedule says \"cannot reach the repository\"")
	opts.JobOptions = launch.DefaultJobOptions()
	for app, flagName := range map[bastionv1.TemplateApp]string{
		bastionv1.AppAnsible: "runner-image-ansible", bastionv1.AppTerraform: "runner-image-terraform", bastionv1.AppBash: "runner-image-bash",
	} {
		fs.Func(flagName, "runner image for "+string(app)+" tasks (default "+opts.JobOptions.Images[app]+")", func(v string) error {
			opts.JobOptions.Images[app] = v
			if app == bastionv1.AppTerraform {
				opts.JobOptions.Images[bastionv1.AppTofu] = v
			}
			return nil
		})
	}
	fs.Func("runner-image-pull-policy", "pull policy of the runner images: Always, IfNotPresent or Never (default IfNotPresent)", func(v string) error {
		switch policy := corev1.PullPolicy(v); policy {
		case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
			opts.JobOptions.ImagePullPolicy = policy
			return nil
		}
		return fmt.Errorf("want Always, IfNotPresent or Never, not %q", v)
	})
	opts.JobOptions.RegisterResourceFlags(fs)
	registerTaskPodFlags(fs, &opts.TaskPods)
	fs.StringVar(&opts.StoreDSN, "store", "sqlite:///var/lib/bastion/bastion.db", "output store: sqlite:///path/file.db or postgres://...")
	fs.Func("store-file", "file with the --store DSN (a PostgreSQL DSN holds a password: a file keeps it out of the process's argv)", func(path string) error {
		dsn, err := readSecretFile(path, "store DSN")
		opts.StoreDSN = dsn
		return err
	})
	fs.StringVar(&opts.RunnerURL, "runner-url", "", "URL runners reach the manager at (default --public-url)")
	fs.StringVar(&opts.LocalRunsDir, "local-runs", "", "run tasks as processes of this host instead of Jobs, with their files in this directory (as bastion dev does; runs survive a restart of the manager). "+
		"As root, each run starts as its own unprivileged user and cannot read the manager's files or other runs; otherwise runs share the manager's user and can read everything it can, said at start")
	fs.IntVar(&opts.TaskKeepLast, "task-keep-last", controllers.DefaultTaskKeepLast, "finished tasks kept as objects per template (a template's keepLast overrides it)")
	fs.DurationVar(&opts.TaskInputGrace, "task-input-grace", controllers.DefaultInputGrace, "how long a new task waits for its template and inputs to exist before it fails")
	fs.DurationVar(&opts.JobOptions.ActiveDeadline, "task-deadline", opts.JobOptions.ActiveDeadline, "longest a task may run")
	fs.DurationVar(&opts.JobOptions.TTLAfterFinished, "task-job-ttl", opts.JobOptions.TTLAfterFinished, "how long a finished task's Job (and its pod's log) is kept; the output stays in the store")
	fs.BoolVar(&opts.DisablePasswordLogin, "disable-password-login", false, "turn password sign-in off (single sign-on only)")
	fs.BoolVar(&opts.EditManagedObjects, "allow-gitops-edits", false, "let the console and the API edit and delete objects that Flux, Argo CD or another app.kubernetes.io/managed-by manager keeps (off: they are read-only there and name their manager; docs/gitops.md)")
	fs.Func("oidc-provider", "a single sign-on provider: id=…,name=…,issuer=…,client-id=…,client-secret-file=… or client-secret-ref=SECRET/KEY[,color=…,icon=…] (repeatable)", func(v string) error {
		p, err := oidc.ParseFlag(v)
		if err != nil {
			return err
		}
		opts.OIDC = append(opts.OIDC, p)
		return nil
	})
	fs.Func("oidc-config", "a YAML or JSON file listing single sign-on providers", func(path string) error {
		ps, err := oidc.LoadConfig(path)
		if err != nil {
			return err
		}
		opts.OIDC = append(opts.OIDC, ps...)
		return nil
	})
	fs.StringVar(&opts.OIDCCookieKeyFile, "oidc-cookie-key-file", "", "file with a key shared by all replicas for the single sign-on cookie")
	demoRepoListen := fs.String("demo-repo-listen", fmt.Sprintf(":%d", demorepo.DefaultPort), `address of the built-in demo git repository, served over git:// ("" turns it and demo projects off)`)
	fs.StringVar(&opts.DemoRepoURL, "demo-repo-url", "", "URL runners clone the demo repository from (default git://<host of --runner-url>:<port of --demo-repo-listen>/demo.git)")
	alerts := &alertFlags{}
	alerts.register(fs)
	fs.StringVar(&opts.InitialAdmin.Login, "initial-admin-login", "admin", "login of the administrator created when there are no users")
	fs.StringVar(&opts.InitialAdmin.Email, "initial-admin-email", "admin@localhost", "email of that administrator")
	fs.Func("initial-admin-password-file", "file with the password of the administrator created when there are no users (none: no administrator is created)", func(path string) error {
		password, err := readPasswordFile(path)
		opts.InitialAdmin.Password = password
		return err
	})
	fs.Func("runner-network-policy", "a YAML file with the egress rules of task pods (a NetworkPolicy spec's egress list), applied to every project namespace", func(path string) error {
		spec, err := readRunnerNetworkPolicy(path)
		opts.RunnerNetworkPolicy = spec
		return err
	})
	err := cli.Parse(fs, args)
	if err == nil && (opts.NamespaceRole == "") != (opts.ServiceAccount == "") {
		err = errors.New("--namespace-role and --service-account go together: the role is bound to that ServiceAccount")
	}
	if err == nil {
		err = opts.JobOptions.CheckResources()
	}
	if err == nil && opts.LeaderElect {
		err = opts.LeaderElection.check()
	}
	// Alerts link to the console, whose URL may default to the listen
	// address: they are configured once that is known.
	opts.alertFlags = alerts
	return opts, *demoRepoListen, err
}

// storeCallLimit bounds each call to the output store (store.Bounded):
// far above what a call takes (milliseconds; a 4 MiB batch with its fsync
// well under a second), so that only a store that stopped answering meets
// it, and then each request fails instead of waiting for ever.
const storeCallLimit = 10 * time.Second

// trustedProxiesUsage is the help of --trusted-proxies, here and in dev.
const trustedProxiesUsage = "reverse proxies (CIDRs or addresses, comma-separated) whose X-Forwarded-For gives the client's address for the sign-in limits and whose X-Forwarded-Host may name this server for the websocket; from any other peer those headers are ignored"

// listen binds the API address before anything else starts, so that a busy
// port is reported at once and leaves nothing running.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w (is another program using that port? choose one with --listen)", addr, unwrapSyscall(err))
	}
	return ln, nil
}

func unwrapSyscall(err error) error {
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}

// newManager builds the controller-runtime manager with every reconciler
// and the HTTP server on ln.
func newManager(cfg *rest.Config, ln net.Listener, opts managerOptions) (_ ctrl.Manager, err error) {
	if cfg.QPS == 0 {
		// A config that did not come from ctrl.GetConfig (the embedded
		// control plane's) would fall back to client-go's 5 requests per
		// second. Leave fairness to the apiserver, as GetConfig does.
		cfg = rest.CopyConfig(cfg)
		cfg.QPS = -1
	}
	options, lease, err := electionOptions(cfg, opts)
	if err != nil {
		return nil, err
	}
	options.Scheme = newScheme()
	options.Cache = controllers.CacheOptions(opts.Namespace)
	// Secrets and ConfigMaps are read from the apiserver, never cached
	// whole: a cache would hold every Secret of the cluster in memory.
	options.Client = controllers.ClientOptions()
	options.Metrics = metricsserver.Options{BindAddress: opts.MetricsAddr}
	// The probes are opts.Probes, which answer from before the store opens.
	options.HealthProbeBindAddress = "0"
	// A migration may take minutes; it says so in the log, and the probes
	// say alive, not ready.
	opened, err := store.Open(ctrl.LoggerInto(context.Background(), ctrl.Log.WithName("store")), opts.StoreDSN)
	if err != nil {
		return nil, fmt.Errorf("opening the output store: %w", err)
	}
	defer func() {
		if err != nil {
			opened.Close() // the manager that would have closed it is not made
		}
	}()
	opts.Probes.set(whyStarting)
	mgr, err := ctrl.NewManager(cfg, options)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if lease != nil {
		if err := mgr.Add(elected{lease}); err != nil {
			return nil, err
		}
	}
	output := metrics.InstrumentStore(store.Bounded(opened, storeCallLimit))
	if err := metrics.RegisterTaskCollector(mgr.GetCache()); err != nil {
		return nil, err
	}
	live := hub.New()
	// Update frames come from the Task cache, output lines from the
	// store's line feed, whichever replica stored them; the line
	// publisher stops when the store closes.
	if err := apiserver.PublishLive(context.Background(), mgr.GetCache(), output, live); err != nil {
		return nil, err
	}
	if err := mgr.Add(onEveryReplica(func(ctx context.Context) error {
		<-ctx.Done()
		live.Close() // websocket clients hear "going away"
		return nil
	})); err != nil {
		return nil, err
	}
	// One allocator for the controllers and the API, which both number
	// objects; it reads the counters straight from the apiserver.
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, err
	}
	launcher := opts.Launcher
	switch {
	case launcher != nil:
	case opts.LocalRunsDir != "":
		local, notice, err := localLauncher(direct, opts.LocalRunsDir)
		if err != nil {
			return nil, fmt.Errorf("--local-runs: %w", err)
		}
		ctrl.Log.WithName("local-runs").Info(notice)
		launcher = local
	default:
		launcher = &launch.JobLauncher{Client: mgr.GetClient(), Options: opts.JobOptions}
	}
	alloc := &ids.Allocator{Client: direct}
	granter := &nsaccess.Granter{Client: direct, Role: opts.NamespaceRole, ServiceAccount: opts.ServiceAccount, Namespace: opts.Namespace}
	keys, err := controllers.NewSecretWatches(mgr.GetConfig())
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(keys); err != nil {
		return nil, err
	}
	if opts.InitialAdmin.Password != "" {
		// A leader-elected runnable: replicas starting together create
		// one administrator, not one each.
		accounts := &users.Store{Client: direct, Namespace: opts.Namespace, IDs: alloc}
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			return opts.InitialAdmin.ensure(ctx, accounts)
		})); err != nil {
			return nil, err
		}
	}
	runnerURL := cmp.Or(opts.RunnerURL, opts.PublicURL)
	if opts.DemoRepo != nil {
		if err := addDemoRepo(mgr, runnerURL, &opts); err != nil {
			return nil, err
		}
	}
	// The tokens of the runs this replica starts, from its task reconciler
	// to its runner endpoint.
	tokens := &runtoken.Book{}
	ctrlOpts := controllers.Options{
		IDs:              alloc,
		ManagerNamespace: opts.Namespace, Launcher: launcher, ManagerURL: runnerURL,
		GlobalMaxParallelTasks: opts.GlobalMaxParallelTasks, TaskKeepLast: opts.TaskKeepLast, TaskInputGrace: opts.TaskInputGrace, Store: output,
		RunnerNetworkPolicy: opts.RunnerNetworkPolicy, Keys: keys, Namespaces: granter,
		AllowLocalRepositories: opts.AllowLocalRepositories, TaskPods: opts.TaskPods, RunTokens: tokens,
	}
	alerts, err := newAlerts(opts.Alerts, output, ctrl.Log.WithName("alerts"))
	if err != nil {
		return nil, err
	}
	if alerts != nil {
		ctrlOpts.Alerts = alerts
		if err := mgr.Add(alerts); err != nil {
			return nil, err
		}
	}
	if err := controllers.Setup(mgr, ctrlOpts); err != nil {
		return nil, err
	}
	if opts.Probes != nil {
		if err = mgr.Add(opts.Probes.readiness()); err != nil {
			return nil, err
		}
	}
	providers, err := newOIDC(context.Background(), direct, opts)
	if err != nil {
		return nil, err
	}
	handler := apiserver.New(apiserver.Options{
		Version:        version.Version,
		PublicURL:      opts.PublicURL,
		TrustedProxies: opts.TrustedProxies,
		TaskPods:       opts.TaskPods,
		Console:        console.FS(),
		Client:         mgr.GetClient(),
		Reader:         mgr.GetAPIReader(),
		Informers:      mgr.GetCache(),
		Keys:           keys,
		RunTokens:      tokens,
		Store:          output,
		Hub:            live,

		Users:                &users.Store{Client: mgr.GetClient(), Namespace: opts.Namespace, IDs: alloc},
		IDs:                  alloc,
		ManagerNamespace:     opts.Namespace,
		DisablePasswordLogin: opts.DisablePasswordLogin,
		OIDC:                 providers,
		DemoRepoURL:          opts.DemoRepoURL,
		EditManagedObjects:   opts.EditManagedObjects,
	})
	if err := mgr.Add(&httpServer{ln: ln, srv: &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}, draining: opts.Draining}); err != nil {
		return nil, err
	}
	return &replica{Manager: mgr, lease: lease, store: output}, nil
}

// replica is the manager of one replica: once every runnable has stopped
// (the API served its last answer, the controllers their last reconcile),
// it closes the store and, after a graceful stop, hands the Lease over.
type replica struct {
	ctrl.Manager
	lease *leaseLock // nil without --leader-elect
	store io.Closer
}

func (r *replica) Start(ctx context.Context) error {
	err := r.Manager.Start(ctx)
	if err == nil && r.lease != nil {
		// Not after an error: "leader election lost", or controllers that
		// did not stop in time, which may still be at work.
		releaseCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := r.lease.release(releaseCtx); err != nil {
			r.lease.log.Error(err, "the Lease was not handed over: another replica takes over once it expires")
		}
	}
	return errors.Join(err, r.store.Close())
}

// onEveryReplica is a runnable that runs whether or not this replica leads.
type onEveryReplica func(context.Context) error

func (f onEveryReplica) Start(ctx context.Context) error { return f(ctx) }
func (onEveryReplica) NeedLeaderElection() bool          { return false }

// newOIDC sets up the single sign-on providers. Client secrets named by a
// Secret reference are read from the manager's namespace here, once.
func newOIDC(ctx context.Context, c client.Client, opts managerOptions) (*oidc.Providers, error) {
	if len(opts.OIDC) == 0 {
		return nil, nil
	}
	cfgs := slices.Clone(opts.OIDC)
	for i := range cfgs {
		ref := cfgs[i].ClientSecretRef
		if ref == nil || cfgs[i].ClientSecret != "" {
			continue
		}
		secret := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: opts.Namespace, Name: ref.Name}, secret); err != nil {
			return nil, fmt.Errorf("single sign-on provider %s: reading Secret %s/%s: %w", cfgs[i].ID, opts.Namespace, ref.Name, err)
		}
		value, ok := secret.Data[ref.Key]
		if !ok {
			return nil, fmt.Errorf("single sign-on provider %s: Secret %s/%s has no key %q", cfgs[i].ID, opts.Namespace, ref.Name, ref.Key)
		}
		cfgs[i].ClientSecret = strings.TrimSpace(string(value))
	}
	var options []oidc.Option
	if opts.OIDCCookieKeyFile != "" {
		key, err := os.ReadFile(opts.OIDCCookieKeyFile)
		if err != nil {
			return nil, fmt.Errorf("reading --oidc-cookie-key-file: %w", err)
		}
		options = append(options, oidc.WithCookieKey(key))
	}
	return oidc.New(ctx, cfgs, opts.PublicURL, options...)
}

// httpServer runs the API on every replica, leader or not.
type httpServer struct {
	ln  net.Listener
	srv *http.Server
	// draining closes when the process is told to stop (stopOnSignal).
	draining <-chan struct{}
}

func (h *httpServer) NeedLeaderElection() bool { return false }

func (h *httpServer) Start(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- h.srv.Serve(h.ln) }()
	draining := h.draining
	for {
		select {
		case err := <-errc:
			return err
		case <-draining:
			// Through the shutdown delay each answer closes its
			// connection, so that clients that keep theirs open (a
			// proxy's pool, a browser, a runner) open the next one to a
			// replica that stays, rather than meet the close at its end.
			h.srv.SetKeepAlivesEnabled(false)
			draining = nil
		case <-ctx.Done():
			shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return h.srv.Shutdown(shutdownCtx)
		}
	}
}

var _ manager.LeaderElectionRunnable = &httpServer{}

// registerTaskPodFlags reads what the cluster admin lets projects and
// templates choose for their task pods; `bastion dev` takes them too, so
// the settings can be tried without a cluster.
func registerTaskPodFlags(fs *flag.FlagSet, p *taskpods.Policy) {
	fs.Func("runner-images", "runner images projects and templates may choose, as name=image pairs separated by commas (default none: every task runs its app's image)", func(v string) (err error) {
		p.Images, err = taskpods.ParseImages(v)
		return err
	})
	fs.Func("task-service-accounts", "service accounts of project namespaces that projects and templates may give their task pods, separated by commas (default none: task pods get no Kubernetes credentials)", func(v string) (err error) {
		p.ServiceAccounts, err = taskpods.ParseServiceAccounts(v)
		return err
	})
}
