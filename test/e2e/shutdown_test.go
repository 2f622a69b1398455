package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A replica told to stop (SIGTERM, as the kubelet sends when it deletes
// the pod) with --shutdown-delay turns /readyz to 503 at once and goes on
// answering its API, on new connections, until the delay ends: the proxies
// in front of it (kube-proxy, an ingress controller) learn of the pod's end
// a moment after SIGTERM and still send it requests meanwhile. Then it
// stops as before. Without the delay the API closed at the signal, and
// those requests were refused (docs/install.md, "High availability").
func TestManager_answersItsAPIThroughItsShutdownDelayWhileNotReady(t *testing.T) {
	t.Parallel()
	const delay = 3 * time.Second
	c := startCluster(t)
	m := newManagerProc(t, c)
	probes := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	setFlag(t, m.args, "--health-probe-bind-address", probes)
	m.args = append(m.args, "--shutdown-delay", delay.String())
	m.start()
	api := m.signIn()

	// Each request on a connection of its own, as a proxy's new one.
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(url string) (int, string, error) { return getText(client, url) }
	eventually(t, 30*time.Second, "ready", func() error {
		if code, body, err := get("http://" + probes + "/readyz"); code != http.StatusOK {
			return fmt.Errorf("/readyz %d %q %v", code, body, err)
		}
		return nil
	})
	// A client that keeps its connection, as a proxy's pool or a runner
	// does: once the replica is told to stop, each answer closes it, so
	// that the next request opens one to a replica that stays.
	kept := &http.Client{Timeout: 2 * time.Second}
	keptGet := func() (code int, closes bool, err error) {
		resp, err := kept.Get(m.url + "/api/ping")
		if err != nil {
			return 0, false, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Close, nil
	}
	if code, closes, err := keptGet(); code != http.StatusOK || closes {
		t.Fatalf("before SIGTERM: %d, connection closed %v, %v; want 200 on a connection kept open", code, closes, err)
	}

	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	eventually(t, time.Second, "/readyz 503 at SIGTERM", func() error {
		if code, body, err := get("http://" + probes + "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "stopping") {
			return fmt.Errorf("/readyz %d %q %v", code, body, err)
		}
		return nil
	})
	answered := 0
	for time.Since(signalled) < delay-500*time.Millisecond {
		if code, body, err := get(m.url + "/api/ping"); code != http.StatusOK {
			t.Fatalf("%s after SIGTERM, within the %s delay: GET /api/ping %d %q %v",
				time.Since(signalled).Round(time.Millisecond), delay, code, body, err)
		}
		api.must("GET", "/api/projects", nil, http.StatusOK, nil)
		if code, closes, err := keptGet(); code != http.StatusOK || !closes {
			t.Fatalf("%s after SIGTERM, on a kept connection: %d, connection closed %v, %v; want 200 closing it",
				time.Since(signalled).Round(time.Millisecond), code, closes, err)
		}
		answered++
		time.Sleep(50 * time.Millisecond)
	}

	select {
	case <-m.done:
	case <-time.After(delay + 20*time.Second):
		t.Fatalf("still running %s after SIGTERM", time.Since(signalled).Round(time.Millisecond))
	}
	stopped := time.Since(signalled)
	if stopped < delay {
		t.Errorf("stopped %s after SIGTERM, before its %s delay ended", stopped.Round(time.Millisecond), delay)
	}
	if code := m.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
	t.Logf("%d pings and project lists answered during the %s delay; stopped %s after SIGTERM",
		answered, delay, stopped.Round(time.Millisecond))
}
