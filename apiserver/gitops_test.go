package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/bastion-dev/bastion/apiserver"
)

// GitOps (docs/gitops.md): objects that Flux or Argo CD apply, here with
// the real kubectl carrying the labels those tools set, are read-only
// through /api, and --allow-gitops-edits lets them be edited again.

// kubectl runs the envtest kubectl against the suite's apiserver with
// the harness's admin credentials; stdin, when set, is piped in.
func (e *apiEnv) kubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: e.Config.Host, CertificateAuthorityData: e.Config.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: e.Config.CertData, ClientKeyData: e.Config.KeyData, Token: e.Config.BearerToken}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	cfg.CurrentContext = "envtest"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"),
		append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// managedItem is what these tests read of any kind's answer.
type managedItem struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Title     string `json:"title"`
	ManagedBy string `json:"managed_by"`
}

// eventuallyListed waits until the list at path has an item called name
// (kubectl's objects get their id from their controller a moment later)
// and returns it.
func eventuallyListed(t *testing.T, b *browser, path, name string) managedItem {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list []managedItem
		b.must("GET", path, nil, http.StatusOK, &list)
		for _, item := range list {
			if item.Name == name || item.Title == name {
				return item
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listed %q: %+v", path, name, list)
		}
		time.Sleep(20 * time.Millisecond) // polling a real server's cache
	}
}

func TestGitOps_kubectlAppliedObjectsAreReadOnlyThroughTheAPI(t *testing.T) {
	e := startEnv(t)
	p := e.newSchedintProject(t, "GitOps")
	manifests := fmt.Sprintf(`apiVersion: automation.bastion.dev/v1alpha1
kind: View
metadata:
  name: flux-view
  namespace: %[1]s
  labels:
    kustomize.toolkit.fluxcd.io/name: bastion-apps
    kustomize.toolkit.fluxcd.io/namespace: flux-system
spec:
  title: From Flux
---
apiVersion: automation.bastion.dev/v1alpha1
kind: View
metadata:
  name: own-view
  namespace: %[1]s
  labels:
    app.kubernetes.io/managed-by: bastion
spec:
  title: Bastion's own
---
apiVersion: v1
kind: Secret
metadata:
  name: argo-key
  namespace: %[1]s
  labels:
    automation.bastion.dev/key-type: none
  annotations:
    automation.bastion.dev/display-name: From Argo
    argocd.argoproj.io/tracking-id: "bastion-keys:/Secret:%[1]s/argo-key"
type: Opaque
`, p.ns)
	e.kubectl(t, manifests, "apply", "-f", "-")

	flux := eventuallyListed(t, p.b, p.base+"/views", "From Flux")
	own := eventuallyListed(t, p.b, p.base+"/views", "Bastion's own")
	key := eventuallyListed(t, p.b, p.base+"/keys", "From Argo")
	if flux.ManagedBy != "Flux" || own.ManagedBy != "" || key.ManagedBy != "Argo CD" {
		t.Fatalf("managed_by: flux view %q, Bastion's view %q, argo key %q", flux.ManagedBy, own.ManagedBy, key.ManagedBy)
	}
	var one managedItem
	p.b.must("GET", fmt.Sprintf("%s/views/%d", p.base, flux.ID), nil, http.StatusOK, &one)
	if one.ManagedBy != "Flux" {
		t.Fatalf("GET of the Flux view: managed_by %q", one.ManagedBy)
	}

	// Edits and deletes are refused, saying where to change the object,
	// and change nothing; Bastion's own label is no GitOps manager.
	fluxPath := fmt.Sprintf("%s/views/%d", p.base, flux.ID)
	refusals := []struct{ method, path, want string }{
		{"PUT", fluxPath, "This view is managed by Flux (Kustomization flux-system/bastion-apps); change it in its Git repository"},
		{"DELETE", fluxPath, "This view is managed by Flux (Kustomization flux-system/bastion-apps)"},
		{"DELETE", fmt.Sprintf("%s/keys/%d", p.base, key.ID), "This key is managed by Argo CD (Application bastion-keys); change it in its Git repository"},
	}
	for _, r := range refusals {
		var body any
		if r.method == "PUT" {
			body = map[string]any{"id": flux.ID, "title": "Edited", "position": 0}
		}
		code, data := p.b.call(r.method, r.path, body)
		if code != http.StatusConflict || !strings.Contains(errorOf(t, data), r.want) {
			t.Errorf("%s %s = %d %s, want 409 saying %q", r.method, r.path, code, data, r.want)
		}
	}
	if v := e.viewObject(t, p.ns, flux.ID); v.Spec.Title != "From Flux" || !v.DeletionTimestamp.IsZero() {
		t.Fatalf("a refused write changed the view: %+v", v.Spec)
	}
	p.b.must("PUT", fmt.Sprintf("%s/views/%d", p.base, own.ID), map[string]any{"id": own.ID, "title": "Renamed", "position": 1}, http.StatusNoContent, nil)

	// The project itself: settings, team and delete.
	e.kubectl(t, "", "label", "project", p.obj.Name, "argocd.argoproj.io/instance=bastion-projects")
	var project managedItem
	deadline := time.Now().Add(10 * time.Second)
	for project.ManagedBy == "" && time.Now().Before(deadline) {
		p.b.must("GET", p.base, nil, http.StatusOK, &project)
		time.Sleep(20 * time.Millisecond) // the API reads projects from the cache
	}
	if project.ManagedBy != "Argo CD" {
		t.Fatalf("project managed_by = %q", project.ManagedBy)
	}
	member, _ := e.newUser(t, "gitops-member", false)
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{"PUT", p.base, map[string]any{"id": p.id, "name": "Renamed", "max_parallel_tasks": 0}},
		{"POST", p.base + "/users", map[string]any{"user_id": userIDOf(t, member), "role": "guest"}},
		{"DELETE", p.base, nil},
	} {
		code, data := p.b.call(r.method, r.path, r.body)
		if code != http.StatusConflict || !strings.Contains(errorOf(t, data), "This project is managed by Argo CD (Application bastion-projects)") {
			t.Errorf("%s %s = %d %s, want 409", r.method, r.path, code, data)
		}
	}
	if got := e.projectObject(t, p.id); got.Spec.DisplayName != "GitOps" || len(got.Spec.Members) != 1 || !got.DeletionTimestamp.IsZero() {
		t.Fatalf("a refused write changed the project: %+v", got.Spec)
	}

	// The admin setting turns it off: no managed_by, and writes pass.
	editable := e.serve(t, func(_ string, o *apiserver.Options) { o.EditManagedObjects = true })
	admin, pw := e.newUser(t, "gitops-admin", true)
	b := e.signInAt(t, editable, admin.Spec.Username, pw)
	one = managedItem{} // managed_by is left out, not answered empty
	b.must("GET", fluxPath, nil, http.StatusOK, &one)
	if one.ManagedBy != "" {
		t.Fatalf("with the setting off, managed_by = %q", one.ManagedBy)
	}
	var raw map[string]json.RawMessage
	b.must("GET", p.base, nil, http.StatusOK, &raw)
	if _, ok := raw["managed_by"]; ok {
		t.Fatalf("with the setting off, the project answers managed_by: %s", raw["managed_by"])
	}
	b.must("PUT", fluxPath, map[string]any{"id": flux.ID, "title": "Edited", "position": 0}, http.StatusNoContent, nil)
	b.must("DELETE", fluxPath, nil, http.StatusNoContent, nil)
	b.must("DELETE", fmt.Sprintf("%s/keys/%d", p.base, key.ID), nil, http.StatusNoContent, nil)
}
