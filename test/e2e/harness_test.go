// Package e2e runs the real bastion binary: `bastion dev` with its embedded
// etcd and kube-apiserver, the built console, and kubectl against it.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/bastion-dev/bastion/internal/controlplane"
	"github.com/bastion-dev/bastion/internal/testport"
)

var (
	bastionBin string
	assetsDir  string
)

// Each test starts its own servers (bastion dev, managers, a control
// plane, PostgreSQL) on free ports with temporary directories, and passes
// environment variables to its processes rather than setting its own, so
// the tests run in parallel (t.Parallel, -parallel of go test). The few
// whose timing bounds leave little margin do not; Go runs them first, one
// by one, and the parallel ones after them.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// envtest (startCluster) logs through controller-runtime; its messages
	// are not the tests' concern (the control plane's own output goes to a
	// file). Set once here: the tests run in parallel.
	ctrllog.SetLogger(logr.Discard())
	assetsDir = os.Getenv("KUBEBUILDER_ASSETS")
	if assetsDir == "" {
		assetsDir = controlplane.DefaultAssetsDir()
	}
	if err := controlplane.CheckAssets(assetsDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bastionBin = os.Getenv("BASTION_BIN")
	if bastionBin == "" {
		// Plain `go test ./...`: build the binary from this checkout.
		dir, err := os.MkdirTemp("", "bastion-e2e-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		// Both binaries, as make build lays them out and with one build
		// stamp: local runs start bastion-runner when it lies beside
		// bastion and was built from the same sources.
		bastionBin = filepath.Join(dir, "bastion")
		stamp := "-X github.com/bastion-dev/bastion/internal/version.Build=e2e-" + filepath.Base(dir)
		for out, pkg := range map[string]string{bastionBin: "../..", filepath.Join(dir, "bastion-runner"): "../../internal/cmd/bastion-runner"} {
			build := exec.Command("go", "build", "-ldflags", stamp, "-o", out, pkg)
			build.Stdout, build.Stderr = os.Stderr, os.Stderr
			if err := build.Run(); err != nil {
				fmt.Fprintln(os.Stderr, "building", filepath.Base(out)+":", err)
				return 1
			}
		}
	}
	return m.Run()
}

// devProcess is a running `bastion dev`.
type devProcess struct {
	t       *testing.T
	cmd     *exec.Cmd
	dataDir string
	url     string
	stdout  *lockedBuffer
	stderr  *lockedBuffer
	done    chan struct{}
	err     error
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freePort returns a TCP port on 127.0.0.1 for a server the test starts
// (see testport: not from the kernel's ephemeral range).
func freePort(t *testing.T) int {
	t.Helper()
	port, err := testport.Free()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// startDev starts `bastion dev` with extra arguments; it does not wait.
func startDev(t *testing.T, dataDir string, args ...string) *devProcess {
	t.Helper()
	return startDevOnPort(t, dataDir, freePort(t), args...)
}

// startDevOnPort starts `bastion dev` listening on port.
func startDevOnPort(t *testing.T, dataDir string, port int, args ...string) *devProcess {
	t.Helper()
	return startDevWriting(t, dataDir, port, &lockedBuffer{}, &lockedBuffer{}, args...)
}

// cleanGitEnv keeps the test machine's git configuration out of a
// `bastion dev` and its runs.
var cleanGitEnv = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}

// startDevEnv starts `bastion dev` with env added to the environment it
// inherits and passes on to its runners. Unlike t.Setenv, it leaves the
// test process's environment alone, so the test can run in parallel.
func startDevEnv(t *testing.T, dataDir string, env []string, args ...string) *devProcess {
	t.Helper()
	return startDevFull(t, dataDir, freePort(t), env, &lockedBuffer{}, &lockedBuffer{}, args...)
}

// startDevWriting starts `bastion dev` with its stdout and stderr in the
// buffers given; one buffer for both is the terminal, in the order printed.
func startDevWriting(t *testing.T, dataDir string, port int, stdout, stderr *lockedBuffer, args ...string) *devProcess {
	t.Helper()
	return startDevFull(t, dataDir, port, nil, stdout, stderr, args...)
}

// startDevFull starts `bastion dev` on port, with env added to this
// process's environment, writing to stdout and stderr.
func startDevFull(t *testing.T, dataDir string, port int, env []string, stdout, stderr *lockedBuffer, args ...string) *devProcess {
	t.Helper()
	p := &devProcess{t: t, dataDir: dataDir, stdout: stdout, stderr: stderr, done: make(chan struct{})}
	p.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	all := append([]string{"dev", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--data-dir", dataDir, "--assets", assetsDir}, args...)
	p.cmd = exec.Command(bastionBin, all...)
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.interrupt()
			p.wait(60 * time.Second)
		}
		if t.Failed() {
			t.Logf("bastion dev stdout:\n%s\nstderr (tail):\n%s\nlog (tail):\n%s", p.stdout, tail(p.stderr.String(), 40), tail(p.log(), 40))
		}
	})
	return p
}

// waitReady waits until the banner is printed and /api/info answers.
func (p *devProcess) waitReady() {
	p.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			p.t.Fatalf("bastion dev exited early (%v):\n%s", p.err, tail(p.stderr.String(), 40))
		default:
		}
		if strings.Contains(p.stdout.String(), "Press Ctrl-C to stop.") {
			if resp, err := http.Get(p.url + "/api/info"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("bastion dev not ready after 90s:\n%s", tail(p.stderr.String(), 40))
}

// log is the manager's log file in the data dir ("" before it exists).
func (p *devProcess) log() string {
	data, _ := os.ReadFile(filepath.Join(p.dataDir, "bastion.log"))
	return string(data)
}

// output is everything the server wrote: its terminal and its log file.
func (p *devProcess) output() string {
	return p.stdout.String() + p.stderr.String() + p.log()
}

func (p *devProcess) interrupt() { _ = p.cmd.Process.Signal(syscall.SIGINT) }

// wait waits for exit and returns the exit code.
func (p *devProcess) wait(limit time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		_ = p.cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("bastion dev did not exit within %s", limit)
		return -1
	}
}

// bannerValue returns the value after "label:" in the banner.
func (p *devProcess) bannerValue(label string) string {
	re := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(label) + `:\s+(\S+)\s*$`)
	m := re.FindStringSubmatch(p.stdout.String())
	if m == nil {
		return ""
	}
	return m[1]
}

// runBastion runs the binary to completion (for refusals and the user CLI).
func runBastion(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bastionBin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errOut, strings.NewReader(stdin)
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// kubectl runs the kubectl built with the envtest assets.
func kubectl(t *testing.T, kubeconfig, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(assetsDir, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func eventually(t *testing.T, limit time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: still failing after %s: %v", what, limit, err)
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// getText GETs url with client and returns its status and trimmed body; a
// transport error is returned, not fatal, for a server that may not answer
// yet or any more.
func getText(client *http.Client, url string) (int, string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body)), err
}

func tail(s string, lines int) string {
	var all []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1024*1024), 1024*1024)
	for sc.Scan() {
		all = append(all, sc.Text())
	}
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
