// Package controlplane runs the local Kubernetes control plane of `bastion
// dev`: etcd and kube-apiserver, started through controller-runtime's envtest
// package, with their state kept in a data directory so that projects and
// users survive a restart.
package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The control plane version that `make envtest-assets` builds. The Makefile
// pins the same values (a test keeps them equal).
const (
	KubernetesVersion = "1.37.1"
	EtcdVersion       = "3.6.16"
)

// DefaultAssetsDir is where `make envtest-assets` puts the binaries.
func DefaultAssetsDir() string {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = filepath.Join(os.TempDir(), "bastion-cache")
	}
	return filepath.Join(cache, "bastion", "envtest",
		fmt.Sprintf("k8s-%s-etcd-%s-linux-amd64", KubernetesVersion, EtcdVersion))
}

// ErrAssetsMissing means the etcd and kube-apiserver binaries are not there.
var ErrAssetsMissing = errors.New("envtest assets missing")

// CheckAssets reports, in words a user can act on, whether dir holds the
// binaries the control plane needs.
func CheckAssets(dir string) error {
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if st, err := os.Stat(filepath.Join(dir, bin)); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("%w: %s not found in %s; run `make envtest-assets` to build them (or set KUBEBUILDER_ASSETS to a directory that has them)",
				ErrAssetsMissing, bin, dir)
		}
	}
	return nil
}

// Options configures a control plane.
type Options struct {
	// AssetsDir holds etcd and kube-apiserver.
	AssetsDir string
	// DataDir keeps etcd's data, etcd's and the apiserver's certificates,
	// the logs and the kubeconfig.
	DataDir string
	// CRDs are installed (created or updated) after start.
	CRDs []*apiextensionsv1.CustomResourceDefinition
}

// ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	env  *envtest.Environment
	logs []io.Closer

	// Config reaches the apiserver as a cluster admin.
	Config *rest.Config
	// KubeconfigPath is a kubeconfig file for kubectl, written in DataDir.
	KubeconfigPath string
}

// Paths inside the data dir. Their names appear on the processes' command
// lines, which is how KillLeftovers recognises a crashed run's processes.
func etcdDir(dataDir string) string      { return filepath.Join(dataDir, "etcd") }
func apiserverDir(dataDir string) string { return filepath.Join(dataDir, "apiserver") }
func logDir(dataDir string) string       { return filepath.Join(dataDir, "logs") }

// PlaneGOGC is the garbage collector's setting of the plane's etcd and
// kube-apiserver, unless GOGC is set. They serve one manager, and at Go's
// default (100) a quarter of the kube-apiserver's CPU under a burst of
// writes was garbage collection; collecting a quarter as often gave back
// about a sixth of the server's CPU per object written, for a larger heap
// (docs/benchmarks.md, "P3 writes").
const PlaneGOGC = "400"

// setDefaultEnv sets the variable for the processes started until the
// returned function restores it; one already set is left alone.
func setDefaultEnv(name, value string) (restore func()) {
	if _, set := os.LookupEnv(name); set {
		return func() {}
	}
	_ = os.Setenv(name, value)
	return func() { _ = os.Unsetenv(name) }
}

// KubeconfigPath is where Start writes the kubeconfig of dataDir's plane.
func KubeconfigPath(dataDir string) string { return filepath.Join(dataDir, "kubeconfig") }

// Start starts etcd and kube-apiserver, installs the CRDs and writes a
// kubeconfig. On error, nothing it started is left running.
func Start(opts Options) (*ControlPlane, error) {
	if err := CheckAssets(opts.AssetsDir); err != nil {
		return nil, err
	}
	// The apiserver's serving CA is not reloaded from disk by envtest, so its
	// certificates are made anew on every start; etcd's data is kept.
	if err := os.RemoveAll(apiserverDir(opts.DataDir)); err != nil {
		return nil, err
	}
	for _, dir := range []string{etcdDir(opts.DataDir), apiserverDir(opts.DataDir), logDir(opts.DataDir)} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}

	cp := &ControlPlane{KubeconfigPath: KubeconfigPath(opts.DataDir)}
	etcdLog, err := cp.openLog(opts.DataDir, "etcd.log")
	if err != nil {
		return nil, err
	}
	apiLog, err := cp.openLog(opts.DataDir, "kube-apiserver.log")
	if err != nil {
		cp.closeLogs()
		return nil, err
	}

	certs, err := writeEtcdCerts(etcdTLSDir(opts.DataDir))
	if err != nil {
		cp.closeLogs()
		return nil, fmt.Errorf("preparing etcd's TLS: %w", err)
	}
	var cfg *rest.Config
	for attempt := 1; ; attempt++ {
		cfg, err = cp.startOnce(opts, certs, etcdLog, apiLog)
		if err == nil {
			break
		}
		// etcd's ports are picked free and released before etcd binds
		// them: another process's connection can take one meanwhile, and
		// every retry of envtest's reuses the same ports. Fresh ones then.
		if attempt == portAttempts || !portWasTaken(etcdLog.Name()) {
			cp.closeLogs()
			return nil, fmt.Errorf("starting the control plane (logs in %s): %w", logDir(opts.DataDir), err)
		}
	}
	cp.Config = cfg

	if err := cp.writeKubeconfig(); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	return cp, nil
}

// portAttempts is how many sets of etcd ports Start tries.
const portAttempts = 3

// startOnce starts etcd and the kube-apiserver on ports picked now; on
// error nothing it started is left running.
func (cp *ControlPlane) startOnce(opts Options, certs etcdCerts, etcdLog, apiLog io.Writer) (*rest.Config, error) {
	etcd := &envtest.Etcd{DataDir: etcdDir(opts.DataDir), Out: etcdLog, Err: etcdLog}
	api := &envtest.APIServer{CertDir: apiserverDir(opts.DataDir), Out: apiLog, Err: apiLog}
	if err := configureEtcdTLS(etcd, api, certs); err != nil {
		return nil, fmt.Errorf("preparing etcd's TLS: %w", err)
	}
	cp.env = &envtest.Environment{
		BinaryAssetsDirectory:    opts.AssetsDir,
		CRDs:                     opts.CRDs,
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
		ControlPlane:             envtest.ControlPlane{Etcd: etcd, APIServer: api},
	}
	restoreGOGC := setDefaultEnv("GOGC", PlaneGOGC)
	cfg, err := cp.env.Start()
	restoreGOGC()
	if err != nil {
		_ = cp.env.Stop()
		return nil, err
	}
	return cfg, nil
}

// portWasTaken reports whether etcd's log says it could not bind a port.
func portWasTaken(etcdLog string) bool {
	data, err := os.ReadFile(etcdLog)
	return err == nil && bytes.Contains(data, []byte("address already in use"))
}

// writeKubeconfig provisions a cluster-admin client certificate and writes a
// kubeconfig for it, readable by the owner only.
func (cp *ControlPlane) writeKubeconfig() error {
	user, err := cp.env.AddUser(envtest.User{Name: "bastion-dev-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("creating the kubeconfig user: %w", err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return err
	}
	return writeFileAtomic(cp.KubeconfigPath, data, 0o600)
}

// Stop stops kube-apiserver and etcd and waits for them to exit.
func (cp *ControlPlane) Stop() error {
	defer cp.closeLogs()
	return cp.env.Stop()
}

func (cp *ControlPlane) openLog(dataDir, name string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(logDir(dataDir), name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	cp.logs = append(cp.logs, f)
	return f, nil
}

func (cp *ControlPlane) closeLogs() {
	for _, c := range cp.logs {
		_ = c.Close()
	}
	cp.logs = nil
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// hasArgUnder reports whether any argument of a command line names a path
// inside dir.
func hasArgUnder(args []string, dir string) bool {
	for _, a := range args {
		if i := strings.IndexByte(a, '='); i >= 0 && strings.HasPrefix(a, "--") {
			a = a[i+1:]
		}
		if a == dir || strings.HasPrefix(a, dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
