package apiserver_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/apiserver"
	"github.com/bastion-dev/bastion/internal/demorepo"
	"github.com/bastion-dev/bastion/internal/ids"
)

const demoURL = "git://bastion.test:9418/demo.git"

// demoObjects are the objects of a project's namespace, by kind.
type demoObjects struct {
	keys         []corev1.Secret
	repositories []bastionv1.Repository
	inventories  []bastionv1.Inventory
	environments []bastionv1.Environment
	views        []bastionv1.View
	templates    map[string]bastionv1.Template // by display name
}

func listDemo(t *testing.T, e *apiEnv, ns string) demoObjects {
	t.Helper()
	var (
		keys  corev1.SecretList
		repos bastionv1.RepositoryList
		invs  bastionv1.InventoryList
		envs  bastionv1.EnvironmentList
		views bastionv1.ViewList
		tpls  bastionv1.TemplateList
	)
	for _, l := range []client.ObjectList{&repos, &invs, &envs, &views, &tpls} {
		if err := e.K8s.List(t.Context(), l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.K8s.List(t.Context(), &keys, client.InNamespace(ns), client.HasLabels{bastionv1.LabelKeyType}); err != nil {
		t.Fatal(err)
	}
	out := demoObjects{keys: keys.Items, repositories: repos.Items, inventories: invs.Items,
		environments: envs.Items, views: views.Items, templates: map[string]bastionv1.Template{}}
	for _, tpl := range tpls.Items {
		out.templates[tpl.Spec.DisplayName] = tpl
	}
	return out
}

// POST /api/projects with demo: true makes the whole demo in the new
// project: every object, references resolved, each one Ready with an id.
func TestDemoProject_createsEveryObjectReferencedAndReady(t *testing.T) {
	e := startEnv(t)
	url := e.serve(t, func(_ string, o *apiserver.Options) { o.DemoRepoURL = demoURL })
	adminUser, pw := e.newUser(t, "demo", true)
	b := e.browser(t)
	b.base = url
	b.must("POST", "/api/auth/login", map[string]string{"auth": adminUser.Spec.Username, "password": pw}, http.StatusNoContent, nil)

	var project apiProject
	b.must("POST", "/api/projects", map[string]any{"name": "My demo", "demo": true}, http.StatusCreated, &project)
	if project.Name != "My demo" || project.ID == 0 {
		t.Fatalf("created %+v", project)
	}
	ns := bastionv1.ProjectNamespace(e.projectObject(t, project.ID).Name)
	got := listDemo(t, e, ns)

	if len(got.keys) != 1 || got.keys[0].Labels[bastionv1.LabelKeyType] != string(bastionv1.KeyTypeNone) ||
		got.keys[0].Annotations[bastionv1.AnnotationDisplayName] != demorepo.KeyName {
		t.Fatalf("keys: %+v", got.keys)
	}
	key := got.keys[0].Name
	if len(got.repositories) != 1 {
		t.Fatalf("%d repositories", len(got.repositories))
	}
	repo := got.repositories[0]
	if repo.Spec.DisplayName != demorepo.RepositoryName || repo.Spec.GitURL != demoURL || repo.Spec.GitBranch != "main" || repo.Spec.SSHKeyRef.Name != key {
		t.Fatalf("repository: %+v", repo.Spec)
	}
	if len(got.inventories) != 1 {
		t.Fatalf("%d inventories", len(got.inventories))
	}
	inv := got.inventories[0]
	if inv.Spec.Type != bastionv1.InventoryStatic || inv.Spec.Inventory != "localhost ansible_connection=local\n" || inv.Spec.SSHKeyRef.Name != key {
		t.Fatalf("inventory: %+v", inv.Spec)
	}
	if len(got.environments) != 1 {
		t.Fatalf("%d environments", len(got.environments))
	}
	env := got.environments[0]
	if string(env.Spec.ExtraVars.Raw) != `{"who":"Bastion"}` || env.Spec.Env["DEMO_GREETING"] == "" {
		t.Fatalf("environment: %s %v", env.Spec.ExtraVars.Raw, env.Spec.Env)
	}
	if len(got.views) != 1 || got.views[0].Spec.Title != demorepo.ViewTitle {
		t.Fatalf("views: %+v", got.views)
	}
	view := got.views[0].Name

	names := make([]string, 0, len(got.templates))
	for name := range got.templates {
		names = append(names, name)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "Build,Deploy,Hello Ansible,Hello Bash" {
		t.Fatalf("templates: %v", names)
	}
	for name, want := range map[string]struct {
		typ       bastionv1.TemplateType
		app       bastionv1.TemplateApp
		playbook  string
		inventory bool
		view      bool
	}{
		demorepo.AnsibleTemplate: {"", bastionv1.AppAnsible, "hello.yml", true, false},
		demorepo.BashTemplate:    {"", bastionv1.AppBash, "hello.sh", false, false},
		demorepo.BuildTemplate:   {bastionv1.TemplateBuild, bastionv1.AppBash, "build.sh", false, true},
		demorepo.DeployTemplate:  {bastionv1.TemplateDeploy, bastionv1.AppBash, "deploy.sh", false, true},
	} {
		s := got.templates[name].Spec
		if s.Type != want.typ || s.App != want.app || s.Playbook != want.playbook ||
			s.RepositoryRef.Name != repo.Name || s.EnvironmentRef.Name != env.Name ||
			(s.InventoryRef != nil) != want.inventory || (s.ViewRef != nil) != want.view {
			t.Errorf("template %s: %+v", name, s)
		}
		if want.inventory && s.InventoryRef.Name != inv.Name || want.view && s.ViewRef.Name != view {
			t.Errorf("template %s refers to inventory %v, view %v", name, s.InventoryRef, s.ViewRef)
		}
	}
	build, deploy := got.templates[demorepo.BuildTemplate].Spec, got.templates[demorepo.DeployTemplate].Spec
	if build.StartVersion != "1.0.0" {
		t.Errorf("build starts at %q", build.StartVersion)
	}
	if !deploy.Autorun || deploy.BuildTemplateRef == nil || deploy.BuildTemplateRef.Name != got.templates[demorepo.BuildTemplate].Name {
		t.Errorf("deploy: autorun %v, build template %v", deploy.Autorun, deploy.BuildTemplateRef)
	}

	// The controllers number every object and find every reference.
	deadline := time.Now().Add(30 * time.Second)
	for {
		problems := demoNotReady(listDemo(t, e, ns))
		if len(problems) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 30s: %s", strings.Join(problems, "; "))
		}
		time.Sleep(100 * time.Millisecond) // the reconcilers of a real manager
	}
}

// demoNotReady lists the objects without an id or without Ready True.
func demoNotReady(d demoObjects) []string {
	var problems []string
	check := func(obj client.Object, conditions []metav1.Condition) {
		if _, ok := ids.FromLabels(obj); !ok {
			problems = append(problems, obj.GetName()+" has no id")
		}
		if conditions != nil && !meta.IsStatusConditionTrue(conditions, bastionv1.ConditionReady) {
			problems = append(problems, fmt.Sprintf("%s is not Ready: %v", obj.GetName(), conditions))
		}
	}
	for i := range d.keys {
		check(&d.keys[i], nil) // Secrets have no status; the id is enough
	}
	for i := range d.repositories {
		check(&d.repositories[i], orNone(d.repositories[i].Status.Conditions))
	}
	for i := range d.inventories {
		check(&d.inventories[i], orNone(d.inventories[i].Status.Conditions))
	}
	for i := range d.environments {
		check(&d.environments[i], orNone(d.environments[i].Status.Conditions))
	}
	for i := range d.views {
		check(&d.views[i], orNone(d.views[i].Status.Conditions))
	}
	for _, tpl := range d.templates {
		check(&tpl, orNone(tpl.Status.Conditions))
	}
	return problems
}

// orNone makes "no conditions yet" count as not ready.
func orNone(c []metav1.Condition) []metav1.Condition {
	if c == nil {
		return []metav1.Condition{}
	}
	return c
}

// Without a demo repository to point at, a demo project is refused with a
// clear message and taken back whole.
func TestDemoProject_withoutTheDemoRepositoryIsRefusedAndLeavesNothing(t *testing.T) {
	e := startEnv(t)
	adminUser, pw := e.newUser(t, "nodemo", true)
	b := e.signIn(t, adminUser.Spec.Username, pw)
	code, data := b.call("POST", "/api/projects", map[string]any{"name": "No demo here", "demo": true})
	if code != http.StatusNotImplemented || !strings.Contains(errorOf(t, data), "does not serve the demo repository") {
		t.Fatalf("demo project without a demo repository = %d %s", code, data)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		list := &bastionv1.ProjectList{}
		if err := e.K8s.List(t.Context(), list); err != nil {
			t.Fatal(err)
		}
		left := 0
		for _, p := range list.Items {
			if p.Spec.DisplayName == "No demo here" {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d refused demo projects are still there", left)
		}
		time.Sleep(100 * time.Millisecond) // the Project controller's finalizer
	}
}
