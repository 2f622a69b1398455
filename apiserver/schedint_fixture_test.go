package apiserver_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// Fixtures of the views, schedules and integrations tests. Objects whose
// routes are built elsewhere (templates, keys, repositories) are put
// straight into the cluster, with an id, as kubectl would.

// schedintProject is a project with an owner signed in.
type schedintProject struct {
	id   int64
	obj  *bastionv1.Project
	ns   string
	base string   // /api/project/<id>
	b    *browser // the owner's
}

func (e *apiEnv) newSchedintProject(t *testing.T, name string) *schedintProject {
	t.Helper()
	u, pw := e.newUser(t, "owner", false)
	b := e.signIn(t, u.Spec.Username, pw)
	id := e.newProject(t, name, []bastionv1.ProjectMember{{User: u.Name, Role: bastionv1.RoleOwner}}, b)
	obj := e.projectObject(t, id)
	return &schedintProject{id: id, obj: obj, ns: bastionv1.ProjectNamespace(obj.Name), base: fmt.Sprintf("/api/project/%d", id), b: b}
}

// seed creates obj in the project's namespace with an id from counter and
// waits until the manager's cache holds it (its reconciler wrote a
// condition, which it does only after the cache saw the object). Secrets
// are read around the cache, so keys need no wait.
func (e *apiEnv) seed(t *testing.T, project *bastionv1.Project, obj client.Object, counter string) int64 {
	t.Helper()
	ns := bastionv1.ProjectNamespace(project.Name)
	id, err := (&ids.Allocator{Client: e.K8s}).Next(t.Context(), ns, counter)
	if err != nil {
		t.Fatal(err)
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[bastionv1.LabelID] = ids.Format(id)
	obj.SetLabels(labels)
	obj.SetNamespace(ns)
	if obj.GetName() == "" {
		obj.SetGenerateName(counter + "-")
	}
	if err := e.K8s.Create(t.Context(), obj); err != nil {
		t.Fatalf("seeding a %s: %v", counter, err)
	}
	if _, isSecret := obj.(*corev1.Secret); isSecret {
		return id
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(conditionsOf(obj)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the %s %s was never reconciled", counter, obj.GetName())
		}
		time.Sleep(20 * time.Millisecond) // polling a real apiserver
		if err := e.K8s.Get(t.Context(), client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

func conditionsOf(obj client.Object) []metav1.Condition {
	switch o := obj.(type) {
	case *bastionv1.Template:
		return o.Status.Conditions
	case *bastionv1.View:
		return o.Status.Conditions
	case *bastionv1.Repository:
		return o.Status.Conditions
	case *bastionv1.Schedule:
		return o.Status.Conditions
	case *bastionv1.Integration:
		return o.Status.Conditions
	case *bastionv1.IntegrationAlias:
		return o.Status.Conditions
	}
	panic(fmt.Sprintf("seed: no conditions for %T", obj))
}

// seedTemplate makes a template, in the view called view if it is not "".
func (e *apiEnv) seedTemplate(t *testing.T, project *bastionv1.Project, display, view string) (*bastionv1.Template, int64) {
	t.Helper()
	tpl := &bastionv1.Template{Spec: bastionv1.TemplateSpec{DisplayName: display, Playbook: "site.yml",
		RepositoryRef: bastionv1.ObjectRef{Name: "app"}, EnvironmentRef: bastionv1.ObjectRef{Name: "prod"}}}
	if view != "" {
		tpl.Spec.ViewRef = &bastionv1.ObjectRef{Name: view}
	}
	return tpl, e.seed(t, project, tpl, ids.CounterTemplate)
}

// seedKey makes a key; login_password keys get password.
func (e *apiEnv) seedKey(t *testing.T, project *bastionv1.Project, keyType bastionv1.KeyType, password string) (*corev1.Secret, int64) {
	t.Helper()
	key := &corev1.Secret{Type: corev1.SecretTypeOpaque}
	key.Labels = map[string]string{bastionv1.LabelKeyType: string(keyType)}
	key.Annotations = map[string]string{bastionv1.AnnotationDisplayName: string(keyType) + " key"}
	if keyType == bastionv1.KeyTypeLoginPassword {
		key.Type = corev1.SecretTypeBasicAuth
		key.StringData = map[string]string{corev1.BasicAuthUsernameKey: "hook", corev1.BasicAuthPasswordKey: password}
	}
	return key, e.seed(t, project, key, ids.CounterKey)
}

// seedIntegration makes an integration with one matcher and one extracted
// value (ids from their counters), and returns it with those ids.
func (e *apiEnv) seedIntegration(t *testing.T, project *bastionv1.Project, spec bastionv1.IntegrationSpec) (in *bastionv1.Integration, id, matcherID, valueID int64) {
	t.Helper()
	ns := bastionv1.ProjectNamespace(project.Name)
	alloc := &ids.Allocator{Client: e.K8s}
	var err error
	if matcherID, err = alloc.Next(t.Context(), ns, ids.CounterIntegrationMatcher); err != nil {
		t.Fatal(err)
	}
	if valueID, err = alloc.Next(t.Context(), ns, ids.CounterIntegrationValue); err != nil {
		t.Fatal(err)
	}
	if spec.DisplayName == "" {
		spec.DisplayName = "Seeded hook"
	}
	spec.Matchers = append(spec.Matchers, bastionv1.IntegrationMatcher{ID: matcherID, Name: "event", MatchType: "header", Method: "equals", Key: "X-Event", Value: "push"})
	spec.ExtractValues = append(spec.ExtractValues, bastionv1.IntegrationExtractValue{ID: valueID, Name: "ref", ValueSource: "body", BodyDataType: "json", Key: "ref", Variable: "REF"})
	in = &bastionv1.Integration{Spec: spec}
	id = e.seed(t, project, in, ids.CounterIntegration)
	return in, id, matcherID, valueID
}

// seedAlias makes an alias of in, or a project-level one for in nil.
func (e *apiEnv) seedAlias(t *testing.T, project *bastionv1.Project, in *bastionv1.Integration) (*bastionv1.IntegrationAlias, int64) {
	t.Helper()
	alias := &bastionv1.IntegrationAlias{Spec: bastionv1.IntegrationAliasSpec{Alias: fmt.Sprintf("seeded-alias-%016d", time.Now().UnixNano())}}
	if in != nil {
		alias.Spec.IntegrationRef = &bastionv1.ObjectRef{Name: in.Name}
	}
	return alias, e.seed(t, project, alias, ids.CounterIntegrationAlias)
}

// tasksOf lists the Tasks that integration in started.
func (e *apiEnv) tasksOf(t *testing.T, ns, integration string) []bastionv1.Task {
	t.Helper()
	list := &bastionv1.TaskList{}
	if err := e.K8s.List(t.Context(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []bastionv1.Task
	for _, task := range list.Items {
		if task.Spec.IntegrationRef != nil && task.Spec.IntegrationRef.Name == integration {
			out = append(out, task)
		}
	}
	return out
}
