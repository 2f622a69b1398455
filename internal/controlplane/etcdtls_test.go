package controlplane

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Any local user can read etcd's URLs in /proc/*/cmdline and connect to
// 127.0.0.1. This test is such a user: it stores a Secret through the
// apiserver, finds etcd's listeners on its command line and asks each for
// /registry/secrets/ over plain HTTP and over TLS without a certificate;
// none answers with the Secret. With kube-apiserver's client certificate
// (which lives in the owner-only data dir) the same request finds it, so
// the refusals are the certificate's doing, not a wrong request. The data
// dir is one a plain-HTTP etcd made before, as an upgraded `bastion dev`
// finds it.
func TestStart_etcdAnswersOnlyTheAPIServersClientCertificate(t *testing.T) {
	assets := DefaultAssetsDir()
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		assets = dir
	}
	if err := CheckAssets(assets); err != nil {
		t.Fatalf("no control plane assets (make envtest-assets): %v", err)
	}
	dataDir := filepath.Join(t.TempDir(), "dev")
	startPlainEtcdOnce(t, assets, etcdDir(dataDir))

	cp, err := Start(Options{AssetsDir: assets, DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	kube, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	value := "prod-ssh-key-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := kube.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "key"},
		StringData: map[string]string{"private_key": value}}); err != nil {
		t.Fatal(err)
	}

	flags := etcdFlags(t, dataDir)
	clientURL, metricsURL, peerURL := flags["listen-client-urls"], flags["listen-metrics-urls"], flags["listen-peer-urls"]
	for _, u := range []string{clientURL, peerURL} {
		if !strings.HasPrefix(u, "https://127.0.0.1:") {
			t.Errorf("etcd listens on %q, want https on 127.0.0.1", u)
		}
	}
	noCert := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for _, door := range []string{
		clientURL,
		strings.Replace(clientURL, "https:", "http:", 1),
		peerURL,
		metricsURL,
	} {
		if found, answer := readSecrets(noCert, door, value); found {
			t.Errorf("%s gave the Secret to a client without a certificate: %s", door, answer)
		}
	}
	if resp, err := noCert.Get(metricsURL + "/health"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the metrics listener's /health (envtest's readiness check) = %v, %v", resp, err)
	}

	if found, answer := readSecrets(apiserverClient(t, dataDir), clientURL, value); !found {
		t.Errorf("with kube-apiserver's certificate, etcd did not give the Secret (the request is wrong, so the refusals prove nothing): %s", answer)
	}
	assertOwnerOnly(t, etcdTLSDir(dataDir))
}

// startPlainEtcdOnce starts and stops envtest's default etcd (plain HTTP) on
// dir, as `bastion dev` did before etcd took TLS.
func startPlainEtcdOnce(t *testing.T, assets, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	etcd := &envtest.Etcd{DataDir: dir, Path: filepath.Join(assets, "etcd")}
	if err := etcd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := etcd.Stop(); err != nil {
		t.Fatal(err)
	}
}

// etcdFlags reads the flags of dataDir's etcd from /proc, as any local user
// may.
func etcdFlags(t *testing.T, dataDir string) map[string]string {
	t.Helper()
	pids, err := FindProcesses(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err != nil {
			continue
		}
		args := splitCmdline(raw)
		if filepath.Base(args[0]) != "etcd" {
			continue
		}
		flags := map[string]string{}
		for _, a := range args[1:] {
			if k, v, ok := strings.Cut(strings.TrimPrefix(a, "--"), "="); ok {
				flags[k] = v
			}
		}
		return flags
	}
	t.Fatalf("no etcd process of %s among %v", dataDir, pids)
	return nil
}

// readSecrets asks etcd at base for the keys under /registry/secrets/ and
// reports whether a value holds want, with what came back.
func readSecrets(c *http.Client, base, want string) (bool, string) {
	body := `{"key":"` + base64.StdEncoding.EncodeToString([]byte("/registry/secrets/")) +
		`","range_end":"` + base64.StdEncoding.EncodeToString([]byte("/registry/secrets0")) + `"}`
	resp, err := c.Post(base+"/v3/kv/range", "application/json", strings.NewReader(body))
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var answer struct {
		KVs []struct {
			Value []byte `json:"value"`
		} `json:"kvs"`
	}
	_ = json.Unmarshal(raw, &answer)
	for _, kv := range answer.KVs {
		if bytes.Contains(kv.Value, []byte(want)) {
			return true, resp.Status
		}
	}
	return false, resp.Status + " " + string(raw)
}

// apiserverClient is an HTTPS client with kube-apiserver's etcd client
// certificate, trusting etcd's CA.
func apiserverClient(t *testing.T, dataDir string) *http.Client {
	t.Helper()
	dir := etcdTLSDir(dataDir)
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "apiserver-client.crt"), filepath.Join(dir, "apiserver-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{cert}, RootCAs: pool}}}
}

// assertOwnerOnly checks that dir is 0700 and its files 0600, and that it
// holds only the five certificate files: the CA's key is never written (a
// new CA is made at every start).
func assertOwnerOnly(t *testing.T, dir string) {
	t.Helper()
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("%s has mode %v, want 0700", dir, st.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", e.Name(), info.Mode().Perm())
		}
	}
	if got, want := strings.Join(names, " "), "apiserver-client.crt apiserver-client.key ca.crt server.crt server.key"; got != want {
		t.Errorf("%s holds %s, want %s", dir, got, want)
	}
}
