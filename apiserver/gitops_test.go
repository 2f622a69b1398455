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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/apiserver"
	"github.com/bastion-dev/bastion/internal/ids"
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

// fluxView is a View as Flux's kustomize-controller applies it, in the
// namespace %[1]s.
const fluxView = `apiVersion: automation.bastion.dev/v1alpha1
kind: View
metadata:
  name: flux-view
  namespace: %[1]s
  labels:
    kustomize.toolkit.fluxcd.io/name: bastion-apps
    kustomize.toolkit.fluxcd.io/namespace: flux-system
spec:
  title: From Flux
  position: 0
`

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

// eventuallyManaged waits until GET path answers a managed_by (a label
// kubectl put on the object reaches the API's cache a moment later) and
// returns it; "" if it never does.
func eventuallyManaged(t *testing.T, b *browser, path string) string {
	t.Helper()
	var got managedItem
	deadline := time.Now().Add(10 * time.Second)
	for got.ManagedBy == "" && time.Now().Before(deadline) {
		b.must("GET", path, nil, http.StatusOK, &got)
		time.Sleep(20 * time.Millisecond) // polling a real server's cache
	}
	return got.ManagedBy
}

// refused checks that a write answers 409 saying want.
func refused(t *testing.T, b *browser, method, path string, body any, want string) {
	t.Helper()
	code, data := b.call(method, path, body)
	if code != http.StatusConflict || !strings.Contains(errorOf(t, data), want) {
		t.Errorf("%s %s = %d %s, want 409 saying %q", method, path, code, data, want)
	}
}

func TestGitOps_kubectlAppliedObjectsAreReadOnlyThroughTheAPI(t *testing.T) {
	e := startEnv(t)
	p := e.newSchedintProject(t, "GitOps")
	manifests := fmt.Sprintf(fluxView+`---
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
		refused(t, p.b, r.method, r.path, body, r.want)
	}
	if v := e.viewObject(t, p.ns, flux.ID); v.Spec.Title != "From Flux" || !v.DeletionTimestamp.IsZero() {
		t.Fatalf("a refused write changed the view: %+v", v.Spec)
	}
	p.b.must("PUT", fmt.Sprintf("%s/views/%d", p.base, own.ID), map[string]any{"id": own.ID, "title": "Renamed", "position": 1}, http.StatusNoContent, nil)

	// The project itself: settings, team and delete.
	e.kubectl(t, "", "label", "project", p.obj.Name, "argocd.argoproj.io/instance=bastion-projects")
	if by := eventuallyManaged(t, p.b, p.base); by != "Argo CD" {
		t.Fatalf("project managed_by = %q", by)
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
		refused(t, p.b, r.method, r.path, r.body, "This project is managed by Argo CD (Application bastion-projects)")
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

// The writes below an object, and the ones that reach a managed object
// from elsewhere, are refused too (docs/gitops.md, "What the guard
// covers"): moving a managed view, a managed schedule's active switch, a
// managed integration's matchers, values and aliases, deleting an alias
// a GitOps tool applied, and the secret values of an environment whose
// Secret a GitOps tool keeps. Each refusal changes nothing, and
// --allow-gitops-edits lets each through.
func TestGitOps_childWritesOfManagedObjectsAreRefused(t *testing.T) {
	e := startEnv(t)
	p := e.newSchedintProject(t, "GitOps children")
	template, _ := e.seedTemplate(t, p.obj, "Deploy", "")
	manifests := fmt.Sprintf(fluxView+`---
apiVersion: automation.bastion.dev/v1alpha1
kind: View
metadata:
  name: own-view
  namespace: %[1]s
spec:
  title: Own
  position: 1
---
apiVersion: automation.bastion.dev/v1alpha1
kind: Schedule
metadata:
  name: argo-schedule
  namespace: %[1]s
  labels:
    argocd.argoproj.io/instance: bastion-schedules
spec:
  displayName: Nightly from Argo
  templateRef: {name: %[2]s}
  cronFormat: "0 3 * * *"
  active: true
---
apiVersion: automation.bastion.dev/v1alpha1
kind: Integration
metadata:
  name: flux-hook
  namespace: %[1]s
  labels:
    kustomize.toolkit.fluxcd.io/name: bastion-hooks
    kustomize.toolkit.fluxcd.io/namespace: flux-system
spec:
  displayName: Hook from Flux
  matchers:
  - {name: event, matchType: header, method: equals, key: X-Event, value: push}
  extractValues:
  - {name: ref, valueSource: body, bodyDataType: json, key: ref, variable: REF}
---
apiVersion: automation.bastion.dev/v1alpha1
kind: IntegrationAlias
metadata:
  name: argo-alias
  namespace: %[1]s
  labels:
    argocd.argoproj.io/instance: bastion-hooks
spec:
  alias: argo-alias-0123456789abcdef
---
apiVersion: v1
kind: Secret
metadata:
  name: flux-env-secrets
  namespace: %[1]s
  labels:
    kustomize.toolkit.fluxcd.io/name: bastion-secrets
    kustomize.toolkit.fluxcd.io/namespace: flux-system
type: Opaque
stringData:
  password: from-git
---
apiVersion: automation.bastion.dev/v1alpha1
kind: Environment
metadata:
  name: own-env
  namespace: %[1]s
spec:
  displayName: Own environment
  secretRef: {name: flux-env-secrets}
`, p.ns, template.Name)
	e.kubectl(t, manifests, "apply", "-f", "-")

	flux := eventuallyListed(t, p.b, p.base+"/views", "From Flux")
	own := eventuallyListed(t, p.b, p.base+"/views", "Own")
	schedule := eventuallyListed(t, p.b, p.base+"/schedules", "Nightly from Argo")
	hook := eventuallyListed(t, p.b, p.base+"/integrations", "Hook from Flux")
	env := eventuallyListed(t, p.b, p.base+"/environment", "Own environment")
	alias := eventuallyListedAlias(t, p.b, p.base+"/integrations/aliases", "argo-alias-0123456789abcdef")
	hookPath := fmt.Sprintf("%s/integrations/%d", p.base, hook.ID)
	matcher := eventuallyListed(t, p.b, hookPath+"/matchers", "event")
	value := eventuallyListed(t, p.b, hookPath+"/values", "ref")
	if schedule.ManagedBy != "Argo CD" || hook.ManagedBy != "Flux" || env.ManagedBy != "" {
		t.Fatalf("managed_by: schedule %q, integration %q, environment %q", schedule.ManagedBy, hook.ManagedBy, env.ManagedBy)
	}

	// Reading what is below a managed object stays open.
	p.b.must("GET", hookPath+"/aliases", nil, http.StatusOK, nil)

	const byFluxView = "This view is managed by Flux (Kustomization flux-system/bastion-apps)"
	const byFluxHook = "This integration is managed by Flux (Kustomization flux-system/bastion-hooks)"
	matcherBody := map[string]any{"id": matcher.ID, "integration_id": hook.ID, "name": "edited", "match_type": "header", "method": "equals", "key": "X-Event", "value": "tag"}
	valueBody := map[string]any{"id": value.ID, "integration_id": hook.ID, "name": "edited", "value_source": "body", "body_data_type": "json", "key": "ref", "variable": "REF"}
	writes := []struct {
		name, method, path string
		body               any
		want               string
	}{
		{"moving a managed view", "POST", p.base + "/views/positions", map[string]any{ids.Format(flux.ID): 5, ids.Format(own.ID): 0}, byFluxView},
		{"a managed schedule's switch", "PUT", fmt.Sprintf("%s/schedules/%d/active", p.base, schedule.ID), map[string]any{"active": false},
			"This schedule is managed by Argo CD (Application bastion-schedules)"},
		{"adding a matcher", "POST", hookPath + "/matchers", matcherBody, byFluxHook},
		{"editing a matcher", "PUT", fmt.Sprintf("%s/matchers/%d", hookPath, matcher.ID), matcherBody, byFluxHook},
		{"deleting a matcher", "DELETE", fmt.Sprintf("%s/matchers/%d", hookPath, matcher.ID), nil, byFluxHook},
		{"adding a value", "POST", hookPath + "/values", valueBody, byFluxHook},
		{"editing a value", "PUT", fmt.Sprintf("%s/values/%d", hookPath, value.ID), valueBody, byFluxHook},
		{"deleting a value", "DELETE", fmt.Sprintf("%s/values/%d", hookPath, value.ID), nil, byFluxHook},
		{"an alias of a managed integration", "POST", hookPath + "/aliases", nil, byFluxHook},
		{"deleting an alias Argo CD applied", "DELETE", fmt.Sprintf("%s/integrations/aliases/%d", p.base, alias), nil,
			"This alias is managed by Argo CD (Application bastion-hooks)"},
		{"an environment's secret values in a Flux Secret", "PUT", fmt.Sprintf("%s/environment/%d", p.base, env.ID),
			map[string]any{"id": env.ID, "name": "Own environment", "password": "from-the-console", "json": "{}", "env": "{}"},
			"This secret is managed by Flux (Kustomization flux-system/bastion-secrets); change it in its Git repository"},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) { refused(t, p.b, w.method, w.path, w.body, w.want) })
	}

	// Nothing changed: no view moved (the request is all or nothing), the
	// schedule is on, the integration's lists, its aliases and the Secret
	// are as Git has them.
	if f, o := e.viewObject(t, p.ns, flux.ID), e.viewObject(t, p.ns, own.ID); f.Spec.Position != 0 || o.Spec.Position != 1 {
		t.Errorf("a refused move moved views: Flux's at %d, own at %d", f.Spec.Position, o.Spec.Position)
	}
	var sch bastionv1.Schedule
	e.get(t, p.ns, "argo-schedule", &sch)
	var in bastionv1.Integration
	e.get(t, p.ns, "flux-hook", &in)
	var secret corev1.Secret
	e.get(t, p.ns, "flux-env-secrets", &secret)
	aliases := &bastionv1.IntegrationAliasList{}
	if err := e.K8s.List(t.Context(), aliases, client.InNamespace(p.ns)); err != nil {
		t.Fatal(err)
	}
	if !sch.Spec.Active || len(in.Spec.Matchers) != 1 || in.Spec.Matchers[0].Value != "push" ||
		len(in.Spec.ExtractValues) != 1 || in.Spec.ExtractValues[0].Name != "ref" ||
		len(aliases.Items) != 1 || string(secret.Data["password"]) != "from-git" {
		t.Fatalf("a refused write changed something: schedule active %v, matchers %+v, values %+v, %d aliases, password %q",
			sch.Spec.Active, in.Spec.Matchers, in.Spec.ExtractValues, len(aliases.Items), secret.Data["password"])
	}

	// A managed view sent at the position it has is no move: the console
	// sends every tab after a drag among Bastion's own.
	p.b.must("POST", p.base+"/views/positions", map[string]any{ids.Format(flux.ID): 0, ids.Format(own.ID): 2}, http.StatusNoContent, nil)
	if o := e.viewObject(t, p.ns, own.ID); o.Spec.Position != 2 {
		t.Fatalf("Bastion's own view was not moved: at %d", o.Spec.Position)
	}
	// Deleting the environment is Bastion's; its Flux Secret is Flux's to
	// remove, and stays.
	p.b.must("DELETE", fmt.Sprintf("%s/environment/%d", p.base, env.ID), nil, http.StatusNoContent, nil)
	e.get(t, p.ns, "flux-env-secrets", &secret)

	// With --allow-gitops-edits every one of them goes through.
	editable := e.serve(t, func(_ string, o *apiserver.Options) { o.EditManagedObjects = true })
	admin, pw := e.newUser(t, "gitops-children-admin", true)
	b := e.signInAt(t, editable, admin.Spec.Username, pw)
	b.must("POST", p.base+"/views/positions", map[string]any{ids.Format(flux.ID): 5}, http.StatusNoContent, nil)
	b.must("PUT", fmt.Sprintf("%s/schedules/%d/active", p.base, schedule.ID), map[string]any{"active": false}, http.StatusNoContent, nil)
	b.must("PUT", fmt.Sprintf("%s/matchers/%d", hookPath, matcher.ID), matcherBody, http.StatusNoContent, nil)
	b.must("DELETE", fmt.Sprintf("%s/values/%d", hookPath, value.ID), nil, http.StatusNoContent, nil)
	b.must("POST", hookPath+"/aliases", nil, http.StatusCreated, nil)
	b.must("DELETE", fmt.Sprintf("%s/integrations/aliases/%d", p.base, alias), nil, http.StatusNoContent, nil)
	if f := e.viewObject(t, p.ns, flux.ID); f.Spec.Position != 5 {
		t.Fatalf("with the setting, the Flux view was not moved: at %d", f.Spec.Position)
	}
	e.get(t, p.ns, "argo-schedule", &sch)
	e.get(t, p.ns, "flux-hook", &in)
	if sch.Spec.Active || len(in.Spec.Matchers) != 1 || in.Spec.Matchers[0].Value != "tag" || len(in.Spec.ExtractValues) != 0 {
		t.Fatalf("with the setting, writes did not land: active %v, matchers %+v, values %+v", sch.Spec.Active, in.Spec.Matchers, in.Spec.ExtractValues)
	}
}

// eventuallyListedAlias waits until the alias list at path has alias, which
// Argo CD manages, and returns its id.
func eventuallyListedAlias(t *testing.T, b *browser, path, alias string) int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list []struct {
			ID        int64  `json:"id"`
			URL       string `json:"url"`
			ManagedBy string `json:"managed_by"`
		}
		b.must("GET", path, nil, http.StatusOK, &list)
		for _, item := range list {
			if strings.HasSuffix(item.URL, "/"+alias) {
				if item.ManagedBy != "Argo CD" {
					t.Fatalf("the alias %s: managed_by %q", alias, item.ManagedBy)
				}
				return item.ID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listed the alias %s: %+v", path, alias, list)
		}
		time.Sleep(20 * time.Millisecond) // polling a real server's cache
	}
}

// get reads the object called name in ns from the apiserver.
func (e *apiEnv) get(t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	if err := e.K8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatal(err)
	}
}

// A user declared in Git (Users are cluster objects too) is read-only
// through /api but for its password, which lives in a Secret of Bastion's.
func TestGitOps_managedUserIsReadOnlyButForItsPassword(t *testing.T) {
	e := startEnv(t)
	admin, pw := e.newUser(t, "gitops-users-admin", true)
	b := e.signIn(t, admin.Spec.Username, pw)
	declared, _ := e.newUser(t, "declared", false)
	path := fmt.Sprintf("/api/users/%d", userIDOf(t, declared))
	e.kubectl(t, "", "label", "user", declared.Name, "kustomize.toolkit.fluxcd.io/name=bastion-users", "kustomize.toolkit.fluxcd.io/namespace=flux-system")
	if by := eventuallyManaged(t, b, path); by != "Flux" {
		t.Fatalf("user managed_by = %q", by)
	}
	edit := map[string]any{"username": declared.Spec.Username, "name": "Renamed", "email": declared.Spec.Email}
	for _, method := range []string{"PUT", "DELETE"} {
		var body any
		if method == "PUT" {
			body = edit
		}
		refused(t, b, method, path, body, "This user is managed by Flux (Kustomization flux-system/bastion-users)")
	}
	var stored bastionv1.User
	e.get(t, "", declared.Name, &stored)
	if stored.Spec.Name != declared.Spec.Name || !stored.DeletionTimestamp.IsZero() {
		t.Fatalf("a refused write changed the user: %+v", stored.Spec)
	}
	b.must("POST", path+"/password", map[string]any{"password": "a-new-password-1"}, http.StatusNoContent, nil)

	editable := e.serve(t, func(_ string, o *apiserver.Options) { o.EditManagedObjects = true })
	be := e.signInAt(t, editable, admin.Spec.Username, pw)
	be.must("PUT", path, edit, http.StatusNoContent, nil)
	be.must("DELETE", path, nil, http.StatusNoContent, nil)
}
