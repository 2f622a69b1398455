package e2e

import (
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/demorepo"
)

// The demo project, made through the API of a real `bastion dev`, runs
// every one of its templates with what the machine has: the repository
// comes from the manager itself over git://, the playbook runs against the
// runner (connection: local), and a successful build deploys by itself.
func TestDev_demoProjectRunsEveryTemplateOffline(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		t.Fatal("ansible-playbook is not in PATH (Debian's ansible-core package)")
	}
	// The runner gives git a clean environment anyway; cleanGitEnv keeps
	// the test machine's git configuration away from everything else too.
	// The proxies lead nowhere, so any download over http(s) would fail the
	// tasks (Go never proxies loopback, so the runners still reach dev).
	env := append([]string{"NO_PROXY=", "no_proxy="}, cleanGitEnv...)
	for _, proxy := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		env = append(env, proxy+"=http://127.0.0.1:9")
	}

	dataDir := t.TempDir()
	dev := startDevEnv(t, dataDir, env)
	dev.waitReady()
	kubeconfig := dev.bannerValue("kubeconfig")
	repoURL := dev.bannerValue("demo repo")
	if !strings.HasPrefix(repoURL, "git://127.0.0.1:") || !strings.HasSuffix(repoURL, "/demo.git") {
		t.Fatalf("banner's demo repo is %q", repoURL)
	}

	api := signedIn(t, dev.url, "admin", dev.bannerValue("password"))
	var project struct {
		ID int64 `json:"id"`
	}
	api.must("POST", "/api/projects", map[string]any{"name": "Demo", "demo": true}, http.StatusCreated, &project)
	if project.ID == 0 {
		t.Fatalf("POST /api/projects demo answered no id")
	}
	projectID := fmt.Sprint(project.ID)
	name := kubectlOut(t, kubeconfig, "get", "projects", "-l", "automation.bastion.dev/id="+projectID, "-o", "jsonpath={.items[0].metadata.name}")
	ns := "bastion-" + name

	// Each demo template by its console name → its object name.
	templates := map[string]string{}
	listing := kubectlOut(t, kubeconfig, "get", "templates", "-n", ns, "-o", `jsonpath={range .items[*]}{.spec.displayName}={.metadata.name}{"\n"}{end}`)
	for _, line := range strings.Split(strings.TrimSpace(listing), "\n") {
		display, object, _ := strings.Cut(line, "=")
		templates[display] = object
	}
	if got := kubectlOut(t, kubeconfig, "get", "repositories", "-n", ns, "-o", "jsonpath={.items[0].spec.gitURL}"); got != repoURL {
		t.Fatalf("the demo repository's URL is %q, the banner says %q", got, repoURL)
	}

	var tasks strings.Builder
	for task, template := range map[string]string{"ansible-1": demorepo.AnsibleTemplate, "bash-1": demorepo.BashTemplate, "build-1": demorepo.BuildTemplate} {
		if templates[template] == "" {
			t.Fatalf("no template %q in %v", template, templates)
		}
		fmt.Fprintf(&tasks, "---\napiVersion: automation.bastion.dev/v1alpha1\nkind: Task\nmetadata: {name: %s, namespace: %s}\nspec:\n  templateRef: {name: %s}\n", task, ns, templates[template])
	}
	if out, err := kubectl(t, kubeconfig, tasks.String(), "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}

	// The deploy is the one autorun queued after the build.
	var deploy string
	eventually(t, 120*time.Second, "the build's autorun deploy queued", func() error {
		deploy = kubectlOut(t, kubeconfig, "get", "tasks", "-n", ns, "-l", "automation.bastion.dev/autorun-of=build-1", "-o", "jsonpath={.items[*].metadata.name}")
		if deploy == "" || strings.Contains(deploy, " ") {
			return fmt.Errorf("autorun tasks of build-1: %q", deploy)
		}
		return nil
	})
	repo, err := demorepo.Build()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ version, line string }{
		"ansible-1": {"", `"msg": "Hello, Bastion, from localhost"`},
		"bash-1":    {"", "argument: who=Bastion"},
		"build-1":   {demorepo.StartVersion, "Built demo-app " + demorepo.StartVersion},
		deploy:      {demorepo.StartVersion, "Deployed demo-app " + demorepo.StartVersion},
	}
	for task, w := range want {
		field := func(jsonpath string) string {
			return kubectlOut(t, kubeconfig, "get", "task", task, "-n", ns, "-o", "jsonpath="+jsonpath)
		}
		eventually(t, 180*time.Second, task+" succeeded", func() error {
			if got := field("{.status.status}|{.status.message}"); got != "success|" {
				return fmt.Errorf("%s is %q", task, got)
			}
			return nil
		})
		if got := field("{.status.version}|{.status.commitHash}"); got != w.version+"|"+repo.Commit {
			t.Errorf("%s: version|commit = %q, want %q", task, got, w.version+"|"+repo.Commit)
		}
		taskID := field("{.metadata.labels.automation\\.bastion\\.dev/id}")
		output := storedOutput(t, filepath.Join(dataDir, "bastion.db"), projectID, taskID)
		if !containsLine(output, w.line) {
			t.Errorf("%s's output has no line with %q:\n%s", task, w.line, strings.Join(output, "\n"))
		}
	}
}

// kubectlOut runs kubectl and fails the test if it fails.
func kubectlOut(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	out, err := kubectl(t, kubeconfig, "", args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}
