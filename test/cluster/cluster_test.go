// Package cluster is the end-to-end test on a real single-node cluster
// (make e2e-cluster): the Helm chart installed with the images `make
// images` built, and tasks run as real Job pods. Its own module, so that
// `go test ./...` in the main module never runs it, and so that Helm's
// dependencies stay out of the bastion binary's module.
package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	labelTask    = "automation.bastion.dev/task"
	labelProject = "automation.bastion.dev/project"
	labelID      = "automation.bastion.dev/id"
	// The cni0 bridge's address: the host as pods see it. The test's git
	// server listens there, reachable from pods and from nowhere else.
	bridgeIP = "10.244.0.1"
	// Values that must reach only the task that uses them.
	envSecret    = "env-secret-3f9c1a"
	unusedSecret = "unused-key-secret-77d2e0"
	hookSecret   = "webhook-secret-5b1e44"
)

var repoFiles = map[string]string{
	"site.yml": `- hosts: all
  gather_facts: false
  vars:
    ansible_python_interpreter: "{{ ansible_playbook_python }}"
  tasks:
    - name: greet
      ansible.builtin.debug:
        msg: "greeting is {{ greeting }}"
    - name: linger, so the test sees the pod run
      ansible.builtin.command: sleep 6
      changed_when: false
`,
	"hello.sh": `#!/bin/bash
echo "hello from bash in $(hostname)"
echo "args: $*"
sleep 6
echo "bash done"
`,
	// Numbered lines, slowly: the restart and stop checks count them.
	// The count is the last argument: the runner passes the environment's
	// extra variables first, as key=value words (Semaphore's bash
	// interface), then the template's arguments.
	"count.sh": `#!/bin/bash
n=${!#}
for i in $(seq 1 "$n"); do echo "line $i"; sleep 0.5; done
echo "count done"
`,
	// The environment's extra variables arrive as -var: each must be
	// declared, as in any real module.
	"infra/main.tf": `variable "greeting" {
  type = string
}
resource "terraform_data" "thing" {
  input = "made by bastion: ${var.greeting}"
}
output "thing" {
  value = terraform_data.thing.output
}
`,
}

// gitServer serves a repository with repoFiles over git:// on the bridge
// address, and returns its URL.
func gitServer(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@localhost", "GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@localhost")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "-b", "main")
	for name, content := range repoFiles {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git("add", ".")
	git("commit", "-q", "-m", "e2e")
	if err := os.WriteFile(filepath.Join(repo, ".git", "git-daemon-export-ok"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	l, err := net.Listen("tcp", bridgeIP+":0")
	if err != nil {
		t.Fatalf("listening on the bridge %s: %v", bridgeIP, err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	daemon := exec.Command("git", "daemon", "--reuseaddr", "--listen="+bridgeIP, fmt.Sprintf("--port=%d", port),
		"--base-path="+base, "--informative-errors", base)
	daemon.Stderr = testWriter{t}
	// git daemon forks a child per connection, which inherits stderr: kill
	// the whole group, and do not wait for ever on the pipe.
	daemon.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	daemon.WaitDelay = 5 * time.Second
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-daemon.Process.Pid, syscall.SIGKILL); _ = daemon.Wait() })
	for i := 0; i < 50; i++ {
		if c, err := net.Dial("tcp", net.JoinHostPort(bridgeIP, strconv.Itoa(port))); err == nil {
			c.Close()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Sprintf("git://%s:%d/repo", bridgeIP, port)
}

// The chart installed as for high availability (PostgreSQL, and the
// default of 2 replicas with it): every request, websocket and runner
// post goes through the Service to either replica.
func TestCluster_helmInstallTwoReplicasRunTasksAsPodsAndSurviveTheLeadersDeletion(t *testing.T) {
	start := time.Now()
	e := mustEnv(t)
	cs := clientset(t, e)
	storeSecret(t, cs, hostPostgres(t))
	uninstall := install(t, e, haValues(e))
	defer uninstall()
	waitManagers(t, cs, 2, 3*time.Minute)
	t.Logf("2 managers ready after %s", time.Since(start).Round(time.Second))

	base := "http://" + managerIP
	waitService(t, base, time.Minute)
	a := signIn(t, base, "admin", adminPassword(t, cs))
	ws := a.watch()
	repoURL := gitServer(t)

	// A project, and what its templates need.
	var project struct {
		ID int64 `json:"id"`
	}
	a.must("POST", "/api/projects", map[string]any{"name": "On a real cluster"}, http.StatusCreated, &project)
	p := fmt.Sprintf("/api/project/%d", project.ID)
	a.must("POST", p+"/keys", map[string]any{"name": "none", "type": "none"}, http.StatusNoContent, nil)
	a.must("POST", p+"/keys", map[string]any{"name": "unused", "type": "login_password", "login_password": map[string]string{"login": "u", "password": unusedSecret}}, http.StatusNoContent, nil)
	a.must("POST", p+"/keys", map[string]any{"name": "hook", "type": "login_password", "login_password": map[string]string{"login": "github", "password": hookSecret}}, http.StatusNoContent, nil)
	none := a.idNamed(p+"/keys", "none")
	a.must("POST", p+"/repositories", map[string]any{"name": "e2e", "git_url": repoURL, "git_branch": "main", "ssh_key_id": none}, http.StatusNoContent, nil)
	repoID := a.idNamed(p+"/repositories", "e2e")
	var inventory struct {
		ID int64 `json:"id"`
	}
	a.must("POST", p+"/inventory", map[string]any{"name": "here", "type": "static", "inventory": "localhost ansible_connection=local\n", "ssh_key_id": none}, http.StatusCreated, &inventory)
	a.must("POST", p+"/environment", map[string]any{"name": "e2e", "json": `{"greeting": "hello from a pod"}`, "env": "{}",
		"secrets": []map[string]any{{"type": "env", "name": "E2E_SECRET", "secret": envSecret, "operation": "create"}}}, http.StatusNoContent, nil)
	envID := a.idNamed(p+"/environment", "e2e")
	template := func(name, app, playbook string, extra map[string]any) int64 {
		body := map[string]any{"name": name, "app": app, "playbook": playbook, "repository_id": repoID,
			"inventory_id": inventory.ID, "environment_id": envID}
		for k, v := range extra {
			body[k] = v
		}
		var tpl struct {
			ID int64 `json:"id"`
		}
		a.must("POST", p+"/templates", body, http.StatusCreated, &tpl)
		return tpl.ID
	}
	bashTpl := template("bash", "bash", "hello.sh", map[string]any{"arguments": `["one", "two"]`})
	ansibleTpl := template("ansible", "ansible", "site.yml", nil)
	terraformTpl := template("terraform", "terraform", "infra", nil)
	countTpl := template("count", "bash", "count.sh", map[string]any{"arguments": `["60"]`})

	run := func(tpl int64) int64 {
		var tk task
		a.must("POST", p+"/tasks", map[string]any{"template_id": tpl}, http.StatusCreated, &tk)
		return tk.ID
	}

	// --- bash: first task ------------------------------------------------
	bash := run(bashTpl)
	pod := seenRunningWithOutput(t, a, ws, cs, project.ID, bash, "hello from bash")
	checkPod(t, cs, pod)
	a.waitStatus(project.ID, bash, 3*time.Minute, "success")
	t.Logf("first task succeeded %s after the test started", time.Since(start).Round(time.Second))
	if since, err := strconv.ParseInt(os.Getenv("E2E_START"), 10, 64); err == nil {
		t.Logf("E2E TIMING: first task succeeded %s after make e2e-cluster started", time.Since(time.Unix(since, 0)).Round(time.Second))
	}
	lines := mustOutput(t, a, project.ID, bash, "args: greeting=hello from a pod one two", "bash done")
	sameOnWebsocket(t, ws, bash, lines)

	// --- a task started by a signed webhook ---------------------------------
	hookKey := a.idNamed(p+"/keys", "hook")
	var integration struct {
		ID int64 `json:"id"`
	}
	a.must("POST", p+"/integrations", map[string]any{"name": "push", "template_id": bashTpl, "auth_method": "github", "auth_secret_id": hookKey}, http.StatusCreated, &integration)
	var alias struct {
		URL string `json:"url"`
	}
	a.must("POST", fmt.Sprintf("%s/integrations/%d/aliases", p, integration.ID), nil, http.StatusCreated, &alias)
	hookURL := base + alias.URL[strings.Index(alias.URL, "/api/integrations/"):]
	body := []byte(`{"ref":"refs/heads/main"}`)
	if code, data := deliver(t, hookURL, body, map[string]string{"X-Hub-Signature-256": "sha256=" + hmacHex("not the secret", body)}); code != http.StatusUnauthorized {
		t.Fatalf("a webhook with a wrong signature = %d %s, want 401", code, data)
	}
	if code, data := deliver(t, hookURL, body, map[string]string{"X-Hub-Signature-256": "sha256=" + hmacHex(hookSecret, body)}); code != http.StatusNoContent {
		t.Fatalf("a signed webhook = %d %s, want 204", code, data)
	}
	var last []task
	a.eventually(fmt.Sprintf("the last task is one started by integration %d", integration.ID), func() bool {
		last = nil
		a.must("GET", p+"/tasks/last?limit=1", nil, http.StatusOK, &last)
		return len(last) == 1 && last[0].IntegrationID != nil && *last[0].IntegrationID == integration.ID
	})
	hook := last[0].ID
	hookPod := seenRunningWithOutput(t, a, ws, cs, project.ID, hook, "hello from bash")
	checkPod(t, cs, hookPod)
	a.waitStatus(project.ID, hook, 3*time.Minute, "success")
	sameOnWebsocket(t, ws, hook, mustOutput(t, a, project.ID, hook, "bash done"))

	// --- the Job goes by its TTL; the output stays ---------------------------
	waitGone(t, cs, pod, 2*time.Minute)
	mustOutput(t, a, project.ID, bash, "args: greeting=hello from a pod one two", "bash done")

	// --- stop a long task: its pod terminates --------------------------------
	long := run(countTpl)
	longPod := seenRunningWithOutput(t, a, ws, cs, project.ID, long, "line 3")
	a.must("POST", fmt.Sprintf("%s/tasks/%d/stop", p, long), nil, http.StatusNoContent, nil)
	a.waitStatus(project.ID, long, 2*time.Minute, "stopped")
	waitTerminated(t, cs, longPod, time.Minute)
	if out, _ := a.output(project.ID, long); slices.Contains(out, "count done") {
		t.Fatalf("the stopped task ran to its end:\n%s", strings.Join(out, "\n"))
	}

	// --- the leader's pod is evicted during a task: no line lost --------------
	// A websocket on the replica that stays; the runner posts through the
	// Service to either replica, and to the survivor once the leader is
	// gone: the survivor's clients get every line once, in order.
	managers := waitManagers(t, cs, 2, time.Minute)
	leader, holder := leaderOf(t, cs, managers)
	survivor := &managers[0]
	if survivor.Name == leader.Name {
		survivor = &managers[1]
	}
	stays := watchOn(t, a, survivor)
	counted := run(countTpl)
	countedPod := seenRunningWithOutput(t, a, stays, cs, project.ID, counted, "line 5")
	// Evicted, as a drain does: the PodDisruptionBudget lets the one go,
	// and refuses the other until the leader's replacement is ready.
	waitDisruptionsAllowed(t, cs, 1, time.Minute)
	// Meanwhile a client keeps asking through the Service, on a new
	// connection each time: the evicted replica answers what kube-proxy
	// still sends it during its shutdown delay, so no request fails.
	pings := pingThroughService(t, a.base)
	deleted := time.Now()
	if err := evict(t, cs, leader); err != nil {
		t.Fatalf("evicting the leader's pod %s: %v", leader.Name, err)
	}
	t.Logf("evicted the leader's pod %s (Lease holder %s) during task %d; %s stays", leader.Name, holder, counted, survivor.Name)
	if err := evict(t, cs, survivor); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("evicting the other replica %s too: %v, want the PodDisruptionBudget's refusal (429)", survivor.Name, err)
	}
	// A graceful stop gives the Lease up: the survivor (or the leader's
	// replacement) takes it well within the 15 s a crash may take.
	newHolder := waitNewLeader(t, cs, holder, 15*time.Second)
	t.Logf("E2E TIMING: %s holds the Lease %s after the leader's pod was evicted", newHolder, time.Since(deleted).Round(100*time.Millisecond))
	waitTerminated(t, cs, leader, time.Minute)
	if answered, failed := pings(); len(failed) > 0 {
		t.Errorf("%d of %d requests through the Service failed while the leader's pod stopped: %v", len(failed), answered+len(failed), failed)
	} else {
		t.Logf("%d requests through the Service, all answered, while the leader's pod stopped", answered)
	}
	a.waitStatus(project.ID, counted, 3*time.Minute, "success")
	// Read at once: the Job and its pods go 20 s after the end (jobTTL).
	ranIn := taskPods(t, cs, countedPod)
	out := mustOutput(t, a, project.ID, counted, "count done")
	numberedOnce(t, "the stored output", out)
	sameOnWebsocket(t, stays, counted, out)
	select {
	case <-stays.closed:
		t.Fatal("the websocket on the replica that stays was closed")
	default:
	}
	// It ended once: one success, after running, on the websocket; and one
	// pod ran it.
	if st := stays.statusesOf(counted); len(st) == 0 || st[len(st)-1] != "success" || slices.Index(st, "success") != len(st)-1 {
		t.Errorf("task %d's statuses on the websocket %v, want them to end with one success", counted, st)
	}
	if len(ranIn) != 1 {
		t.Errorf("task %d ran in %d pods %v, want 1", counted, len(ranIn), podNames(ranIn))
	}
	// The Deployment replaces the pod; the chart's spread schedules it on
	// the one node.
	waitManagers(t, cs, 2, 3*time.Minute)
	ws = a.watch()

	// --- ansible -----------------------------------------------------------
	ansible := run(ansibleTpl)
	ansiblePod := seenRunningWithOutput(t, a, ws, cs, project.ID, ansible, "")
	checkPod(t, cs, ansiblePod)
	a.waitStatus(project.ID, ansible, 5*time.Minute, "success")
	sameOnWebsocket(t, ws, ansible, mustOutput(t, a, project.ID, ansible, "greeting is hello from a pod"))

	// --- terraform, with confirmation --------------------------------------
	tf := run(terraformTpl)
	tfPod := seenRunningWithOutput(t, a, ws, cs, project.ID, tf, "")
	checkPod(t, cs, tfPod)
	a.waitStatus(project.ID, tf, 5*time.Minute, "waiting_confirmation")
	a.must("POST", fmt.Sprintf("%s/tasks/%d/confirm", p, tf), nil, http.StatusNoContent, nil)
	a.waitStatus(project.ID, tf, 5*time.Minute, "success")
	sameOnWebsocket(t, ws, tf, mustOutput(t, a, project.ID, tf, "Apply complete!"))
}

// numberedOnce: the count template's lines 1..60, once each, in order.
func numberedOnce(t *testing.T, what string, out []string) {
	t.Helper()
	var numbered []string
	for _, l := range out {
		if strings.HasPrefix(l, "line ") {
			numbered = append(numbered, l)
		}
	}
	for i := 1; i <= 60; i++ {
		if len(numbered) < i || numbered[i-1] != fmt.Sprintf("line %d", i) {
			t.Fatalf("%s is not lines 1..60 once each, in order:\n%s", what, strings.Join(out, "\n"))
		}
	}
	if len(numbered) != 60 {
		t.Fatalf("%s has %d numbered lines, want 60:\n%s", what, len(numbered), strings.Join(out, "\n"))
	}
}

// taskPods lists the pods of the task whose pod is given.
func taskPods(t *testing.T, cs *kubernetes.Clientset, pod *corev1.Pod) []corev1.Pod {
	t.Helper()
	pods, err := cs.CoreV1().Pods(pod.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: labelTask + "=" + pod.Labels[labelTask]})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// seenRunningWithOutput waits for the task's pod, and for output (a line
// containing want, if given) to be readable from the API and to have come
// over the websocket while the pod is still running. It returns the pod.
func seenRunningWithOutput(t *testing.T, a *api, ws *wsLog, cs *kubernetes.Clientset, projectID, taskID int64, want string) *corev1.Pod {
	t.Helper()
	has := func(lines []string) bool {
		return len(lines) > 0 && (want == "" || slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, want) }))
	}
	deadline := time.Now().Add(4 * time.Minute)
	var pod *corev1.Pod
	for time.Now().Before(deadline) {
		if pod == nil {
			pod = taskPod(t, cs, taskID)
		}
		if pod != nil {
			cur, err := cs.CoreV1().Pods(pod.Namespace).Get(t.Context(), pod.Name, metav1.GetOptions{})
			if err == nil && cur.Status.Phase == corev1.PodRunning {
				out, err := a.output(projectID, taskID)
				if err == nil && has(out) && has(ws.of(taskID)) {
					// Still running after both reads: the line reached the
					// API and the websocket while the pod ran.
					if again, err := cs.CoreV1().Pods(pod.Namespace).Get(t.Context(), pod.Name, metav1.GetOptions{}); err == nil && again.Status.Phase == corev1.PodRunning {
						return again
					}
				}
			}
			if err == nil && (cur.Status.Phase == corev1.PodSucceeded || cur.Status.Phase == corev1.PodFailed) {
				out, _ := a.output(projectID, taskID)
				t.Fatalf("task %d's pod %s finished (%s) before its output %q was seen; output:\n%s", taskID, pod.Name, describe(cur), want, strings.Join(out, "\n"))
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	desc := "no pod"
	if pod != nil {
		desc = describe(pod)
	}
	t.Fatalf("task %d: no output %q from a running pod within the limit (%s)", taskID, want, desc)
	return nil
}

// taskPod finds the pod of a task by id: the Task object carries the id
// as a label, and its pods carry the Task's name.
func taskPod(t *testing.T, cs *kubernetes.Clientset, taskID int64) *corev1.Pod {
	t.Helper()
	var tasks struct {
		Items []metav1.PartialObjectMetadata `json:"items"`
	}
	raw, err := cs.RESTClient().Get().AbsPath("/apis/automation.bastion.dev/v1alpha1/tasks").
		Param("labelSelector", fmt.Sprintf("%s=%d", labelID, taskID)).DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &tasks); err != nil {
		t.Fatal(err)
	}
	if len(tasks.Items) != 1 {
		return nil
	}
	tk := tasks.Items[0]
	pods, err := cs.CoreV1().Pods(tk.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: labelTask + "=" + tk.Name})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		return nil
	}
	return &pods.Items[0]
}

// checkPod: a Job's pod, in a project namespace, with no service-account
// token, and only its task's Secrets mounted.
func checkPod(t *testing.T, cs *kubernetes.Clientset, pod *corev1.Pod) {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Get(t.Context(), pod.Namespace, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels[labelProject] == "" || pod.Namespace == releaseNS {
		t.Fatalf("task pod %s/%s is not in a project namespace (labels %v)", pod.Namespace, pod.Name, ns.Labels)
	}
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.Kind != "Job" {
		t.Fatalf("task pod %s is not a Job's (owner %+v)", pod.Name, owner)
	}
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Fatalf("task pod %s may mount a service-account token", pod.Name)
	}
	for _, v := range pod.Spec.Volumes {
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil {
					t.Fatalf("task pod %s has a service-account token volume %s", pod.Name, v.Name)
				}
			}
		}
	}
	for _, c := range pod.Spec.Containers {
		for _, m := range c.VolumeMounts {
			if strings.HasPrefix(m.MountPath, "/var/run/secrets/kubernetes.io") {
				t.Fatalf("task pod %s mounts %s", pod.Name, m.MountPath)
			}
		}
	}
	taskName := pod.Labels[labelTask]
	for _, v := range pod.Spec.Volumes {
		if v.Secret == nil {
			continue
		}
		s, err := cs.CoreV1().Secrets(pod.Namespace).Get(t.Context(), v.Secret.SecretName, metav1.GetOptions{})
		if gone(err) && strings.HasPrefix(v.Secret.SecretName, taskName) {
			continue // the task's own input, already cleaned up as its run ended
		}
		if err != nil {
			t.Fatalf("task pod %s mounts Secret %s: %v", pod.Name, v.Secret.SecretName, err)
		}
		for k, val := range s.Data {
			if strings.Contains(string(val), unusedSecret) || (strings.Contains(string(val), hookSecret)) {
				t.Fatalf("task pod %s of %s mounts Secret %s whose %s holds a key no task uses", pod.Name, taskName, s.Name, k)
			}
		}
		// The task's own input, or the Secret of the environment its
		// template names (which holds envSecret); nothing else.
		ofEnvironment := false
		for _, val := range s.Data {
			ofEnvironment = ofEnvironment || strings.Contains(string(val), envSecret)
		}
		if !strings.HasPrefix(s.Name, taskName) && !ownedBy(s.OwnerReferences, taskName) && !ofEnvironment {
			t.Fatalf("task pod %s of %s mounts Secret %s, which is neither its input nor its environment's", pod.Name, taskName, s.Name)
		}
	}
}

func ownedBy(refs []metav1.OwnerReference, name string) bool {
	for _, r := range refs {
		if r.Name == name {
			return true
		}
	}
	return false
}

func mustOutput(t *testing.T, a *api, projectID, taskID int64, want ...string) []string {
	t.Helper()
	out, err := a.output(projectID, taskID)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !slices.ContainsFunc(out, func(l string) bool { return strings.Contains(l, w) }) {
			t.Fatalf("task %d's output lacks %q:\n%s", taskID, w, strings.Join(out, "\n"))
		}
	}
	for _, l := range out {
		if strings.Contains(l, envSecret) || strings.Contains(l, unusedSecret) || strings.Contains(l, hookSecret) {
			t.Fatalf("task %d's output shows a secret: %q", taskID, l)
		}
	}
	return out
}

// sameOnWebsocket: the websocket delivered every stored line, in order.
func sameOnWebsocket(t *testing.T, ws *wsLog, taskID int64, stored []string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && len(ws.of(taskID)) < len(stored) {
		time.Sleep(100 * time.Millisecond)
	}
	if got := ws.of(taskID); strings.Join(got, "\n") != strings.Join(stored, "\n") {
		t.Fatalf("task %d: websocket lines (%d) differ from the stored output (%d):\nws:\n%s\nstored:\n%s",
			taskID, len(got), len(stored), strings.Join(got, "\n"), strings.Join(stored, "\n"))
	}
}

// waitGone waits until the pod (and, for a task pod, its Job) is deleted.
func waitGone(t *testing.T, cs *kubernetes.Clientset, pod *corev1.Pod, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	job := ""
	if o := metav1.GetControllerOf(pod); o != nil && o.Kind == "Job" {
		job = o.Name
	}
	for time.Now().Before(deadline) {
		_, perr := cs.CoreV1().Pods(pod.Namespace).Get(t.Context(), pod.Name, metav1.GetOptions{})
		jobGone := true
		if job != "" {
			_, err := cs.BatchV1().Jobs(pod.Namespace).Get(t.Context(), job, metav1.GetOptions{})
			jobGone = gone(err)
		}
		if gone(perr) && jobGone {
			return
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("pod %s/%s (job %q) still there after %s", pod.Namespace, pod.Name, job, limit)
}

// waitTerminated waits until the pod is no longer running: deleted, or
// with every container terminated.
func waitTerminated(t *testing.T, cs *kubernetes.Clientset, pod *corev1.Pod, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		cur, err := cs.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if gone(err) || (err == nil && (cur.Status.Phase == corev1.PodFailed || cur.Status.Phase == corev1.PodSucceeded)) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("the stopped task's pod %s is still running after %s", pod.Name, limit)
}

// waitService waits until Bastion answers through the Service's ClusterIP:
// kube-proxy rejects the address until the ready pods' endpoints have
// reached it. Any other answer is not Bastion's: before kube-proxy's
// rules exist the address is routed off the node, and this machine's
// network answers every address's port 80 itself (an empty 404). Its
// client keeps no connection, so none that reached elsewhere is reused.
func waitService(t *testing.T, base string, limit time.Duration) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(limit)
	last := ""
	for time.Now().Before(deadline) {
		resp, err := c.Get(base + "/api/auth/login")
		if err != nil {
			last = err.Error()
		} else {
			var options struct {
				Password *bool `json:"login_with_password"`
			}
			decodeErr := json.NewDecoder(resp.Body).Decode(&options)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && decodeErr == nil && options.Password != nil {
				return
			}
			last = fmt.Sprintf("%s %v (not Bastion's sign-in options)", resp.Status, resp.Header)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("Bastion does not answer at its Service %s after %s; the last answer: %s", base, limit, last)
}

// pingThroughService sends GET /api/ping to base every 20 ms, each on a
// new connection (kube-proxy picks a pod per connection), until the
// returned function is called; that returns how many were answered 200
// and what the others got.
func pingThroughService(t *testing.T, base string) func() (int, []string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	ctx, cancel := context.WithCancel(t.Context())
	var answered int
	var failed []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			resp, err := client.Get(base + "/api/ping")
			switch {
			case err != nil:
				failed = append(failed, fmt.Sprintf("%s: %v", time.Now().Format("15:04:05.000"), err))
			case resp.StatusCode != http.StatusOK:
				failed = append(failed, fmt.Sprintf("%s: %s", time.Now().Format("15:04:05.000"), resp.Status))
			default:
				answered++
			}
			if resp != nil {
				resp.Body.Close()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return func() (int, []string) {
		cancel()
		<-done
		return answered, failed
	}
}
