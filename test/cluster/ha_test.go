package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The manager's Lease (internal/cmd: LeaderElectionID), and the Secret
// that gives the chart the DSN of the host's PostgreSQL.
const (
	leaseName      = "bastion-manager.automation.bastion.dev"
	postgresSecret = "bastion-pg"
)

// haValues installs the chart as an HA user would: PostgreSQL, its DSN
// from a Secret of theirs, and replicas left to the chart's default (2
// with PostgreSQL).
func haValues(e env) map[string]any {
	return merge(values(e), map[string]any{
		"store": map[string]any{"type": "postgres", "postgres": map[string]any{"existingSecret": postgresSecret}},
	})
}

// hostPostgres runs a PostgreSQL server on the host for the cluster's
// pods (there is no registry, hence no PostgreSQL image): Debian's
// binaries, listening on the node's address only (the bridge, another
// address of the host, comes with the first pod, after the install),
// password (SCRAM) auth for the pod network and the node. It returns the
// DSN the pods use. The server dies
// with the test binary (Pdeathsig) and at cleanup.
func hostPostgres(t *testing.T) string {
	t.Helper()
	bin := postgresBin(t)
	// PostgreSQL refuses root: it runs as the user postgres, which owns its
	// directory (t.TempDir's parents are root's own, closed to others).
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("the user postgres (Debian's postgresql package): %v", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	dir, err := os.MkdirTemp("", "bastion-e2e-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	password := randomHex(t, 16)
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, pwfile} {
		if err := os.Chown(p, int(uid), int(gid)); err != nil {
			t.Fatal(err)
		}
	}
	command := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "LC_ALL=C", "TZ=UTC", "PGPASSWORD=" + password}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
		return cmd
	}
	data := filepath.Join(dir, "data")
	if out, err := command("initdb", "-D", data, "-U", "postgres", "--pwfile="+pwfile, "--auth=scram-sha-256",
		"--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	// The pods' network and the node (createdb below), with a password;
	// nothing else.
	node := nodeIP(t)
	hba := "host all all 10.244.0.0/16 scram-sha-256\nhost all all " + node + "/32 scram-sha-256\n"
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t, node)
	logFile, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	server := command("postgres", "-D", data, "-c", "listen_addresses="+node, "-p", strconv.Itoa(port),
		"-c", "unix_socket_directories=", "-c", "fsync=off", "-c", "max_connections=100")
	server.Stdout, server.Stderr = logFile, logFile
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = server.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = server.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = server.Process.Kill()
			<-exited
		}
	})
	// createdb is the first client: it waits for the server to accept
	// connections, and proves the password works over TCP.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := command("createdb", "-h", node, "-p", strconv.Itoa(port), "-U", "postgres", "bastion").CombinedOutput()
		if err == nil {
			break
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			t.Fatalf("postgres exited:\n%s", log)
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			t.Fatalf("createdb: %v\n%s\npostgres log:\n%s", err, out, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Sprintf("postgres://postgres:%s@%s/bastion?sslmode=disable", password, net.JoinHostPort(node, strconv.Itoa(port)))
}

// postgresBin is Debian's newest /usr/lib/postgresql/<version>/bin.
func postgresBin(t *testing.T) string {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(d string) int { v, _ := strconv.Atoi(filepath.Base(filepath.Dir(d))); return v }
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d
		}
	}
	t.Fatal("no PostgreSQL in /usr/lib/postgresql/*/bin: apt-get install postgresql")
	return ""
}

func freePort(t *testing.T, ip string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// nodeIP is the host's address on its default route, as
// hack/cluster/lib.sh's node_ip finds it (no packet is sent: a UDP
// "connection" only picks the source address).
func nodeIP(t *testing.T) string {
	t.Helper()
	c, err := net.Dial("udp4", "1.1.1.1:53")
	if err != nil {
		t.Fatalf("the node's address: %v", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String()
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// storeSecret puts the DSN into the Secret the chart reads it from, in
// the release namespace, before the install.
func storeSecret(t *testing.T, cs *kubernetes.Clientset, dsn string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: releaseNS}}
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil && !exists(err) {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: postgresSecret, Namespace: releaseNS}, StringData: map[string]string{"dsn": dsn}}
	if _, err := cs.CoreV1().Secrets(releaseNS).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitManagers waits until n manager pods, none of them going, are ready.
func waitManagers(t *testing.T, cs *kubernetes.Clientset, n int, limit time.Duration) []corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(limit)
	var last []string
	for time.Now().Before(deadline) {
		pods, err := cs.CoreV1().Pods(releaseNS).List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=manager"})
		if err == nil {
			var ready []corev1.Pod
			last = last[:0]
			for _, p := range pods.Items {
				last = append(last, describe(&p))
				if p.DeletionTimestamp == nil && isReady(&p) {
					ready = append(ready, p)
				}
			}
			if len(ready) == n {
				return ready
			}
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("%d ready manager pods not there after %s: %s", n, limit, strings.Join(last, "; "))
	return nil
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// leaderOf is the pod among pods that holds the Lease, and the holder
// identity, which is the pod's name, or its name, "_" and a unique suffix
// (controller-runtime's default identity: the hostname, which is the pod's
// name).
func leaderOf(t *testing.T, cs *kubernetes.Clientset, pods []corev1.Pod) (*corev1.Pod, string) {
	t.Helper()
	holder := leaseHolder(t, cs)
	for i := range pods {
		if holder == pods[i].Name || strings.HasPrefix(holder, pods[i].Name+"_") {
			return &pods[i], holder
		}
	}
	t.Fatalf("the Lease's holder %q is none of the pods %v", holder, podNames(pods))
	return nil, ""
}

func leaseHolder(t *testing.T, cs *kubernetes.Clientset) string {
	t.Helper()
	lease, err := cs.CoordinationV1().Leases(releaseNS).Get(t.Context(), leaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the manager's Lease: %v", err)
	}
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

func podNames(pods []corev1.Pod) []string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name
	}
	return names
}

// waitNewLeader waits until the Lease names a pod other than old.
func waitNewLeader(t *testing.T, cs *kubernetes.Clientset, old string, limit time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if h := leaseHolder(t, cs); h != "" && h != old {
			return h
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the Lease still names %q after %s", old, limit)
	return ""
}

// replicaOf is the address of the pod a websocket opened through the
// Service reached: kube-proxy picks an endpoint per connection and
// rewrites the destination, and the kernel's connection tracking
// remembers the rewrite (the reply comes from the pod's address).
func replicaOf(t *testing.T, ws *wsLog) string {
	t.Helper()
	local := ws.local.(*net.TCPAddr)
	out, err := exec.Command("conntrack", "-L", "-p", "tcp", "--orig-dst", managerIP, "--sport", strconv.Itoa(local.Port)).CombinedOutput()
	if err != nil {
		t.Fatalf("conntrack: %v\n%s", err, out)
	}
	// The original direction's src= and dst=, then the reply's src=: the
	// pod.
	m := regexp.MustCompile(`dport=\d+ src=(\S+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no connection from port %d to %s in conntrack:\n%s", local.Port, managerIP, out)
	}
	return string(m[1])
}

// watchOn opens websockets through the Service until one reaches the pod,
// and closes the others. Each reaches either of two replicas: 40 tries
// all missing one are a chance of 2^-40.
func watchOn(t *testing.T, a *api, pod *corev1.Pod) *wsLog {
	t.Helper()
	for try := 0; try < 40; try++ {
		ws := a.watch()
		if replicaOf(t, ws) == pod.Status.PodIP {
			return ws
		}
		ws.close()
	}
	t.Fatalf("40 websockets through the Service, none reached %s (%s)", pod.Name, pod.Status.PodIP)
	return nil
}

// waitDisruptionsAllowed waits until the chart's PodDisruptionBudget allows
// n evictions: the disruption controller has counted the ready replicas.
func waitDisruptionsAllowed(t *testing.T, cs *kubernetes.Clientset, n int32, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var last policyv1.PodDisruptionBudgetStatus
	for time.Now().Before(deadline) {
		pdb, err := cs.PolicyV1().PodDisruptionBudgets(releaseNS).Get(t.Context(), releaseName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the chart's PodDisruptionBudget: %v", err)
		}
		last = pdb.Status
		if pdb.Status.ObservedGeneration >= pdb.Generation && pdb.Status.DisruptionsAllowed == n {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("the PodDisruptionBudget does not allow %d disruptions after %s: %+v", n, limit, last)
}

// evict asks the Eviction API to remove the pod, as kubectl drain does.
func evict(t *testing.T, cs *kubernetes.Clientset, pod *corev1.Pod) error {
	t.Helper()
	return cs.CoreV1().Pods(pod.Namespace).EvictV1(t.Context(), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}})
}
