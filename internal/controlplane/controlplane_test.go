package controlplane

import (
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
