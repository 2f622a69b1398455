package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// devServer is a running `bastion dev`: its URL and the admin's password,
// read from the banner it prints once its controllers have started.
type devServer struct {
	cmd      *exec.Cmd
	url      string
	password string
	dataDir  string
	runsDir  string // where its runs live; named by the banner
	logPath  string
	exited   chan error
}

// startDev starts `bastion dev` on a fresh data dir and a port the kernel
// picks (--listen 127.0.0.1:0: the banner names the real one, so no race
// for a free port), and waits for its banner.
func startDev(ctx context.Context, bin, dataDir string) (*devServer, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	logPath := filepath.Join(filepath.Dir(dataDir), "dev.stderr")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "dev", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--demo-repo-listen", "")
	cmd.Stderr = logFile
	cmd.SysProcAttr = devProcAttr()
	banner, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s dev: %w", bin, err)
	}
	d := &devServer{cmd: cmd, dataDir: dataDir, logPath: logPath, exited: make(chan error, 1)}
	found := make(chan struct{})
	go d.readBanner(banner, found)
	go func() { d.exited <- cmd.Wait() }()

	select {
	case <-found:
		return d, nil
	case err := <-d.exited:
		d.exited <- err
		return nil, fmt.Errorf("bastion dev exited before it was ready (%v); its stderr:\n%s", err, tail(logPath))
	case <-time.After(3 * time.Minute):
		_ = d.stop()
		return nil, fmt.Errorf("bastion dev printed no banner within 3 minutes; its stderr:\n%s", tail(logPath))
	case <-ctx.Done():
		_ = d.stop()
		return nil, errors.New("interrupted")
	}
}

// readBanner takes the URL and the password from the banner, then keeps
// draining stdout so that the server never blocks on a full pipe.
func (d *devServer) readBanner(r io.Reader, found chan<- struct{}) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if url, ok := strings.CutPrefix(line, "Bastion is running at "); ok {
			d.url = url
		}
		if pw, ok := strings.CutPrefix(line, "password:"); ok {
			d.password = strings.TrimSpace(pw)
		}
		if runs, ok := strings.CutPrefix(line, "runs:"); ok {
			d.runsDir = strings.TrimSpace(runs)
		}
		if d.url != "" && d.password != "" && d.runsDir != "" && found != nil {
			close(found)
			found = nil
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

// stop ends the server with SIGTERM, which stops its etcd and
// kube-apiserver too, and waits for it; SIGKILL after a minute. Then it
// ends the runs the benchmark left, when it failed half-way: a runner
// outlives its manager by design (it keeps its last lines for minutes,
// for a manager that restarts), which a throwaway server does not need.
func (d *devServer) stop() error {
	if d.cmd.Process == nil {
		return nil
	}
	defer d.endRuns()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.exited:
		d.exited <- err
		if err != nil {
			return fmt.Errorf("bastion dev ended with %v; its stderr:\n%s", err, tail(d.logPath))
		}
		return nil
	case <-time.After(time.Minute):
		_ = d.cmd.Process.Kill()
		return errors.New("bastion dev did not stop within a minute after SIGTERM; killed")
	}
}

// tail is the end of a log file, for an error message.
func tail(path string) string {
	data, _ := os.ReadFile(path)
	const max = 4000
	if len(data) > max {
		data = data[len(data)-max:]
	}
	return string(data)
}

// endRuns kills the runner processes working under the server's runs
// directory, each by its pid, and removes that directory.
func (d *devServer) endRuns() {
	if d.runsDir == "" || !filepath.IsAbs(d.runsDir) {
		return
	}
	for _, pid := range runnersUnder(d.runsDir) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if !strings.HasPrefix(d.runsDir, d.dataDir+string(filepath.Separator)) {
		_ = os.RemoveAll(d.runsDir)
	}
}
