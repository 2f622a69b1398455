package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/controlplane"
	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/users"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

const projectYAML = `apiVersion: automation.bastion.dev/v1alpha1
kind: Project
metadata:
  name: e2e
spec:
  displayName: End to end
`

func TestDev_servesTheProductAndKeepsProjectsAcrossARestart(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	dev := startDev(t, dataDir)
	dev.waitReady()

	// The banner names a URL, the admin login and a 10-character password.
	if got := dev.bannerValue("login"); got != "admin" {
		t.Fatalf("banner login = %q, want admin\n%s", got, dev.stdout)
	}
	password := dev.bannerValue("password")
	if !regexp.MustCompile(`^[A-Za-z0-9]{10}$`).MatchString(password) {
		t.Fatalf("banner password %q is not 10 alphanumeric characters", password)
	}
	if !strings.Contains(dev.stdout.String(), "Bastion is running at "+dev.url) {
		t.Fatalf("banner does not print the URL %s:\n%s", dev.url, dev.stdout)
	}
	kubeconfig := dev.bannerValue("kubeconfig")
	if kubeconfig != filepath.Join(dataDir, "kubeconfig") {
		t.Fatalf("kubeconfig %q is not in the data dir", kubeconfig)
	}

	// The embedded etcd and kube-apiserver collect garbage less often
	// than Go's default (docs/benchmarks.md, "P3 writes").
	if _, set := os.LookupEnv("GOGC"); !set {
		for _, name := range []string{"etcd", "kube-apiserver"} {
			env := planeEnviron(t, dataDir, name)
			if !slices.Contains(env, "GOGC="+controlplane.PlaneGOGC) {
				// Not the whole environment: the test's own could hold secrets.
				gogc := slices.DeleteFunc(env, func(v string) bool { return !strings.HasPrefix(v, "GOGC=") })
				t.Errorf("%s runs with %q, want GOGC=%s", name, gogc, controlplane.PlaneGOGC)
			}
		}
	}

	// /api/info answers JSON with a version.
	resp, body := get(t, dev.url+"/api/info")
	var info struct{ Version string }
	if err := json.Unmarshal([]byte(body), &info); err != nil || info.Version == "" {
		t.Fatalf("/api/info = %q (%v), want JSON with a version", body, err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("/api/info Content-Type = %q", ct)
	}

	// / and a client route answer the console's HTML; assets are cached.
	_, index := get(t, dev.url+"/")
	if !strings.Contains(index, `<div id="root">`) {
		t.Fatalf("/ is not the console's index.html:\n%s", index)
	}
	if _, deep := get(t, dev.url+"/project/1/history"); deep != index {
		t.Fatal("/project/1/history does not answer the console's index.html")
	}
	asset := regexp.MustCompile(`/assets/[^"]+\.js`).FindString(index)
	if asset == "" {
		t.Fatal("index.html names no script under /assets/")
	}
	if resp, _ := get(t, dev.url+asset); resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
		t.Fatalf("%s: status %d, Cache-Control %q", asset, resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	if resp, _ := get(t, dev.url+"/assets/missing.js"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a missing asset answered %d, want 404", resp.StatusCode)
	}
	if resp, body := get(t, dev.url+"/api/no-such-route"); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `"error"`) {
		t.Fatalf("unknown /api route answered %d %q, want a JSON 404", resp.StatusCode, body)
	}

	// kubectl works with the printed kubeconfig; a Project gets its namespace.
	if out, err := kubectl(t, kubeconfig, projectYAML, "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	eventually(t, 20*time.Second, "project namespace", func() error {
		out, err := kubectl(t, kubeconfig, "", "get", "project", "e2e", "-o", "jsonpath={.status.namespace}")
		if err != nil || out != "bastion-e2e" {
			return fmt.Errorf("status.namespace = %q (%v)", out, err)
		}
		_, err = kubectl(t, kubeconfig, "", "get", "namespace", "bastion-e2e")
		return err
	})
	if out, err := kubectl(t, kubeconfig, "", "get", "projects"); err != nil || !strings.Contains(out, "End to end") {
		t.Fatalf("kubectl get projects: %v\n%s", err, out)
	}

	// Ctrl-C stops everything it started.
	dev.interrupt()
	if code := dev.wait(60 * time.Second); code != 0 {
		t.Fatalf("bastion dev exited %d after SIGINT:\n%s", code, tail(dev.stderr.String(), 20))
	}
	assertNoControlPlane(t, dataDir)

	// A restart keeps the project and the admin, and says how to reset the
	// password; the command it prints works.
	again := startDev(t, dataDir)
	again.waitReady()
	if again.bannerValue("password") != "" || !strings.Contains(again.stdout.String(), "bastion user change-by-login --kubeconfig "+kubeconfig+" --login admin") {
		t.Fatalf("second start should print how to reset the password, not a new one:\n%s", again.stdout)
	}
	if out, err := kubectl(t, kubeconfig, "", "get", "project", "e2e", "-o", "jsonpath={.spec.displayName}"); err != nil || out != "End to end" {
		t.Fatalf("project lost across restart: %q %v", out, err)
	}
	code, session := signInCookies(t, again.url, "admin", password)
	if code != http.StatusNoContent {
		t.Fatalf("sign-in with the banner's password after a restart = %d", code)
	}
	_, stderr, code := runBastion(t, "n3wPassw0rd\n", "user", "change-by-login", "--kubeconfig", kubeconfig, "--login", "admin")
	if code != 0 {
		t.Fatalf("change-by-login exited %d: %s", code, stderr)
	}
	assertPassword(t, kubeconfig, "admin", "n3wPassw0rd", true)
	assertPassword(t, kubeconfig, "admin", password, false)
	// And through the API, as the console signs in.
	if code := signIn(t, again.url, "admin", "n3wPassw0rd"); code != http.StatusNoContent {
		t.Fatalf("sign-in with the password set by change-by-login = %d", code)
	}
	if code := signIn(t, again.url, "admin", password); code != http.StatusUnauthorized {
		t.Fatalf("sign-in with the old password = %d, want 401", code)
	}
	// The session opened before the reset ended with it.
	req, _ := http.NewRequest("GET", again.url+"/api/user", nil)
	for _, c := range session {
		req.AddCookie(c)
	}
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a session from before change-by-login = %v %v, want 401", resp.StatusCode, err)
	}

	// The other user commands of the sign-in help text.
	_, stderr, code = runBastion(t, "", "user", "add", "--kubeconfig", kubeconfig,
		"--login", "ops", "--name", "Operations", "--email", "ops@example.com", "--password", "opsPassw0rd", "--admin")
	if code != 0 {
		t.Fatalf("user add exited %d: %s", code, stderr)
	}
	assertPassword(t, kubeconfig, "ops@example.com", "opsPassw0rd", true)
	if code := signIn(t, again.url, "ops@example.com", "opsPassw0rd"); code != http.StatusNoContent {
		t.Fatalf("sign-in as the user made by `bastion user add` = %d", code)
	}
	if _, stderr, code = runBastion(t, "", "user", "add", "--kubeconfig", kubeconfig,
		"--login", "ops", "--name", "Again", "--email", "other@example.com", "--password", "x"); code != 1 || !strings.Contains(stderr, "already exists") {
		t.Fatalf("duplicate user add = %d %q, want 1 and 'already exists'", code, stderr)
	}
	if _, stderr, code = runBastion(t, "", "user", "add", "--kubeconfig", kubeconfig,
		"--login", "nameless", "--email", "n@example.com", "--password", "x"); code != 1 || !strings.Contains(stderr, "Name is required") {
		t.Fatalf("user add without a name = %d %q, want 1 and 'Name is required'", code, stderr)
	}
	// --data-dir finds the kubeconfig of a running `bastion dev`.
	list, _, code := runBastion(t, "", "user", "list", "--data-dir", dataDir)
	if code != 0 || !regexp.MustCompile(`(?m)^admin\s+Administrator\s+admin@localhost\s+true$`).MatchString(list) ||
		!regexp.MustCompile(`(?m)^ops\s+Operations\s+ops@example.com\s+true$`).MatchString(list) || strings.Contains(list, "nameless") {
		t.Fatalf("user list = %d:\n%s", code, list)
	}

	again.interrupt()
	if code := again.wait(60 * time.Second); code != 0 {
		t.Fatalf("second run exited %d", code)
	}
	assertNoControlPlane(t, dataDir)
}

func TestDev_recoversFromAHardKillAndStopsCleanlyWhenInterruptedDuringStartup(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	dev := startDev(t, dataDir)
	dev.waitReady()

	// SIGKILL gives bastion dev no chance to clean up: etcd and
	// kube-apiserver, in their own process groups, survive it.
	_ = dev.cmd.Process.Signal(syscall.SIGKILL)
	dev.wait(10 * time.Second)
	orphans, err := controlplane.FindProcesses(dataDir)
	if err != nil || len(orphans) == 0 {
		t.Fatalf("expected orphans after SIGKILL, found %v (%v)", orphans, err)
	}
	t.Cleanup(func() {
		for _, pid := range orphans {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	// The next start stops them and comes up on the same data.
	next := startDev(t, dataDir)
	next.waitReady()
	if !strings.Contains(next.stderr.String(), "left by an earlier run") {
		t.Fatalf("second start did not report the leftovers:\n%s", tail(next.stderr.String(), 20))
	}
	for _, pid := range orphans {
		if syscall.Kill(pid, 0) == nil && !isZombie(pid) {
			t.Fatalf("orphan %d still running", pid)
		}
	}
	next.interrupt()
	next.wait(60 * time.Second)
	assertNoControlPlane(t, dataDir)

	// A Ctrl-C while the control plane is still starting also leaves nothing.
	early := startDev(t, dataDir)
	eventually(t, 30*time.Second, "control plane starting", func() error {
		if pids, _ := controlplane.FindProcesses(dataDir); len(pids) == 0 {
			return fmt.Errorf("no etcd yet")
		}
		return nil
	})
	early.interrupt()
	if code := early.wait(60 * time.Second); code != 0 {
		t.Fatalf("interrupted start exited %d:\n%s", code, tail(early.stderr.String(), 20))
	}
	assertNoControlPlane(t, dataDir)
}

func TestDev_refusesBadInputClearlyAndLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	t.Run("port already in use", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		dataDir := t.TempDir()
		addr := ln.Addr().String()
		_, stderr, code := runBastion(t, "", "dev", "--listen", addr, "--data-dir", dataDir, "--assets", assetsDir)
		if code != 1 || !strings.Contains(stderr, addr) || !strings.Contains(stderr, "address already in use") {
			t.Fatalf("exit %d, stderr %q: want 1 and a message naming %s", code, stderr, addr)
		}
		assertNoControlPlane(t, dataDir)
	})
	t.Run("data dir that cannot be written", func(t *testing.T) {
		// Tests may run as root, for whom permissions do not stop a write;
		// a regular file in the path stops everyone.
		file := filepath.Join(t.TempDir(), "a-file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		dataDir := filepath.Join(file, "data")
		_, stderr, code := runBastion(t, "", "dev", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--assets", assetsDir)
		if code != 1 || !strings.Contains(stderr, dataDir) {
			t.Fatalf("exit %d, stderr %q: want 1 and a message naming %s", code, stderr, dataDir)
		}
	})
	t.Run("missing envtest assets", func(t *testing.T) {
		dataDir := t.TempDir()
		_, stderr, code := runBastion(t, "", "dev", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--assets", t.TempDir())
		if code != 1 || !strings.Contains(stderr, "make envtest-assets") {
			t.Fatalf("exit %d, stderr %q: want 1 and advice to run make envtest-assets", code, stderr)
		}
		assertNoControlPlane(t, dataDir)
	})
	t.Run("a data dir in use by another run", func(t *testing.T) {
		dataDir := t.TempDir()
		first := startDev(t, dataDir)
		first.waitReady()
		_, stderr, code := runBastion(t, "", "dev", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--assets", assetsDir)
		if code != 1 || !strings.Contains(stderr, "in use by another bastion dev") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if resp, _ := get(t, first.url+"/api/ping"); resp.StatusCode != http.StatusOK {
			t.Fatal("the refused second run disturbed the first")
		}
	})
}

func assertNoControlPlane(t *testing.T, dataDir string) {
	t.Helper()
	eventually(t, 5*time.Second, "control plane gone", func() error {
		pids, err := controlplane.FindProcesses(dataDir)
		if err != nil {
			return err
		}
		var live []int
		for _, pid := range pids {
			if !isZombie(pid) {
				live = append(live, pid)
			}
		}
		if len(live) > 0 {
			return fmt.Errorf("etcd or kube-apiserver still running: %v", live)
		}
		return nil
	})
}

func isZombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// signIn posts the console's sign-in form and returns the status; a 204
// must come with the session cookies.
func signIn(t *testing.T, base, login, password string) int {
	t.Helper()
	code, _ := signInCookies(t, base, login, password)
	return code
}

func signInCookies(t *testing.T, base, login, password string) (int, []*http.Cookie) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"auth": login, "password": password})
	resp, err := http.Post(base+"/api/auth/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		names := map[string]bool{}
		for _, c := range resp.Cookies() {
			names[c.Name] = true
		}
		if !names["semaphore"] || !names["bastion_session"] {
			t.Fatalf("sign-in as %s set cookies %v", login, names)
		}
	}
	return resp.StatusCode, resp.Cookies()
}

func assertPassword(t *testing.T, kubeconfig, login, password string, want bool) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = bastionv1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	store := &users.Store{Client: c, Namespace: "bastion-system"}
	user, err := store.FindByLogin(context.Background(), login)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := store.CheckPassword(context.Background(), user, password)
	if err != nil || ok != want {
		t.Fatalf("password check for %s = %v (%v), want %v", login, ok, err, want)
	}
}

const localTaskYAML = `apiVersion: automation.bastion.dev/v1alpha1
kind: Project
metadata: {name: local}
spec: {displayName: Local runs}
`

const localTaskObjects = `apiVersion: v1
kind: Secret
metadata:
  name: none
  namespace: bastion-local
  labels: {automation.bastion.dev/key-type: none}
---
apiVersion: automation.bastion.dev/v1alpha1
kind: Repository
metadata: {name: code, namespace: bastion-local}
spec: {displayName: Code, gitURL: REPO, sshKeyRef: {name: none}}
---
apiVersion: automation.bastion.dev/v1alpha1
kind: Environment
metadata: {name: empty, namespace: bastion-local}
spec: {displayName: Empty}
---
apiVersion: automation.bastion.dev/v1alpha1
kind: Template
metadata: {name: hello, namespace: bastion-local}
spec:
  displayName: Hello
  app: bash
  playbook: hello.sh
  repositoryRef: {name: code}
  environmentRef: {name: empty}
  # escape-1 overrides the playbook: the template allows it, so the
  # runner's own check that the script stays inside the checkout is what
  # refuses the task.
  allowOverridePlaybookInTask: true
---
apiVersion: automation.bastion.dev/v1alpha1
kind: Template
metadata: {name: broken, namespace: bastion-local}
spec:
  displayName: Broken
  app: bash
  playbook: broken.sh
  repositoryRef: {name: code}
  environmentRef: {name: empty}
---
apiVersion: automation.bastion.dev/v1alpha1
kind: Task
metadata: {name: hello-1, namespace: bastion-local}
spec:
  templateRef: {name: hello}
---
apiVersion: automation.bastion.dev/v1alpha1
kind: Task
metadata: {name: broken-1, namespace: bastion-local}
spec:
  templateRef: {name: broken}
---
apiVersion: automation.bastion.dev/v1alpha1
kind: Task
metadata: {name: escape-1, namespace: bastion-local}
spec:
  templateRef: {name: hello}
  playbook: ../../etc/passwd
`

// Under bastion dev a task runs as a local ` + "`bastion runner`" + ` process: the
// repository is cloned, the script runs, and its exit decides the task.
func TestDev_runsTasksThroughTheLocalLauncher(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t)
	repo.WriteFile("hello.sh", "#!/bin/bash\necho hello from bastion\n", true)
	repo.WriteFile("broken.sh", "#!/bin/bash\necho about to fail\nexit 3\n", true)

	dataDir := t.TempDir()
	dev := startDev(t, dataDir)
	dev.waitReady()
	kubeconfig := dev.bannerValue("kubeconfig")
	applyLocalProject(t, kubeconfig, strings.ReplaceAll(localTaskObjects, "REPO", repo.Path))
	taskState := func(name string) string { return taskField(t, kubeconfig, name, "{.status.status}|{.status.message}") }
	eventually(t, 60*time.Second, "hello-1 succeeded", func() error {
		if got := taskState("hello-1"); got != "success|" {
			return fmt.Errorf("hello-1 is %q", got)
		}
		return nil
	})
	eventually(t, 60*time.Second, "broken-1 failed", func() error {
		if got := taskState("broken-1"); got != "error|RunnerFailed: the runner exited with code 3" {
			return fmt.Errorf("broken-1 is %q", got)
		}
		return nil
	})
	eventually(t, 60*time.Second, "escape-1 refused", func() error {
		if got := taskState("escape-1"); got != `error|the script "../../etc/passwd" leaves the repository` {
			return fmt.Errorf("escape-1 is %q", got)
		}
		return nil
	})

	// The runner reported its commit, and every line reached the store.
	commit := taskField(t, kubeconfig, "hello-1", "{.status.commitHash}")
	if head := repo.Git("-C", repo.Path, "rev-parse", "HEAD"); commit != head {
		t.Fatalf("task commit %q, repository head %q", commit, head)
	}
	taskID := taskField(t, kubeconfig, "hello-1", "{.metadata.labels.automation\\.bastion\\.dev/id}")
	projectID, _ := kubectl(t, kubeconfig, "", "get", "project", "local", "-o", "jsonpath={.metadata.labels.automation\\.bastion\\.dev/id}")
	output := storedOutput(t, filepath.Join(dataDir, "bastion.db"), projectID, taskID)
	if !containsLine(output, "hello from bastion") || !containsLine(output, "Cloning into") {
		t.Fatalf("stored output of task %s/%s:\n%s", projectID, taskID, strings.Join(output, "\n"))
	}

	// Where runs live: the data dir, or, when each run is a user of its
	// own, a directory those users can reach (the banner says).
	runs := dev.bannerValue("runs")
	eventually(t, 10*time.Second, "run directories removed", func() error {
		entries, err := os.ReadDir(runs)
		if err != nil || len(entries) != 0 {
			return fmt.Errorf("left in runs/: %v %v", entries, err)
		}
		return nil
	})
}

// storedOutput reads a task's lines from the SQLite store that bastion dev
// writes (readers may share the file with the running manager).
func storedOutput(t *testing.T, dbPath, projectID, taskID string) []string {
	t.Helper()
	pid, err1 := strconv.ParseInt(projectID, 10, 64)
	tid, err2 := strconv.ParseInt(taskID, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("ids %q %q", projectID, taskID)
	}
	s, err := store.Open(context.Background(), "sqlite://"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []string
	err = s.StreamLines(context.Background(), store.TaskKey{ProjectID: pid, TaskID: tid}, func(l store.Line) error {
		out = append(out, l.Output)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func containsLine(lines []string, part string) bool {
	for _, l := range lines {
		if strings.Contains(l, part) {
			return true
		}
	}
	return false
}

// Terraform under bastion dev: the plan's changes put the task in
// waiting_confirmation through the runner's stream; a confirmation given
// with kubectl reaches the runner, which applies.
func TestDev_terraformWaitsForConfirmationAndApplies(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Fatal("terraform is not in PATH: `make test` puts the one `make terraform` builds there")
	}
	repo := gittest.NewRepo(t)
	repo.WriteFile("main.tf", `resource "terraform_data" "hello" {
  input = "bastion"
}
`, false)

	dev := startDev(t, t.TempDir())
	dev.waitReady()
	kubeconfig := dev.bannerValue("kubeconfig")
	objects := strings.ReplaceAll(localTaskObjects, "REPO", repo.Path)
	objects = objects[:strings.Index(objects, "---\napiVersion: automation.bastion.dev/v1alpha1\nkind: Template")]
	objects += `---
apiVersion: automation.bastion.dev/v1alpha1
kind: Template
metadata: {name: infra, namespace: bastion-local}
spec:
  displayName: Infra
  app: terraform
  playbook: .
  repositoryRef: {name: code}
  environmentRef: {name: empty}
---
apiVersion: automation.bastion.dev/v1alpha1
kind: Task
metadata: {name: infra-1, namespace: bastion-local}
spec:
  templateRef: {name: infra}
`
	applyLocalProject(t, kubeconfig, objects)
	status := func() string {
		out := taskField(t, kubeconfig, "infra-1", "{.status.status}|{.status.message}")
		return out
	}
	eventually(t, 90*time.Second, "waiting for confirmation", func() error {
		if got := status(); got != "waiting_confirmation|" {
			return fmt.Errorf("infra-1 is %q", got)
		}
		return nil
	})
	if out, err := kubectl(t, kubeconfig, "", "patch", "task", "infra-1", "-n", "bastion-local", "--type=merge", "-p", `{"spec":{"confirmed":true}}`); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	eventually(t, 90*time.Second, "applied", func() error {
		if got := status(); got != "success|" {
			return fmt.Errorf("infra-1 is %q", got)
		}
		return nil
	})
}

// The runner's connection to the manager is cut again and again while a
// script floods its output: the store ends with exactly the printed lines,
// none lost, none twice, in order.
func TestDev_cutConnectionsLoseAndDuplicateNoLine(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t)
	repo.WriteFile("hello.sh", "#!/bin/bash\nfor i in $(seq 1 20000); do echo \"line $i\"; done\n", true)

	port := freePort(t)
	proxy := startCuttingProxy(t, fmt.Sprintf("127.0.0.1:%d", port), 50)
	dataDir := t.TempDir()
	dev := startDevOnPort(t, dataDir, port, "--runner-url", proxy.URL())
	dev.waitReady()
	kubeconfig := dev.bannerValue("kubeconfig")
	objects := strings.ReplaceAll(localTaskObjects, "REPO", repo.Path)
	objects = objects[:strings.Index(objects, "---\napiVersion: automation.bastion.dev/v1alpha1\nkind: Template\nmetadata: {name: broken")]
	objects += "---\napiVersion: automation.bastion.dev/v1alpha1\nkind: Task\nmetadata: {name: flood-1, namespace: bastion-local}\nspec:\n  templateRef: {name: hello}\n"
	applyLocalProject(t, kubeconfig, objects)
	eventually(t, 120*time.Second, "flood-1 succeeded", func() error {
		out := taskField(t, kubeconfig, "flood-1", "{.status.status}")
		if out != "success" {
			return fmt.Errorf("flood-1 is %q", out)
		}
		return nil
	})
	if proxy.cut.Load() == 0 {
		t.Fatal("the proxy cut no connection: the test proved nothing")
	}
	taskID := taskField(t, kubeconfig, "flood-1", "{.metadata.labels.automation\\.bastion\\.dev/id}")
	projectID, _ := kubectl(t, kubeconfig, "", "get", "project", "local", "-o", "jsonpath={.metadata.labels.automation\\.bastion\\.dev/id}")
	var printed []string
	for _, l := range storedOutput(t, filepath.Join(dataDir, "bastion.db"), projectID, taskID) {
		if strings.HasPrefix(l, "line ") {
			printed = append(printed, l)
		}
	}
	if len(printed) != 20000 {
		t.Fatalf("%d script lines stored, want 20000 (%d connections cut)", len(printed), proxy.cut.Load())
	}
	for i, l := range printed {
		if l != fmt.Sprintf("line %d", i+1) {
			t.Fatalf("stored line %d is %q", i+1, l)
		}
	}
	t.Logf("%d of %d runner connections were cut", proxy.cut.Load(), proxy.count.Load())
}

// applyLocalProject creates the project "local", waits for its namespace,
// then applies objects (the project's key, repository, templates, tasks).
func applyLocalProject(t *testing.T, kubeconfig, objects string) {
	t.Helper()
	if out, err := kubectl(t, kubeconfig, localTaskYAML, "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	eventually(t, 20*time.Second, "project namespace", func() error {
		_, err := kubectl(t, kubeconfig, "", "get", "namespace", "bastion-local")
		return err
	})
	if out, err := kubectl(t, kubeconfig, objects, "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// taskField reads one field of a task of the project "local".
func taskField(t *testing.T, kubeconfig, task, jsonpath string) string {
	t.Helper()
	out, _ := kubectl(t, kubeconfig, "", "get", "task", task, "-n", "bastion-local", "-o", "jsonpath="+jsonpath)
	return out
}

// bastion dev's terminal shows its start-up, then the banner, and after the
// banner only warnings and errors: the manager's INFO lines (a controller
// starting, a namespace created) go to the log file in the data dir.
func TestDev_terminalShowsTheBannerLastAndTheLogFileHasTheRest(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	terminal := &lockedBuffer{} // stdout and stderr, in the order printed
	dev := startDevWriting(t, dataDir, freePort(t), terminal, terminal)
	dev.waitReady()

	// Work after the banner that the manager logs at INFO.
	if out, err := kubectl(t, dev.bannerValue("kubeconfig"), projectYAML, "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	eventually(t, 60*time.Second, "the project's namespace in the log file", func() error {
		if !strings.Contains(dev.log(), "created project namespace") {
			return fmt.Errorf("not logged yet")
		}
		return nil
	})
	dev.interrupt()
	if code := dev.wait(60 * time.Second); code != 0 {
		t.Fatalf("bastion dev exited %d", code)
	}

	// The manager's INFO lines, and client-go's (klog: I1126 ...).
	for _, line := range infoLine.FindAllString(terminal.String(), -1) {
		t.Errorf("the terminal shows a log line below WARN: %s", line)
	}
	log := dev.log()
	for _, want := range []string{"\tINFO\tStarting workers", "\tINFO\tcreated project namespace"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log file %s lacks %q:\n%s", filepath.Join(dataDir, "bastion.log"), want, tail(log, 20))
		}
	}
	if got := dev.bannerValue("log"); got != filepath.Join(dataDir, "bastion.log") {
		t.Errorf("the banner names the log %q, want the data dir's bastion.log", got)
	}

	// Start-up comes before the banner; between the banner and the
	// shutdown, only warnings and errors.
	out := terminal.String()
	startup, rest, found := strings.Cut(out, "\nBastion is running at ")
	if !found || !strings.Contains(startup, "starting etcd and kube-apiserver") {
		t.Fatalf("no start-up, then banner, on the terminal:\n%s", out)
	}
	// Local runs start bastion-runner, which lies beside bastion as make
	// build (and this harness) lays them out; start-up says so.
	if runner := "runs start " + filepath.Join(filepath.Dir(bastionBin), "bastion-runner"); !strings.Contains(startup, runner) {
		t.Errorf("start-up does not say %q:\n%s", runner, startup)
	}
	_, afterBanner, found := strings.Cut(rest, "Press Ctrl-C to stop.\n")
	afterBanner, _, stopped := strings.Cut(afterBanner, "shutting down...\n")
	if !found || !stopped {
		t.Fatalf("the banner or the shutdown is missing:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSuffix(afterBanner, "\n"), "\n") {
		if line != "" && !warningLine.MatchString(line) {
			t.Errorf("after the banner, the terminal shows more than warnings and errors: %q\n%s", line, out)
		}
	}
}

// infoLine is a log line below WARN: the manager's (zap's console
// encoding: time, tab, level) or client-go's (klog: I1126 11:13:17...).
var infoLine = regexp.MustCompile(`(?m)^(\S+\t(DEBUG|INFO)\t|I\d{4} ).*$`)

// warningLine is a warning or an error, the manager's or client-go's.
var warningLine = regexp.MustCompile(`^(\S+\t(WARN|ERROR)\t|[WE]\d{4} )`)

// planeEnviron is the environment of the plane's process named name (etcd,
// kube-apiserver) whose arguments name a path under dataDir.
func planeEnviron(t *testing.T, dataDir, name string) []string {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if filepath.Base(args[0]) != name || !slices.ContainsFunc(args[1:], func(a string) bool { return strings.Contains(a, dataDir+"/") }) {
			continue
		}
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			t.Fatalf("reading %s's environment: %v", name, err)
		}
		return strings.Split(string(environ), "\x00")
	}
	t.Fatalf("no %s process of %s", name, dataDir)
	return nil
}
