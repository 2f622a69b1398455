package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/store/pgtest"
)

// Issue #21's test bed: what a highly available install is, on loopback.
// One real kube-apiserver (envtest), one real PostgreSQL, and several
// `bastion manager --leader-elect` processes sharing both, each on its own
// port. The managers run tasks as local processes in one shared runs
// directory (the local launcher adopts runs it finds there, as a new
// leader must), and runners reach the managers through a round-robin
// reverse proxy: each request, each batch of lines, may land on a
// different replica, as behind a Service.

// haCluster is the managers, the store and the proxy in front of them.
type haCluster struct {
	t        *testing.T
	cluster  *cluster
	pg       *pgtest.Server
	runs     string // the shared --local-runs directory
	password string // the administrator's
	managers []*managerProc
	proxy    *roundRobin // over every manager
}

// leaseName is the manager's leader election Lease, in its namespace.
const leaseName = "bastion-manager.automation.bastion.dev"

// startHA starts n managers on one new control plane and one new
// PostgreSQL, and waits until every one answers and one of them leads.
// extra arguments go to every manager.
func startHA(t *testing.T, n int, extra ...string) *haCluster {
	t.Helper()
	h := &haCluster{t: t, cluster: startCluster(t), runs: reachableRunsDir(t), password: "ha-e2e-pw-1"}
	pg, err := pgtest.Start()
	if err != nil {
		t.Fatalf("PostgreSQL for the HA test bed: %v", err)
	}
	t.Cleanup(func() {
		if err := pg.Close(); err != nil {
			t.Logf("stopping PostgreSQL: %v", err)
		}
	})
	h.pg = pg
	// The manager's namespace, which the chart makes: the Lease lives in it.
	kubectlStdout(t, h.cluster.kubeconfig, "create", "namespace", "bastion-system")
	secrets := t.TempDir()
	if err := os.Chmod(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	// The DSN goes by file, as the chart gives it: a PostgreSQL DSN may
	// hold a password, which argv must not.
	dsnFile := filepath.Join(secrets, "dsn")
	writeSecret(t, dsnFile, pg.NewDatabase(t))
	pwFile := filepath.Join(secrets, "admin-password")
	writeSecret(t, pwFile, h.password)

	// The proxy's address is every runner's manager URL; it is known
	// before any manager starts, and learns its backends as they do.
	h.proxy = startRoundRobin(t)
	for i := range n {
		m := &managerProc{t: t, dir: t.TempDir(), runs: h.runs, password: h.password, name: fmt.Sprintf("replica-%d", i+1)}
		port, metrics := freePort(t), freePort(t)
		m.url = fmt.Sprintf("http://127.0.0.1:%d", port)
		m.metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics)
		m.args = append([]string{"manager",
			"--listen", fmt.Sprintf("127.0.0.1:%d", port),
			"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metrics),
			"--health-probe-bind-address", "0", "--demo-repo-listen", "",
			"--namespace", "bastion-system",
			"--leader-elect",
			"--store-file", dsnFile,
			"--local-runs", h.runs,
			"--runner-url", h.proxy.URL(),
			"--initial-admin-password-file", pwFile,
		}, extra...)
		// POD_NAME is how a replica names itself, as in a pod.
		m.env = append(os.Environ(), "KUBECONFIG="+h.cluster.kubeconfig, "POD_NAME="+m.name)
		t.Cleanup(func() {
			m.stop()
			if t.Failed() {
				for s := 1; s <= m.starts; s++ {
					data, _ := os.ReadFile(m.logPath(s))
					t.Logf("%s log #%d (tail):\n%s", m.name, s, tail(string(data), 8))
				}
			}
		})
		h.managers = append(h.managers, m)
	}
	// Runs outlive a killed leader by design; none may outlive the test.
	// Registered after the managers' cleanups, so it runs before them.
	t.Cleanup(func() { killRunsUnder(h.runs) })
	for _, m := range h.managers {
		m.start()
		h.proxy.add(m.url)
	}
	h.waitLeader(30 * time.Second)
	return h
}

func writeSecret(t *testing.T, path, value string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// leader is the manager that leads now, or nil: the one whose
// controller-runtime metric leader_election_master_status is 1. (The
// Lease's holder identity names a host, and every replica here shares
// one.)
func (h *haCluster) leader() *managerProc {
	var found *managerProc
	for _, m := range h.managers {
		if m.alive() && m.leads() {
			if found != nil {
				h.t.Fatalf("%s and %s both lead", found.name, m.name)
			}
			found = m
		}
	}
	return found
}

// waitLeader waits until some manager leads, and returns it.
func (h *haCluster) waitLeader(limit time.Duration) *managerProc {
	h.t.Helper()
	var m *managerProc
	eventually(h.t, limit, "a manager leads", func() error {
		if m = h.leader(); m == nil {
			return fmt.Errorf("none of %d managers leads", len(h.managers))
		}
		return nil
	})
	return m
}

// followers are the live managers that do not lead.
func (h *haCluster) followers() []*managerProc {
	var out []*managerProc
	for _, m := range h.managers {
		if m.alive() && !m.leads() {
			out = append(out, m)
		}
	}
	return out
}

// signIn signs in as the administrator at base (the proxy's URL, or one
// manager's).
func (h *haCluster) signIn(base string) *apiClient {
	h.t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		h.t.Fatal(err)
	}
	api := &apiClient{t: h.t, base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	api.must("POST", "/api/auth/login", map[string]string{"auth": "admin", "password": h.password}, http.StatusNoContent, nil)
	return api
}

// alive reports whether the manager's process runs.
func (m *managerProc) alive() bool {
	if m.cmd == nil {
		return false
	}
	select {
	case <-m.done:
		return false
	default:
		return true
	}
}

// leads reads the manager's leader election metric.
func (m *managerProc) leads() bool {
	resp, err := http.Get(m.metricsURL)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	scan := bufio.NewScanner(resp.Body)
	scan.Buffer(make([]byte, 64*1024), 1024*1024)
	for scan.Scan() {
		line := scan.Text()
		if strings.HasPrefix(line, "leader_election_master_status{") && strings.Contains(line, leaseName) {
			return strings.HasSuffix(line, " 1")
		}
	}
	return false
}

// killRunsUnder ends every runner (and its script) under dir.
func killRunsUnder(dir string) {
	for _, pid := range runnersUnder(dir) {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// roundRobin is a reverse proxy that sends each request to the next of
// its backends in turn, websockets included (httputil.ReverseProxy
// carries an upgraded connection through). The request's Host is kept, so
// a browser's Origin still names the server it talks to.
type roundRobin struct {
	srv      *http.Server
	url      string
	backends atomic.Pointer[[]*url.URL]
	next     atomic.Uint64
	served   sync.Map // backend host → *atomic.Int64, requests sent to it
}

func startRoundRobin(t *testing.T, backends ...string) *roundRobin {
	t.Helper()
	p := &roundRobin{}
	p.backends.Store(&[]*url.URL{})
	for _, b := range backends {
		p.add(b)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.url = "http://" + ln.Addr().String()
	p.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second,
		Handler: &httputil.ReverseProxy{
			Rewrite: func(r *httputil.ProxyRequest) {
				target := p.pick()
				r.SetURL(target)
				r.Out.Host = r.In.Host
			},
			// A replica that is down answers 502, as a Service does
			// until its endpoints catch up: runners and clients retry.
			ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
				http.Error(w, "proxy: "+err.Error(), http.StatusBadGateway)
			},
			FlushInterval: -1,
		}}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() { _ = p.srv.Close() })
	return p
}

// URL is the proxy's address.
func (p *roundRobin) URL() string { return p.url }

// add makes backend one more target.
func (p *roundRobin) add(backend string) {
	u, err := url.Parse(backend)
	if err != nil {
		panic(err)
	}
	p.served.LoadOrStore(u.Host, &atomic.Int64{})
	next := append(append([]*url.URL{}, *p.backends.Load()...), u)
	p.backends.Store(&next)
}

// only makes the proxy send everything to the given backends alone.
func (p *roundRobin) only(backends ...string) {
	var next []*url.URL
	for _, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			panic(err)
		}
		next = append(next, u)
	}
	p.backends.Store(&next)
}

func (p *roundRobin) pick() *url.URL {
	all := *p.backends.Load()
	u := all[int(p.next.Add(1)-1)%len(all)]
	if c, ok := p.served.Load(u.Host); ok {
		c.(*atomic.Int64).Add(1)
	}
	return u
}

// servedBy is how many requests the proxy sent to backend.
func (p *roundRobin) servedBy(backend string) int64 {
	u, err := url.Parse(backend)
	if err != nil {
		panic(err)
	}
	if c, ok := p.served.Load(u.Host); ok {
		return c.(*atomic.Int64).Load()
	}
	return 0
}
