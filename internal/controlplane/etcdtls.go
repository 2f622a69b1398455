package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// etcd serves its clients and peers only over TLS with client certificates:
// every local user can connect to 127.0.0.1 and read etcd's URL in
// /proc/*/cmdline, and etcd holds every Secret in the clear, so a plain
// HTTP etcd would hand any local process (an isolated run included) every
// project's keys. Only kube-apiserver holds a client certificate, in a
// directory readable by the data dir's owner alone.

// etcdTLSDir holds etcd's CA, its serving certificate and kube-apiserver's
// client certificate, made anew on every start.
func etcdTLSDir(dataDir string) string { return filepath.Join(dataDir, "etcd-tls") }

// etcdCerts are the PEM files in etcdTLSDir.
type etcdCerts struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
}

// certValidity bounds the certificates' lifetime; they are replaced at every
// start, so this only needs to outlast one long-running `bastion dev`.
const certValidity = 5 * 365 * 24 * time.Hour

// writeEtcdCerts makes a new CA, a serving certificate for 127.0.0.1 and
// localhost (also etcd's peer certificate, so it may act as client and
// server) and a client certificate for kube-apiserver, and writes them into
// dir (0700, its files 0600), replacing whatever was there.
func writeEtcdCerts(dir string) (etcdCerts, error) {
	files := etcdCerts{
		CA:         filepath.Join(dir, "ca.crt"),
		ServerCert: filepath.Join(dir, "server.crt"),
		ServerKey:  filepath.Join(dir, "server.key"),
		ClientCert: filepath.Join(dir, "apiserver-client.crt"),
		ClientKey:  filepath.Join(dir, "apiserver-client.key"),
	}
	if err := os.RemoveAll(dir); err != nil {
		return files, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return files, err
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "bastion dev etcd CA"},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	ca, caKey, err := issue(caTmpl, nil, nil)
	if err != nil {
		return files, err
	}
	server, serverKey, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "etcd"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:    []string{"localhost"},
	}, ca, caKey)
	if err != nil {
		return files, err
	}
	client, clientKey, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, caKey)
	if err != nil {
		return files, err
	}
	serverKeyDER, err := x509.MarshalECPrivateKey(serverKey)
	if err != nil {
		return files, err
	}
	clientKeyDER, err := x509.MarshalECPrivateKey(clientKey)
	if err != nil {
		return files, err
	}
	for _, f := range []struct {
		path string
		der  []byte
		typ  string
	}{
		{files.CA, ca.Raw, "CERTIFICATE"},
		{files.ServerCert, server.Raw, "CERTIFICATE"},
		{files.ServerKey, serverKeyDER, "EC PRIVATE KEY"},
		{files.ClientCert, client.Raw, "CERTIFICATE"},
		{files.ClientKey, clientKeyDER, "EC PRIVATE KEY"},
	} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), 0o600); err != nil {
			return files, err
		}
	}
	return files, nil
}

// issue makes an ECDSA P-256 key and a certificate for it from tmpl, valid
// from an hour ago (clock skew) for certValidity, signed by parent's key,
// or self-signed when parent is nil. It returns the certificate and its key.
func issue(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = tmpl.NotBefore.Add(certValidity)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("making the etcd certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

// configureEtcdTLS sets etcd up to take clients and peers only over TLS
// with client certificates signed by certs.CA, and kube-apiserver to reach
// it with its client certificate.
//
// envtest uses Etcd.URL twice: as etcd's client URL and, with "/health", as
// its readiness check over plain HTTP. So Etcd.URL becomes etcd's metrics
// listener (http, serving only /health and /metrics, no keys), the client
// and peer URLs are https on ports of their own, and the apiserver's
// --etcd-servers, which envtest would take from Etcd.URL, is set here.
func configureEtcdTLS(etcd *envtest.Etcd, api *envtest.APIServer, certs etcdCerts) error {
	var ports [3]int
	for i := range ports {
		p, err := pickPort()
		if err != nil {
			return err
		}
		ports[i] = p
	}
	local := func(scheme string, port int) string {
		return (&url.URL{Scheme: scheme, Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}).String()
	}
	metrics, client, peer := local("http", ports[0]), local("https", ports[1]), local("https", ports[2])
	u, err := url.Parse(metrics)
	if err != nil {
		return err
	}
	etcd.URL = u
	etcd.Configure().
		Set("listen-metrics-urls", metrics).
		Set("listen-client-urls", client).
		Set("advertise-client-urls", client).
		Set("cert-file", certs.ServerCert).
		Set("key-file", certs.ServerKey).
		Set("trusted-ca-file", certs.CA).
		Set("client-cert-auth", "true").
		Set("listen-peer-urls", peer).
		Set("peer-cert-file", certs.ServerCert).
		Set("peer-key-file", certs.ServerKey).
		Set("peer-trusted-ca-file", certs.CA).
		Set("peer-client-cert-auth", "true")
	api.Configure().
		Set("etcd-servers", client).
		Set("etcd-cafile", certs.CA).
		Set("etcd-certfile", certs.ClientCert).
		Set("etcd-keyfile", certs.ClientKey)
	return nil
}

// pickPort is freePort; a test makes it answer a taken port.
var pickPort = freePort

// freePort asks the kernel for a free port on 127.0.0.1 (as envtest does
// for its own; the port is free again when etcd binds it).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
