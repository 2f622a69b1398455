package packaging

import (
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/install.md gives the commands these tests stand behind: the Helm
// install of chart_test.go (release bastion in bastion-system), the
// password command NOTES.txt prints, the kustomize apply of
// kustomize_test.go (as `make deploy` runs it) and the label that the
// uninstall section deletes the CRDs by.
func TestInstallDoc_givesTheCommandsTheTestsRun(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	const kustomizeApply = "kubectl apply --server-side -k config/default"
	for _, command := range []string{
		helmInstall, readAdminSecret, kustomizeApply,
		"kubectl -n bastion-system port-forward svc/bastion 3000:80",
		"kubectl delete crd -l app.kubernetes.io/name=bastion",
		"kubectl -n bastion-system delete pvc bastion-data",
		"kubectl -n bastion-system delete secret bastion-initial-admin",
	} {
		if !strings.Contains(doc, command) {
			t.Errorf("docs/install.md lacks %q", command)
		}
	}
	if !strings.Contains(string(makefile), "$(KUBECTL) apply --server-side -k config/default") {
		t.Error("make deploy no longer runs the documented kustomize command")
	}

	// The names those commands use are the ones the chart renders.
	objs, _ := renderObjects(t, nil)
	find(t, objs, "Secret", "bastion-initial-admin")
	find(t, objs, "Service", "bastion")
	find(t, objs, "PersistentVolumeClaim", "bastion-data")
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" && o.GetLabels()["app.kubernetes.io/name"] != "bastion" {
			t.Errorf("CRD %s lacks the label the uninstall command selects", o.GetName())
		}
	}
}

// TestInstallDoc_trustedProxiesExampleIsTheProxyNotThePodNetwork: whoever
// is listed in trustedProxies picks the address a sign-in counts against.
// Task pods reach the manager's port, so the example the install guide and
// the chart's values give must be single proxy addresses, never a range
// such as the pod network, and both must say so.
func TestInstallDoc_trustedProxiesExampleIsTheProxyNotThePodNetwork(t *testing.T) {
	doc := readRepoFile(t, "docs", "install.md")
	values := readRepoFile(t, "config", "helm", "bastion", "values.yaml")
	examples := map[string]string{}
	if m := regexp.MustCompile(`trustedProxies=\{([^}]*)\}`).FindStringSubmatch(doc); m != nil {
		examples["docs/install.md"] = m[1]
	}
	if m := regexp.MustCompile(`e\.g\. \[([^\]]*)\]`).FindStringSubmatch(values); m != nil {
		examples["values.yaml"] = strings.ReplaceAll(m[1], `"`, "")
	}
	if len(examples) != 2 {
		t.Fatalf("found the trustedProxies example in %v only; want docs/install.md and values.yaml", examples)
	}
	for where, list := range examples {
		for _, entry := range strings.Split(list, ",") {
			entry = strings.TrimSpace(entry)
			if _, err := netip.ParseAddr(entry); err != nil {
				t.Errorf("%s suggests trustedProxies entry %q: not a single proxy address (a range may hold task pods, which could then forge X-Forwarded-For)", where, entry)
			}
		}
	}
	for where, text := range map[string]string{"docs/install.md": doc, "values.yaml": values} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), "range that holds task") {
			t.Errorf("%s does not warn against trusting a range that holds task pods", where)
		}
	}
}

// readRepoFile is a file of the checkout, as text.
func readRepoFile(t *testing.T, path ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(append([]string{repoRoot}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
