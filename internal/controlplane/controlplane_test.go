package controlplane

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The Makefile builds the assets that DefaultAssetsDir points at; if the two
// disagreed, `bastion dev` would look for binaries nobody built.
func TestMakefilePinsTheSameVersionsAsTheDefaults(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for variable, want := range map[string]string{"K8S_VERSION": "v" + KubernetesVersion, "ETCD_VERSION": "v" + EtcdVersion} {
		m := regexp.MustCompile(`(?m)^` + variable + `\s*\?=\s*(\S+)`).FindSubmatch(makefile)
		if m == nil || string(m[1]) != want {
			t.Errorf("Makefile %s = %q, want %q", variable, m, want)
		}
	}
}

func TestCheckAssets_namesTheDirectoryAndTheFix(t *testing.T) {
	dir := t.TempDir()
	err := CheckAssets(dir)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "make envtest-assets") {
		t.Fatalf("CheckAssets(empty) = %v", err)
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if err := os.WriteFile(filepath.Join(dir, bin), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := CheckAssets(dir); err != nil {
		t.Fatalf("CheckAssets(complete) = %v", err)
	}
}

func TestHasArgUnder_matchesPathsInsideTheDirOnly(t *testing.T) {
	cases := []struct {
		args []string
		want bool
	}{
		{[]string{"--data-dir=/data/dev/etcd"}, true},
		{[]string{"--cert-dir", "/data/dev/apiserver"}, true},
		{[]string{"--data-dir=/data/dev"}, true},
		{[]string{"--data-dir=/data/dev2/etcd"}, false},
		{[]string{"--listen-client-urls=http://127.0.0.1:2379"}, false},
	}
	for _, tc := range cases {
		if got := hasArgUnder(tc.args, "/data/dev"); got != tc.want {
			t.Errorf("hasArgUnder(%v) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

func TestLockDataDir_secondHolderIsRefused(t *testing.T) {
	dir := t.TempDir()
	first, err := LockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockDataDir(dir); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second lock = %v, want refusal", err)
	}
	first.Unlock()
	again, err := LockDataDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock = %v", err)
	}
	again.Unlock()
}

// A port of etcd's taken between its pick and etcd's bind (by another
// process's connection, in the kernel's ephemeral range) costs one attempt:
// the plane starts on fresh ports.
func TestStart_aTakenEtcdPortIsPickedAgain(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = DefaultAssetsDir()
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	picks := 0
	pickPort = func() (int, error) {
		picks++
		if picks == 2 { // the client port of the first attempt
			return taken.Addr().(*net.TCPAddr).Port, nil
		}
		return freePort()
	}
	defer func() { pickPort = freePort }()

	dataDir := t.TempDir()
	cp, err := Start(Options{DataDir: dataDir, AssetsDir: assets})
	if err != nil {
		t.Fatalf("the plane did not start on fresh ports: %v", err)
	}
	defer func() { _ = cp.Stop() }()
	if picks != 6 {
		t.Fatalf("%d ports picked, want 3 for each of two attempts", picks)
	}
	if !portWasTaken(filepath.Join(dataDir, "logs", "etcd.log")) {
		t.Fatal("etcd's log does not show the taken port of the first attempt")
	}
}
