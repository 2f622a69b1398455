package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/config/crd"
	"github.com/bastion-dev/bastion/controllers"
	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/nsaccess"
	"github.com/bastion-dev/bastion/internal/runspec"
	"github.com/bastion-dev/bastion/internal/users"
)

// TestManager_createsTheInitialAdminAndServesEveryMetricAfterATask starts
// `bastion manager` (its flags, newManager, Jobs as launcher) on envtest,
// the way the Helm chart runs it: as its ServiceAccount, with only the RBAC
// of config/rbac (so Secrets only where it binds its namespace role);
// the initial admin comes from a password
// file, a sample task runs as a Job (the pod and the Job's end are played
// as the kubelet and job controller would), its runner streams lines over
// HTTP, a console client holds a websocket, and the metrics endpoint then
// reports every Bastion metric with the value those events imply.
func TestManager_createsTheInitialAdminAndServesEveryMetricAfterATask(t *testing.T) {
	env := &envtest.Environment{}
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	env.CRDInstallOptions.CRDs = crds
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest (is KUBEBUILDER_ASSETS set?): %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })

	dir := t.TempDir()
	passwordFile := filepath.Join(dir, "password")
	if err := os.WriteFile(passwordFile, []byte("Initial-Secret-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	policyFile := filepath.Join(dir, "runner-egress.yaml")
	if err := os.WriteFile(policyFile, []byte(runnerEgress), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: newScheme()})
	if err != nil {
		t.Fatal(err)
	}
	managerCfg := asManagerServiceAccount(t, c, cfg)
	metricsAddr := freeAddr(t)
	opts, demoListen, err := parseManagerFlags([]string{
		"--namespace-role", "bastion-namespace", "--service-account", "bastion-manager",
		"--initial-admin-password-file", passwordFile, "--runner-network-policy", policyFile,
		"--metrics-bind-address", metricsAddr, "--health-probe-bind-address", "0",
		"--store", "sqlite://" + filepath.Join(dir, "bastion.db"),
		"--namespace", "bastion-system", "--demo-repo-listen", "",
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if demoListen != "" || opts.InitialAdmin.Login != "admin" || opts.InitialAdmin.Password != "Initial-Secret-1" {
		t.Fatalf("flags parsed to demo %q, admin %q", demoListen, opts.InitialAdmin.Login)
	}
	ln := loopback(t)
	opts.PublicURL = "http://" + ln.Addr().String()
	mgr, err := newManager(managerCfg, ln, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	accounts := &users.Store{Client: c, Namespace: "bastion-system", IDs: &ids.Allocator{Client: c}}
	waitFor(t, "the initial admin", func() error {
		admin, err := accounts.FindByLogin(ctx, "admin")
		if err != nil {
			return err
		}
		if !admin.Spec.Admin {
			return errors.New("admin is not an administrator")
		}
		if ok, err := accounts.CheckPassword(ctx, admin, "Initial-Secret-1"); !ok {
			return fmt.Errorf("the password file's password does not sign in (%v)", err)
		}
		return nil
	})

	// A console client: signed in, with a websocket open until the end.
	browser := signIn(t, opts.PublicURL, "admin", "Initial-Secret-1")
	ws := openWebsocket(t, opts.PublicURL, browser)
	defer ws.Close()

	applySamples(t, c, "00-project.yaml", "10-keys.yaml", "20-repository.yaml", "21-inventory.yaml",
		"22-environment.yaml", "30-templates.yaml", "50-task.yaml")
	task := &bastionv1.Task{}
	taskKey := client.ObjectKey{Namespace: "bastion-demo", Name: "ping-1"}
	job := &batchv1.Job{}
	waitFor(t, "the task's Job", func() error {
		if err := c.Get(ctx, taskKey, task); err != nil {
			return err
		}
		if task.Status.RunName == "" {
			return errors.New("no run yet")
		}
		return c.Get(ctx, client.ObjectKey{Namespace: taskKey.Namespace, Name: task.Status.RunName}, job)
	})
	// The project's task pods may only reach the manager's stream port.
	policy := &networkingv1.NetworkPolicy{}
	must(t, c.Get(ctx, client.ObjectKey{Namespace: "bastion-demo", Name: "bastion-runners"}, policy))
	if got := policy.Spec.PodSelector.MatchLabels["app.kubernetes.io/name"]; got != "bastion-runner" || len(policy.Spec.Ingress) != 0 ||
		len(policy.Spec.Egress) != 1 || policy.Spec.Egress[0].Ports[0].Port.IntValue() != 3000 || len(policy.Spec.PolicyTypes) != 2 {
		t.Fatalf("runner NetworkPolicy: %+v", policy.Spec)
	}
	if image := job.Spec.Template.Spec.Containers[0].Image; image != "bastion-runner-ansible:latest" {
		t.Fatalf("the ansible task runs %s", image)
	}

	// Least privilege: the manager bound its namespace role in the
	// project's namespace, follows the keys there (they got ids), and may
	// read no Secret of any other namespace.
	binding := &rbacv1.RoleBinding{}
	must(t, c.Get(ctx, client.ObjectKey{Namespace: "bastion-demo", Name: nsaccess.BindingName}, binding))
	if binding.RoleRef.Name != "bastion-namespace" || len(binding.Subjects) != 1 || binding.Subjects[0].Name != "bastion-manager" {
		t.Fatalf("the project's RoleBinding: %+v %+v", binding.RoleRef, binding.Subjects)
	}
	waitFor(t, "ids on the sample keys", func() error {
		keys := &corev1.SecretList{}
		if err := c.List(ctx, keys, client.InNamespace("bastion-demo"), client.HasLabels{bastionv1.LabelKeyType}); err != nil {
			return err
		}
		if len(keys.Items) == 0 {
			return errors.New("no keys")
		}
		for _, key := range keys.Items {
			if _, ok := ids.FromLabels(&key); !ok {
				return fmt.Errorf("key %s has no id", key.Name)
			}
		}
		return nil
	})
	for _, ns := range []string{"default", "kube-system"} {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               managerCfg.Impersonate.UserName,
			Groups:             managerCfg.Impersonate.Groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "secrets"},
		}}
		must(t, c.Create(ctx, review))
		if review.Status.Allowed {
			t.Fatalf("the manager may read Secrets in %s", ns)
		}
	}
	// A project created through the API is granted before its first write:
	// a key (a Secret) right after the project.
	project := postJSON(t, browser, opts.PublicURL+"/api/projects", `{"name":"Granted at once"}`, http.StatusCreated)
	var created struct{ ID int64 }
	must(t, json.Unmarshal(project, &created))
	postJSON(t, browser, fmt.Sprintf("%s/api/project/%d/keys", opts.PublicURL, created.ID),
		`{"name":"deploy","type":"login_password","login_password":{"login":"ops","password":"Canary-Pass-1"}}`, http.StatusNoContent)

	// The kubelet starts the pod; the runner streams three lines.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-pod", Namespace: job.Namespace, Labels: job.Spec.Template.Labels},
		Spec:       job.Spec.Template.Spec,
	}
	must(t, c.Create(ctx, pod))
	pod.Status.Phase = corev1.PodRunning
	must(t, c.Status().Update(ctx, pod))
	waitForStatus(t, c, taskKey, bastionv1.TaskRunning)
	input := &corev1.Secret{}
	must(t, c.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: task.Status.RunName + "-input"}, input))
	now := time.Now().UTC().Format(time.RFC3339Nano)
	batch := fmt.Sprintf(`{"lines":[{"seq":1,"time":%q,"output":"one"},{"seq":2,"time":%q,"output":"two"},{"seq":3,"time":%q,"output":"three"}]}`, now, now, now)
	req, _ := http.NewRequest(http.MethodPost, opts.PublicURL+"/api/runner/tasks/bastion-demo/ping-1/events", strings.NewReader(batch))
	req.Header.Set("Authorization", "Bearer "+string(input.Data[runspec.TokenFile]))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"ack":3`) {
		t.Fatalf("runner batch: %d %s", resp.StatusCode, body)
	}

	// The job controller marks the Job complete; the task succeeds.
	waitFor(t, "the Job's completion", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return err
		}
		end := metav1.Now()
		start := metav1.NewTime(end.Add(-time.Second))
		job.Status.StartTime, job.Status.CompletionTime, job.Status.Succeeded = &start, &end, 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: end, LastProbeTime: end},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: end, LastProbeTime: end},
		}
		return c.Status().Update(ctx, job)
	})
	waitForStatus(t, c, taskKey, bastionv1.TaskSuccess)
	// Finished once the run's finalizer has gone (the history's stays).
	waitFor(t, "the task's run finalizer to go", func() error {
		must(t, c.Get(ctx, taskKey, task))
		if slices.Contains(task.Finalizers, controllers.TaskFinalizer) {
			return fmt.Errorf("finalizers %v", task.Finalizers)
		}
		return nil
	})

	want := map[string]func(float64) bool{
		// controller-runtime's own, for the task controller.
		`controller_runtime_reconcile_total{controller="task",result="success"}`: positive,
		`bastion_tasks{status="success"}`:                                        equals(1),
		`bastion_tasks{status="running"}`:                                        equals(0),
		`bastion_task_queue_length{namespace="bastion-demo"}`:                    equals(0),
		`bastion_task_duration_seconds_count{status="success"}`:                  equals(1),
		`bastion_task_output_lines_total`:                                        equals(3),
		`bastion_websocket_clients`:                                              equals(1),
		`bastion_store_latency_seconds_count{operation="append_lines"}`:          positive,
		`bastion_store_latency_seconds_count{operation="put_task_summary"}`:      positive,
	}
	waitFor(t, "every metric", func() error {
		samples, err := scrape("http://" + metricsAddr + "/metrics")
		if err != nil {
			return err
		}
		for series, ok := range want {
			value, found := samples[series]
			if !found {
				return fmt.Errorf("%s is missing", series)
			}
			if !ok(value) {
				return fmt.Errorf("%s is %v", series, value)
			}
		}
		return nil
	})
}

// runnerEgress is what the Helm chart writes for --runner-network-policy.
const runnerEgress = `egress:
- to:
  - namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: bastion-system}
    podSelector:
      matchLabels: {app.kubernetes.io/name: bastion, app.kubernetes.io/component: manager}
  ports:
  - {protocol: TCP, port: 3000}
`

func positive(v float64) bool { return v > 0 }

func equals(want float64) func(float64) bool { return func(v float64) bool { return v == want } }

// scrape reads a Prometheus text exposition into series → value.
func scrape(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	samples := map[string]float64{}
	line := regexp.MustCompile(`^([a-z_:]+(?:\{[^}]*\})?) (\S+)$`)
	for _, l := range strings.Split(string(data), "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			if v, err := strconv.ParseFloat(m[2], 64); err == nil {
				samples[m[1]] = v
			}
		}
	}
	return samples, nil
}

func signIn(t *testing.T, base, login, password string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	body := fmt.Sprintf(`{"auth":%q,"password":%q}`, login, password)
	resp, err := browser.Post(base+"/api/auth/login", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-in: %d", resp.StatusCode)
	}
	return browser
}

func openWebsocket(t *testing.T, base string, browser *http.Client) *websocket.Conn {
	t.Helper()
	u, _ := url.Parse(base)
	header := http.Header{}
	for _, c := range browser.Jar.Cookies(u) {
		header.Add("Cookie", c.Name+"="+c.Value)
	}
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/api/ws", header)
	if err != nil {
		t.Fatalf("websocket: %v", err)
	}
	return conn
}

// postJSON posts body and fails the test unless the answer is want.
func postJSON(t *testing.T, browser *http.Client, url, body string, want int) []byte {
	t.Helper()
	resp, err := browser.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, answer)
	}
	return answer
}

// asManagerServiceAccount installs config/rbac (what `make deploy`
// applies: the generated roles and their bindings) and returns cfg acting
// as the manager's ServiceAccount, bastion-system/bastion-manager.
func asManagerServiceAccount(t *testing.T, c client.Client, cfg *rest.Config) *rest.Config {
	t.Helper()
	must(t, client.IgnoreAlreadyExists(c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bastion-system"}})))
	for _, name := range []string{"service_account.yaml", "role.yaml", "role_binding.yaml", "namespace/role.yaml",
		"namespace_role_binding.yaml", "bind_namespace_role.yaml", "namespace_policy.yaml", "leader_election_role.yaml"} {
		for _, obj := range decodeFile(t, filepath.Join("..", "..", "config", "rbac", name)) {
			if obj.GetNamespace() == "" && !strings.HasPrefix(obj.GetKind(), "Cluster") && !strings.HasPrefix(obj.GetKind(), "ValidatingAdmission") {
				obj.SetNamespace("bastion-system") // kustomize's `namespace:`
			}
			must(t, c.Create(context.Background(), obj))
		}
	}
	managerCfg := rest.CopyConfig(cfg)
	managerCfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:bastion-system:bastion-manager",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:bastion-system", "system:authenticated"},
	}
	return managerCfg
}

func decodeFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// applySamples creates the objects of the named config/samples files.
func applySamples(t *testing.T, c client.Client, files ...string) {
	t.Helper()
	for _, name := range files {
		for _, obj := range decodeFile(t, filepath.Join("..", "..", "config", "samples", name)) {
			waitFor(t, name+": "+obj.GetKind()+" "+obj.GetName(), func() error {
				// The project's namespace may still be on its way.
				return client.IgnoreAlreadyExists(c.Create(context.Background(), obj.DeepCopy()))
			})
		}
	}
}

func waitForStatus(t *testing.T, c client.Client, key client.ObjectKey, want bastionv1.TaskStatusValue) {
	t.Helper()
	waitFor(t, "task status "+string(want), func() error {
		task := &bastionv1.Task{}
		if err := c.Get(context.Background(), key, task); err != nil {
			return err
		}
		if task.Status.Status != want {
			return fmt.Errorf("status %q (%s)", task.Status.Status, task.Status.Message)
		}
		return nil
	})
}

// waitFor polls check until it succeeds or 30 seconds pass.
func waitFor(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		<-time.After(100 * time.Millisecond)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// freeAddr is a loopback address no one listens on (for a server that
// binds its own address, such as the metrics server).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// A typo in the runners' egress rules is refused at start-up, never
// applied as a policy that blocks or allows something else.
func TestManagerFlags_refuseAnUnknownFieldInTheRunnerNetworkPolicy(t *testing.T) {
	file := filepath.Join(t.TempDir(), "egress.yaml")
	must(t, os.WriteFile(file, []byte("egres:\n- {}\n"), 0o600))
	_, _, err := parseManagerFlags([]string{"--runner-network-policy", file}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `unknown field "egres"`) {
		t.Fatalf("got %v", err)
	}
}

// An empty password file would create an admin no one can sign in as.
func TestManagerFlags_refuseAnEmptyInitialAdminPassword(t *testing.T) {
	file := filepath.Join(t.TempDir(), "password")
	must(t, os.WriteFile(file, []byte("\n"), 0o600))
	_, _, err := parseManagerFlags([]string{"--initial-admin-password-file", file}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "the initial admin password file is empty") {
		t.Fatalf("got %v", err)
	}
}

// The chart's runner.imagePullPolicy reaches the Jobs; anything but the
// three Kubernetes policies is refused before a Job could carry it.
func TestManagerFlags_runnerImagePullPolicy(t *testing.T) {
	opts, _, err := parseManagerFlags([]string{"--runner-image-pull-policy", "Never"}, io.Discard)
	if err != nil || opts.JobOptions.ImagePullPolicy != corev1.PullNever {
		t.Fatalf("got %v, %q", err, opts.JobOptions.ImagePullPolicy)
	}
	_, _, err = parseManagerFlags([]string{"--runner-image-pull-policy", "sometimes"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `want Always, IfNotPresent or Never, not "sometimes"`) {
		t.Fatalf("got %v", err)
	}
}

// --shutdown-delay: none unless it is said; a negative or over-a-minute
// delay is refused before the manager starts.
func TestManagerFlags_shutdownDelay(t *testing.T) {
	opts, _, err := parseManagerFlags(nil, io.Discard)
	if err != nil || opts.ShutdownDelay != 0 {
		t.Fatalf("default: got %v, %s", err, opts.ShutdownDelay)
	}
	opts, _, err = parseManagerFlags([]string{"--shutdown-delay", "5s"}, io.Discard)
	if err != nil || opts.ShutdownDelay != 5*time.Second {
		t.Fatalf("5s: got %v, %s", err, opts.ShutdownDelay)
	}
	for _, bad := range []string{"-1s", "61s", "5"} {
		if _, _, err := parseManagerFlags([]string{"--shutdown-delay", bad}, io.Discard); err == nil {
			t.Errorf("--shutdown-delay %s was taken", bad)
		}
	}
}

// --task-input-grace: how long a task waits for its template and inputs,
// two minutes unless it is said.
func TestManagerFlags_taskInputGrace(t *testing.T) {
	opts, _, err := parseManagerFlags(nil, io.Discard)
	if err != nil || opts.TaskInputGrace != 2*time.Minute {
		t.Fatalf("default: got %v, %s", err, opts.TaskInputGrace)
	}
	opts, _, err = parseManagerFlags([]string{"--task-input-grace", "30s"}, io.Discard)
	if err != nil || opts.TaskInputGrace != 30*time.Second {
		t.Fatalf("got %v, %s", err, opts.TaskInputGrace)
	}
}

// --store-file reads the DSN from a mounted Secret (the chart's
// PostgreSQL store), so the password is in no process's argv; the
// trailing newline of the file is not part of it.
func TestManagerFlags_storeFileReadsTheDSN(t *testing.T) {
	file := filepath.Join(t.TempDir(), "dsn")
	const dsn = "postgres://bastion:pw-in-a-file@db:5432/bastion?sslmode=require"
	must(t, os.WriteFile(file, []byte(dsn+"\n"), 0o600))
	opts, _, err := parseManagerFlags([]string{"--store-file", file}, io.Discard)
	if err != nil || opts.StoreDSN != dsn {
		t.Fatalf("got %v, %q", err, opts.StoreDSN)
	}
	must(t, os.WriteFile(file, nil, 0o600))
	if _, _, err := parseManagerFlags([]string{"--store-file", file}, io.Discard); err == nil || !strings.Contains(err.Error(), "the store DSN file is empty") {
		t.Fatalf("got %v", err)
	}
}

// The chart's tasks.resources reach the Jobs through these flags: each
// sets its request or limit, an empty one removes it, the others keep
// their defaults, and a limit below its request is refused before any Job
// could carry it.
func TestManagerFlags_taskResources(t *testing.T) {
	opts, _, err := parseManagerFlags([]string{"--task-cpu-request=250m", "--task-memory-limit=4Gi", "--task-cpu-limit="}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	r := opts.JobOptions.Resources
	cpuReq, memReq, memLim := r.Requests[corev1.ResourceCPU], r.Requests[corev1.ResourceMemory], r.Limits[corev1.ResourceMemory]
	if cpuReq.String() != "250m" || memReq.String() != "256Mi" || memLim.String() != "4Gi" {
		t.Errorf("resources %+v", r)
	}
	if _, ok := r.Limits[corev1.ResourceCPU]; ok {
		t.Errorf("an empty --task-cpu-limit left a limit: %+v", r)
	}
	if defaults := launch.DefaultJobOptions().Resources; defaults.Limits.Cpu().String() != "2" {
		t.Errorf("the flags changed the defaults: %+v", defaults)
	}
	for args, want := range map[string]string{
		"--task-memory-limit=100Mi": "memory limit 100Mi is below its request 256Mi",
		"--task-cpu-request=lots":   `want a positive quantity such as 100m, not "lots"`,
	} {
		if _, _, err := parseManagerFlags([]string{args}, io.Discard); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", args, err, want)
		}
	}
}

func TestManagerFlags_trustedProxiesAndExternalURL(t *testing.T) {
	opts, _, err := parseManagerFlags([]string{"--trusted-proxies", "10.0.0.0/8, 192.168.1.7", "--external-url", "https://bastion.example.com"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.TrustedProxies) != 2 || opts.TrustedProxies[0].String() != "10.0.0.0/8" || opts.TrustedProxies[1].String() != "192.168.1.7/32" {
		t.Fatalf("trusted proxies = %v", opts.TrustedProxies)
	}
	if opts.PublicURL != "https://bastion.example.com" {
		t.Fatalf("--external-url set the public URL to %q", opts.PublicURL)
	}
	if _, _, err := parseManagerFlags([]string{"--trusted-proxies", "the-proxy"}, io.Discard); err == nil || !strings.Contains(err.Error(), "the-proxy") {
		t.Fatalf("a trusted proxy that is no address: %v, want an error naming it", err)
	}
}
