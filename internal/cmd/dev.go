package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/apiserver"
	"github.com/bastion-dev/bastion/config/crd"
	"github.com/bastion-dev/bastion/internal/cli"
	"github.com/bastion-dev/bastion/internal/controlplane"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/taskpods"
	"github.com/bastion-dev/bastion/internal/users"
)

// devNamespace is the manager's namespace on the embedded control plane.
const devNamespace = "bastion-system"

type devOptions struct {
	listen    string
	dataDir   string
	assetsDir string
	runnerURL string
	// externalURL is how browsers reach the console, when a proxy stands
	// in front (default http://<listen>).
	externalURL    string
	trustedProxies []netip.Prefix
	demoRepo       string
	alerts         alertFlags
	// globalMaxParallel caps running tasks across projects, as the
	// manager's flag of the same name.
	globalMaxParallel int
	// taskPods are the runner images and service accounts projects may
	// choose: stored and checked as on a cluster, though local runs have
	// no pod to apply them to.
	taskPods taskpods.Policy
}

func defaultDataDir() string {
	if xdg := os.Getenv("XDG_DATA_HOME"); xdg != "" {
		return filepath.Join(xdg, "bastion", "dev")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "bastion-dev")
	}
	return filepath.Join(home, ".local", "share", "bastion", "dev")
}

func defaultAssetsDir() string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	return controlplane.DefaultAssetsDir()
}

// DevGOGC is the garbage collector's setting of `bastion dev`'s own
// process, the manager, unless GOGC is set. A task printing fast allocates
// in the manager per line (the batch's strings, the store's arguments);
// at Go's default, collecting took a seventh of the manager's CPU during
// P2, and collecting half as often took a tenth off P2, for a larger heap:
// P5, the manager's memory after P1 to P3, went from 88 to 115 MiB
// (docs/benchmarks.md, "Third round"). The embedded plane has
// its own setting (controlplane.PlaneGOGC). A manager in a cluster keeps
// Go's default: it runs under a memory limit.
const DevGOGC = 200

// setDevGOGC sets this process's garbage collector to DevGOGC, unless GOGC
// says otherwise.
func setDevGOGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(DevGOGC)
	}
}

// runDev runs the whole product on a local control plane: etcd and
// kube-apiserver, the CRDs, the controllers, the API and the console. Its
// state lives in the data dir, so a restart keeps projects and users.
func runDev(args []string, stdout, stderr io.Writer) error {
	opts := devOptions{}
	fs := cli.NewFlagSet("dev", stderr)
	fs.StringVar(&opts.listen, "listen", "127.0.0.1:3000", "address of the API and the console")
	fs.StringVar(&opts.dataDir, "data-dir", defaultDataDir(), "directory for etcd data, logs and the kubeconfig")
	fs.StringVar(&opts.assetsDir, "assets", defaultAssetsDir(), "directory with the etcd and kube-apiserver binaries (make envtest-assets)")
	fs.StringVar(&opts.runnerURL, "runner-url", "", "URL runners reach the manager at (default: the --listen address)")
	fs.StringVar(&opts.externalURL, "external-url", "", "URL browsers reach the console at, through a reverse proxy (default http://<listen>)")
	fs.Func("trusted-proxies", trustedProxiesUsage, func(v string) (err error) {
		opts.trustedProxies, err = apiserver.ParseTrustedProxies(v)
		return err
	})
	fs.StringVar(&opts.demoRepo, "demo-repo-listen", "auto", `address of the built-in demo git repository (auto: the --listen host, on the port of the last run or a free one; "" turns it off)`)
	fs.IntVar(&opts.globalMaxParallel, "global-max-parallel-tasks", 0, "running tasks across all projects (0 = no limit)")
	opts.alerts.register(fs)
	registerTaskPodFlags(fs, &opts.taskPods)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}

	setDevGOGC()

	// Take over SIGINT and SIGTERM before anything starts: with Go's
	// default action, a Ctrl-C during start-up would end this process and
	// orphan etcd and kube-apiserver, which run in their own process groups.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Everything that can be refused cheaply is checked before the control
	// plane starts, so a refusal leaves nothing running.
	dataDir, lock, err := prepareDataDir(opts.dataDir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	logFile, err := openDevLog(dataDir)
	if err != nil {
		return err
	}
	defer logFile.Close()
	ctrl.SetLogger(devLogger(logFile, stderr))
	ln, err := listen(opts.listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	// Runners reach the manager directly, not through the users' proxy.
	listenURL := "http://" + ln.Addr().String()
	publicURL := cmp.Or(opts.externalURL, listenURL)
	runnerURL := cmp.Or(opts.runnerURL, listenURL)
	alerts, err := opts.alerts.config(publicURL)
	if err != nil {
		return err
	}
	demoRepo, err := listenDevDemoRepo(opts.demoRepo, dataDir, ln, stderr)
	if err != nil {
		return err
	}
	if demoRepo != nil {
		defer demoRepo.Close()
	}
	if err := controlplane.CheckAssets(opts.assetsDir); err != nil {
		return err
	}
	if pids, err := controlplane.KillLeftovers(dataDir); err != nil {
		return err
	} else if len(pids) > 0 {
		fmt.Fprintf(stderr, "stopped %d control-plane processes left by an earlier run: %v\n", len(pids), pids)
	}

	crds, err := crd.CRDs()
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "starting etcd and kube-apiserver (data in %s)...\n", dataDir)
	cp, err := controlplane.Start(controlplane.Options{AssetsDir: opts.assetsDir, DataDir: dataDir, CRDs: crds})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(stderr, "stopping the control plane...")
		if err := cp.Stop(); err != nil {
			fmt.Fprintf(stderr, "stopping the control plane: %v\n", err)
		}
	}()

	if ctx.Err() != nil {
		return nil // interrupted during start-up; the deferred Stop cleans up
	}

	demoURL := ""
	if demoRepo != nil {
		if demoURL, err = demoRepoURL(runnerURL, demoRepo); err != nil {
			return err
		}
	}
	direct, err := client.New(cp.Config, client.Options{Scheme: newScheme()})
	if err != nil {
		return err
	}
	// No kubelet here: tasks run as local `bastion runner` processes, with
	// their private directories under the data dir, or, when each run is
	// its own user, where that user can reach them.
	runs, notice, err := localLauncher(direct, filepath.Join(dataDir, "runs"))
	if err != nil {
		return err
	}
	fmt.Fprintln(stderr, notice)
	if !strings.HasPrefix(runs.BaseDir, dataDir+string(filepath.Separator)) {
		defer os.Remove(runs.BaseDir) // moved out of the data dir; gone once empty
	}
	mgr, err := newManager(cp.Config, ln, managerOptions{
		PublicURL: publicURL, TrustedProxies: opts.trustedProxies, RunnerURL: runnerURL, MetricsAddr: "0", ProbeAddr: "0", Namespace: devNamespace,
		Launcher: runs,
		StoreDSN: "sqlite://" + filepath.Join(dataDir, "bastion.db"),
		DemoRepo: demoRepo, DemoRepoURL: demoURL, Alerts: alerts,
		GlobalMaxParallelTasks: opts.globalMaxParallel, TaskPods: opts.taskPods,
		// Repositories on this machine are what bastion dev is for.
		AllowLocalRepositories: true,
	})
	if err != nil {
		return err
	}
	store := &users.Store{Client: direct, Namespace: devNamespace, IDs: &ids.Allocator{Client: direct}}
	password, err := seedAdmin(ctx, store)
	if err != nil {
		return err
	}

	mgrErr := make(chan error, 1)
	go func() { mgrErr <- mgr.Start(ctx) }()
	// The banner waits until the controllers have started, so that it is
	// the last thing start-up prints: what follows is what goes wrong.
	select {
	case <-mgr.Elected():
		printBanner(stdout, publicURL, cp.KubeconfigPath, dataDir, runs.BaseDir, logFile.Name(), password, demoURL)
	case <-ctx.Done():
	case err := <-mgrErr:
		return err
	}

	select {
	case <-ctx.Done():
		fmt.Fprintln(stderr, "shutting down...")
		return waitManager(mgrErr)
	case err := <-mgrErr:
		return err
	}
}

// devLogName is the manager's log in the data dir.
const devLogName = "bastion.log"

// openDevLog opens the manager's log in the data dir, appending: the log
// of an earlier run is what a restart is often about.
func openDevLog(dataDir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dataDir, devLogName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the log: %w", unwrapPath(err))
	}
	return f, nil
}

// devLogger writes every line of the manager's log to file, and its
// warnings and errors to the terminal as well: a developer's terminal
// shows the banner and what goes wrong, not each reconcile. No stack
// traces: a reconciler's error has always the same one, controller-
// runtime's, which says nothing about the error.
func devLogger(file, terminal io.Writer) logr.Logger {
	enc := zapcore.NewConsoleEncoder(uberzap.NewDevelopmentEncoderConfig())
	core := zapcore.NewTee(
		zapcore.NewCore(enc, zapcore.AddSync(file), zapcore.InfoLevel),
		zapcore.NewCore(enc, zapcore.AddSync(terminal), zapcore.WarnLevel),
	)
	return zapr.NewLogger(uberzap.New(core))
}

// prepareDataDir creates the data dir, proves it writable and locks it.
func prepareDataDir(dir string) (string, *controlplane.Lock, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", nil, fmt.Errorf("data dir %s cannot be created: %w", abs, unwrapPath(err))
	}
	if err := makePrivate(abs); err != nil {
		return "", nil, err
	}
	probe, err := os.CreateTemp(abs, ".write-check-*")
	if err != nil {
		return "", nil, fmt.Errorf("data dir %s is not writable: %w", abs, unwrapPath(err))
	}
	_ = probe.Close()
	_ = os.Remove(probe.Name())
	lock, err := controlplane.LockDataDir(abs)
	if err != nil {
		return "", nil, err
	}
	return abs, lock, nil
}

// makePrivate makes the data dir this user's alone (mode 0700): it holds
// the database and a cluster-admin kubeconfig, and local runs, other
// users of the host, must not enter it. A shared directory such as /tmp
// (sticky) is refused rather than closed to everyone.
func makePrivate(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if info.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if info.Mode()&os.ModeSticky != 0 {
		return fmt.Errorf("data dir %s is a shared directory; choose a directory of its own", dir)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("data dir %s cannot be made private: %w", dir, unwrapPath(err))
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// seedAdmin creates the first admin when there are no users, and returns
// its password ("" when users exist already).
func seedAdmin(ctx context.Context, store *users.Store) (string, error) {
	password := users.RandomPassword(10)
	created, err := seedUser(ctx, store, bastionv1.UserSpec{
		Username: "admin", Name: "Administrator", Email: "admin@localhost", Admin: true,
	}, password)
	if err != nil || !created {
		return "", err
	}
	return password, nil
}

// seedUser creates the user when there are no users at all, and says
// whether it did.
func seedUser(ctx context.Context, store *users.Store, spec bastionv1.UserSpec, password string) (bool, error) {
	existing, err := store.List(ctx)
	if err != nil {
		return false, fmt.Errorf("listing users: %w", err)
	}
	if len(existing) > 0 {
		return false, nil
	}
	if _, err := store.Create(ctx, spec, password); err != nil {
		return false, fmt.Errorf("creating the admin user: %w", err)
	}
	return true, nil
}

func printBanner(w io.Writer, url, kubeconfig, dataDir, runsDir, logPath, password, demoURL string) {
	fmt.Fprintf(w, "\nBastion is running at %s\n\n", url)
	if password != "" {
		fmt.Fprintf(w, "  login:      admin\n  password:   %s\n", password)
	} else {
		fmt.Fprintf(w, "  Users are kept from an earlier run. To set a new password:\n"+
			"    bastion user change-by-login --kubeconfig %s --login admin --password <new>\n", kubeconfig)
	}
	fmt.Fprintf(w, "  kubeconfig: %s\n              kubectl --kubeconfig %s get projects\n", kubeconfig, kubeconfig)
	if demoURL != "" {
		fmt.Fprintf(w, "  demo repo:  %s\n", demoURL)
	}
	fmt.Fprintf(w, "  runs:       %s\n", runsDir)
	fmt.Fprintf(w, "  log:        %s\n", logPath)
	fmt.Fprintf(w, "  data dir:   %s\n\nPress Ctrl-C to stop.\n", dataDir)
}

// waitManager waits for the manager to stop its runnables after a signal.
func waitManager(mgrErr <-chan error) error {
	select {
	case err := <-mgrErr:
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("the manager did not stop within 30s")
	}
}
