package cmd

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func loopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

func portOf(ln net.Listener) int { return ln.Addr().(*net.TCPAddr).Port }

// Demo projects keep their repository's URL across restarts of bastion
// dev, so dev serves the demo repository on the same port each time, and
// on another (remembered from then on) only when that one is taken.
func TestDevDemoRepo_keepsItsPortAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	api := loopback(t)
	var stderr bytes.Buffer
	first, err := listenDevDemoRepo("auto", dir, api, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	port := portOf(first)
	if host := first.Addr().(*net.TCPAddr).IP.String(); host != "127.0.0.1" {
		t.Fatalf("served on %s, want the API's host", host)
	}
	_ = first.Close()

	second, err := listenDevDemoRepo("auto", dir, api, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if portOf(second) != port || stderr.Len() != 0 {
		t.Fatalf("restart served on %d, want %d (stderr %q)", portOf(second), port, stderr.String())
	}

	// The remembered port is taken (by second): another one, with a warning.
	third, err := listenDevDemoRepo("auto", dir, api, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if portOf(third) == port || !strings.Contains(stderr.String(), fmt.Sprintf("port %d of the demo repository is taken", port)) {
		t.Fatalf("third start on %d, stderr %q", portOf(third), stderr.String())
	}
	if data, _ := os.ReadFile(filepath.Join(dir, demoRepoPortFile)); strings.TrimSpace(string(data)) != fmt.Sprint(portOf(third)) {
		t.Fatalf("remembered %q, want %d", data, portOf(third))
	}

	if off, err := listenDevDemoRepo("", dir, api, &stderr); off != nil || err != nil {
		t.Fatalf(`--demo-repo-listen "" = %v, %v; want nothing served`, off, err)
	}
}

func TestDemoRepoURL_isTheRunnerURLsHostAndTheListenersPort(t *testing.T) {
	ln := loopback(t)
	for runnerURL, want := range map[string]string{
		"http://bastion.bastion-system.svc:3000": fmt.Sprintf("git://bastion.bastion-system.svc:%d/demo.git", portOf(ln)),
		"http://127.0.0.1:3000":                  fmt.Sprintf("git://127.0.0.1:%d/demo.git", portOf(ln)),
		"https://[fd00::1]/":                     fmt.Sprintf("git://[fd00::1]:%d/demo.git", portOf(ln)),
	} {
		if got, err := demoRepoURL(runnerURL, ln); err != nil || got != want {
			t.Errorf("demoRepoURL(%q) = %q, %v; want %q", runnerURL, got, err, want)
		}
	}
	if _, err := demoRepoURL("not a url", ln); err == nil || !strings.Contains(err.Error(), "set --demo-repo-url") {
		t.Fatalf("a runner URL without a host: %v", err)
	}
}
