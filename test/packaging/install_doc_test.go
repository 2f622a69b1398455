package packaging

import (
	"os"
	"path/filepath"
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
