package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/bastion-dev/bastion/config/crd"
	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
)

// The reliability tests of issue #11 items 1 and 4 need the manager apart
// from the control plane: the test runs etcd and kube-apiserver itself
// (so that SIGKILL of the manager leaves them alone, and the apiserver can
// be restarted under a running manager) and `bastion manager --local-runs`
// as a child it kills and starts again. Runners are the manager's children
// in their own process groups, as under `bastion dev`.

// soak reports whether the long versions run (make soak).
func soak() bool { return os.Getenv("BASTION_SOAK") != "" }

// seeded returns a random source from BASTION_RESTART_SEED, or a new seed;
// the seed is logged so that a failing schedule can be run again.
func seeded(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("BASTION_RESTART_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("BASTION_RESTART_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (BASTION_RESTART_SEED=%d repeats this schedule)", seed, seed)
	fmt.Fprintf(os.Stderr, "%s: seed %d\n", t.Name(), seed)
	return rand.New(rand.NewPCG(seed, seed^0x5eed))
}

// cluster is etcd and kube-apiserver, owned by the test.
type cluster struct {
	t          *testing.T
	env        *envtest.Environment
	kubeconfig string
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	dir := t.TempDir()
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	certs := filepath.Join(dir, "apiserver")
	if err := os.MkdirAll(certs, 0o700); err != nil {
		t.Fatal(err)
	}
	logs, err := os.Create(filepath.Join(dir, "control-plane.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	c := &cluster{t: t, env: &envtest.Environment{
		BinaryAssetsDirectory:    assetsDir,
		CRDs:                     crds,
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
		ControlPlane: envtest.ControlPlane{
			Etcd: &envtest.Etcd{Out: logs, Err: logs},
			// A certificate directory of its own (not a temporary one) is
			// kept across a restart: the same serving certificate and
			// client CA, so the manager's kubeconfig stays good.
			APIServer: &envtest.APIServer{CertDir: certs, Out: logs, Err: logs},
		},
	}}
	if _, err := c.env.Start(); err != nil {
		_ = c.env.Stop()
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := c.env.Stop(); err != nil {
			t.Logf("stopping the control plane: %v", err)
		}
	})
	user, err := c.env.AddUser(envtest.User{Name: "e2e-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	c.kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(c.kubeconfig, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// restartAPIServer kills kube-apiserver with SIGKILL (a crash: a graceful
// stop under load can outlast any sensible bound), keeps it down for down,
// and starts it again on the same port with the same certificates.
func (c *cluster) restartAPIServer(down time.Duration) {
	c.t.Helper()
	pids := c.apiServerPids()
	if len(pids) != 1 {
		c.t.Fatalf("found kube-apiserver processes %v, want one", pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	// envtest reaps it; Stop then finds it exited and only tidies up.
	eventually(c.t, 10*time.Second, "kube-apiserver gone", func() error {
		if err := syscall.Kill(pids[0], 0); err == nil {
			return fmt.Errorf("pid %d still there", pids[0])
		}
		return nil
	})
	if err := c.env.ControlPlane.APIServer.Stop(); err != nil {
		c.t.Fatalf("tidying up after kube-apiserver: %v", err)
	}
	time.Sleep(down)
	if err := c.env.ControlPlane.APIServer.Start(); err != nil {
		c.t.Fatalf("starting kube-apiserver again: %v", err)
	}
}

// apiServerPids are the kube-apiserver processes of this control plane.
func (c *cluster) apiServerPids() []int {
	var pids []int
	for _, pid := range processesNaming(c.env.ControlPlane.APIServer.CertDir) {
		raw, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
		if strings.TrimSpace(string(raw)) == "kube-apiserver" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// managerProc is `bastion manager` with the local launcher; each start is
// a new process on the same port, store and runs directory.
type managerProc struct {
	t          *testing.T
	name       string // in logs; POD_NAME of a replica of the HA test bed
	url        string
	metricsURL string // "" when its metrics are off
	args       []string
	env        []string
	dir        string
	runs       string
	password   string
	starts     int
	cmd        *exec.Cmd
	done       chan struct{}
}

func newManagerProc(t *testing.T, c *cluster) *managerProc {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil { // its database: the manager's alone
		t.Fatal(err)
	}
	m := &managerProc{t: t, dir: dir, runs: reachableRunsDir(t), password: "restart-e2e-pw-1"}
	pwFile := filepath.Join(dir, "admin-password")
	if err := os.WriteFile(pwFile, []byte(m.password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	m.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	m.args = []string{"manager",
		"--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--demo-repo-listen", "",
		"--namespace", "bastion-system",
		"--store", "sqlite://" + filepath.Join(dir, "bastion.db"),
		"--local-runs", m.runs,
		"--initial-admin-password-file", pwFile,
	}
	m.env = append(os.Environ(), "KUBECONFIG="+c.kubeconfig)
	t.Cleanup(func() {
		m.stop()
		// Runs outlive a killed manager by design; none may outlive the test.
		for _, pid := range runnersUnder(m.runs) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		if t.Failed() {
			for i := 1; i <= m.starts; i++ {
				data, _ := os.ReadFile(m.logPath(i))
				t.Logf("manager #%d log (tail):\n%s", i, tail(string(data), 15))
			}
		}
	})
	return m
}

// reachableRunsDir is a --local-runs directory that runs with a user of
// their own (the manager as root) can reach, so that the manager keeps
// them there rather than under the system's temporary directory; the
// test's other directories stay private (0700).
func reachableRunsDir(t *testing.T) string {
	return filepath.Join(openTempDir(t, 0o711), "runs")
}

// sharedRecords is a directory where the tasks' scripts, each run as a
// user of its own when the manager is root, all write their records: any
// user may create files in it, and the shared file "runs" is writable by
// all.
func sharedRecords(t *testing.T) string {
	dir := openTempDir(t, os.ModeSticky|0o777)
	runs := filepath.Join(dir, "runs")
	if err := os.WriteFile(runs, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(runs, 0o666); err != nil { // whatever the umask
		t.Fatal(err)
	}
	return dir
}

// openTempDir is a new temporary directory of the given mode, which other
// users reach through the test's own (made passable, not listable).
func openTempDir(t *testing.T, mode os.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	for d, m := range map[string]os.FileMode{filepath.Dir(dir): 0o711, dir: mode} {
		if err := os.Chmod(d, m); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func (m *managerProc) logPath(n int) string {
	return filepath.Join(m.dir, fmt.Sprintf("manager-%d.log", n))
}

// start starts the manager and waits until its API answers.
func (m *managerProc) start() {
	m.t.Helper()
	m.spawn()
	m.waitAPI()
}

// spawn starts the manager's process, its output in the next log.
func (m *managerProc) spawn() {
	m.t.Helper()
	m.starts++
	log, err := os.Create(m.logPath(m.starts))
	if err != nil {
		m.t.Fatal(err)
	}
	defer log.Close() // the child has its own descriptor
	m.cmd = exec.Command(bastionBin, m.args...)
	m.cmd.Env = m.env
	m.cmd.Stdout, m.cmd.Stderr = log, log
	if err := m.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	done, cmd := make(chan struct{}), m.cmd
	m.done = done
	go func() { _ = cmd.Wait(); close(done) }()
}

// waitAPI waits until the manager's API answers; its process must not end
// meanwhile.
func (m *managerProc) waitAPI() {
	m.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case <-m.done:
			data, _ := os.ReadFile(m.logPath(m.starts))
			m.t.Fatalf("manager #%d exited at start:\n%s", m.starts, tail(string(data), 30))
		default:
		}
		if resp, err := http.Get(m.url + "/api/ping"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("manager #%d not ready after 90s", m.starts)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill sends SIGKILL: no shutdown, no flush, no chance to tell anyone.
func (m *managerProc) kill() {
	m.t.Helper()
	if err := m.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		m.t.Fatalf("killing the manager: %v", err)
	}
	<-m.done
}

func (m *managerProc) stop() {
	if m.cmd == nil {
		return
	}
	select {
	case <-m.done:
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(30 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
}

// signIn signs in as the administrator the manager creates. On a first
// start the account may not exist yet: a few tries, fewer than the
// failures that lock an account.
func (m *managerProc) signIn() *apiClient {
	m.t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		m.t.Fatal(err)
	}
	api := &apiClient{t: m.t, base: m.url, c: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	for try := 1; ; try++ {
		code, body := api.call("POST", "/api/auth/login", map[string]string{"auth": "admin", "password": m.password})
		if code == http.StatusNoContent {
			return api
		}
		if try == 4 {
			m.t.Fatalf("signing in to manager #%d: %d %s", m.starts, code, body)
		}
		time.Sleep(1500 * time.Millisecond)
	}
}

// runnersUnder lists the live processes whose command line names a path
// under dir: the runners of the local launcher and their scripts.
func runnersUnder(dir string) []int {
	var pids []int
	for _, pid := range processesNaming(dir + "/") {
		if !zombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processesNaming lists the processes whose command line contains s.
func processesNaming(s string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(raw, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func zombie(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// counterScript prints numbered lines in bursts with short sleeps, and
// records each run's start and end in a file outside Bastion, so that a
// second run of a task cannot hide. Its arguments: n=<task label> (the
// task's variable), the directory of the records, the number of bursts.
// Each line also goes to <dir>/<label>.printed: what the runner was given
// to stream, to compare with what the store kept.
const counterScript = `#!/bin/bash
set -e
label=${1#n=}
dir=$2
bursts=$3
echo "start $label $$" >> "$dir/runs"
for ((i = 1; i <= bursts; i++)); do
  for ((j = 1; j <= 5; j++)); do
    line="task $label line $(( (i - 1) * 5 + j ))"
    echo "$line" >> "$dir/$label.printed"
    echo "$line"
  done
  sleep 0.2
done
echo "end $label $$" >> "$dir/runs"
`

// counterProject is a project with one bash template running
// counterScript; tasks are started with their own label.
type counterProject struct {
	path     string // /api/project/<id>
	template int64
	records  string
}

func newCounterProject(t *testing.T, api *apiClient, bursts int) *counterProject {
	t.Helper()
	repo := gittest.NewRepo(t)
	repo.WriteFile("count.sh", counterScript, true)
	cp := &counterProject{records: sharedRecords(t)}
	var project, inventory, template struct {
		ID int64 `json:"id"`
	}
	api.must("POST", "/api/projects", map[string]any{"name": "Restarts"}, http.StatusCreated, &project)
	cp.path = "/api/project/" + itoa(project.ID)
	api.must("POST", cp.path+"/keys", map[string]any{"name": "nothing", "type": "none"}, http.StatusNoContent, nil)
	keyID := api.idNamed(cp.path+"/keys", "nothing")
	api.must("POST", cp.path+"/repositories", map[string]any{"name": "scripts", "git_url": repo.Path, "ssh_key_id": keyID}, http.StatusNoContent, nil)
	api.must("POST", cp.path+"/inventory", map[string]any{"name": "here", "type": "static", "inventory": "localhost\n", "ssh_key_id": keyID}, http.StatusCreated, &inventory)
	api.must("POST", cp.path+"/environment", map[string]any{"name": "none", "json": "{}", "env": "{}"}, http.StatusNoContent, nil)
	api.must("POST", cp.path+"/templates", map[string]any{
		"name": "Count", "playbook": "count.sh", "app": "bash", "repository_id": api.idNamed(cp.path+"/repositories", "scripts"),
		"inventory_id": inventory.ID, "environment_id": api.idNamed(cp.path+"/environment", "none"),
		"arguments": fmt.Sprintf(`[%q, "%d"]`, cp.records, bursts),
		// Each task's label is a survey answer, which a task may always set.
		"survey_vars": []map[string]any{{"name": "n", "title": "Label"}},
	}, http.StatusCreated, &template)
	cp.template = template.ID
	return cp
}

// startTask starts a task labelled label and returns its id.
func (cp *counterProject) startTask(api *apiClient, label string) int64 {
	api.t.Helper()
	var task struct {
		ID int64 `json:"id"`
	}
	api.must("POST", cp.path+"/tasks", map[string]any{
		"template_id": cp.template, "environment": fmt.Sprintf(`{"n": %q}`, label),
	}, http.StatusCreated, &task)
	return task.ID
}

var scriptLine = regexp.MustCompile(`^task (\S+) line \d+$`)

// checkTasks waits until every task is finished and then checks each: it
// succeeded, it ran exactly once, and its stored output holds exactly the
// lines its script printed, in order, each once.
func (cp *counterProject) checkTasks(t *testing.T, api *apiClient, tasks map[string]int64, wantLines int, limit time.Duration) {
	t.Helper()
	statuses := map[int64]string{}
	eventually(t, limit, "every task finished", func() error {
		var list []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		}
		api.must("GET", cp.path+"/tasks", nil, http.StatusOK, &list)
		for _, task := range list {
			statuses[task.ID] = task.Status
		}
		var busy []string
		for label, id := range tasks {
			switch statuses[id] {
			case "success", "error", "stopped":
			default:
				busy = append(busy, fmt.Sprintf("%s(#%d) %s", label, id, statuses[id]))
			}
		}
		if len(busy) > 0 {
			return fmt.Errorf("%d tasks not finished: %v", len(busy), busy)
		}
		return nil
	})

	runs, err := os.ReadFile(filepath.Join(cp.records, "runs"))
	if err != nil {
		t.Fatal(err)
	}
	started, ended := map[string]int{}, map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(runs)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("bad line in the runs record: %q", line)
		}
		switch f[0] {
		case "start":
			started[f[1]]++
		case "end":
			ended[f[1]]++
		}
	}
	for label, id := range tasks {
		if statuses[id] != "success" {
			code, raw := api.call("GET", cp.path+"/tasks/"+itoa(id)+"/raw", nil)
			var detail map[string]any
			api.must("GET", cp.path+"/tasks/"+itoa(id), nil, http.StatusOK, &detail)
			t.Errorf("task %s (#%d) ended %s (%v); output %d:\n%s", label, id, statuses[id], detail["message"], code, tail(string(raw), 10))
			continue
		}
		if started[label] != 1 || ended[label] != 1 {
			t.Errorf("task %s (#%d) ran %d times and ended %d times, want once", label, id, started[label], ended[label])
		}
		printed, err := os.ReadFile(filepath.Join(cp.records, label+".printed"))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Split(strings.TrimSpace(string(printed)), "\n")
		if len(want) != wantLines {
			t.Errorf("task %s printed %d lines, want %d", label, len(want), wantLines)
		}
		var stored []struct {
			Output string `json:"output"`
		}
		api.must("GET", cp.path+"/tasks/"+itoa(id)+"/output", nil, http.StatusOK, &stored)
		var got []string
		seen := map[string]int{}
		for _, s := range stored {
			seen[s.Output]++
			if m := scriptLine.FindStringSubmatch(s.Output); m != nil {
				if m[1] != label {
					t.Errorf("task %s (#%d) holds a line of task %s: %q", label, id, m[1], s.Output)
				}
				got = append(got, s.Output)
			}
		}
		for line, n := range seen {
			if n > 1 {
				t.Errorf("task %s (#%d): line %q stored %d times", label, id, line, n)
			}
		}
		if diff := firstDifference(want, got); diff != "" {
			t.Errorf("task %s (#%d): stored output differs from what the script printed (%d lines printed, %d stored): %s",
				label, id, len(want), len(got), diff)
		}
	}
}

// firstDifference describes where two line lists first differ ("" when
// they are equal).
func firstDifference(want, got []string) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		switch {
		case i >= len(got):
			return fmt.Sprintf("line %d %q missing", i+1, want[i])
		case i >= len(want):
			return fmt.Sprintf("extra line %d %q", i+1, got[i])
		case want[i] != got[i]:
			return fmt.Sprintf("line %d is %q, want %q", i+1, got[i], want[i])
		}
	}
	return ""
}

// between is a random duration in [lo, hi).
func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}
