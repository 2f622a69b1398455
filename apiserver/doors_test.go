package apiserver_test

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

// "kubectl and the API agree": /api and the Kubernetes API are two doors
// to the same objects. For every kind, an object created through one door
// is listed by the other, and deleting one through either door leaves the
// same objects and stored rows behind: the cascades are the controllers'
// (controllers/cascade.go), never an HTTP handler's.

// doorKind is one row of the suite: how each door creates, lists and
// deletes one kind.
type doorKind struct {
	kind string
	// path is the kind's API collection; {project} is the project's base.
	// An object is deleted at path/<id> unless deletePath says otherwise.
	path       string
	deletePath string
	// cluster: the kind is cluster-scoped.
	cluster bool
	// newList lists the kind as kubectl does.
	newList func() client.ObjectList
	// nameOf is what the API calls the object's name, read from the object;
	// apiName reads it from an API list item.
	nameOf  func(client.Object) string
	apiName func(map[string]any) string
	// create creates one called name through the API and returns the name
	// it got (an alias is named by the server).
	create func(d *doorsProject, name string) string
	// object is one called name as kubectl applies it: no id.
	object func(d *doorsProject, name string) client.Object
	// dependents makes what depends on target, for the delete.
	dependents func(d *doorsProject, target client.Object)
	// takes is what deleting the target takes along, by snapshot key.
	takes map[string]int
}

var doorKinds = []doorKind{
	{
		kind: "Key", path: "{project}/keys", newList: func() client.ObjectList { return &corev1.SecretList{} },
		nameOf: func(o client.Object) string {
			if o.GetLabels()[bastionv1.LabelKeyType] == "" {
				return ""
			}
			return o.GetAnnotations()[bastionv1.AnnotationDisplayName]
		},
		create: func(d *doorsProject, name string) string {
			d.b.must("POST", d.base+"/keys", map[string]any{"name": name, "type": "none"}, http.StatusNoContent, nil)
			return name
		},
		object: func(d *doorsProject, name string) client.Object {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.ns,
				Labels:      map[string]string{bastionv1.LabelKeyType: string(bastionv1.KeyTypeNone)},
				Annotations: map[string]string{bastionv1.AnnotationDisplayName: name}}}
		},
		takes: map[string]int{"Key": 1},
	},
	{
		kind: "Repository", path: "{project}/repositories", newList: func() client.ObjectList { return &bastionv1.RepositoryList{} },
		nameOf: func(o client.Object) string { return o.(*bastionv1.Repository).Spec.DisplayName },
		create: func(d *doorsProject, name string) string {
			d.b.must("POST", d.base+"/repositories", map[string]any{"name": name, "git_url": "https://git.example/r.git",
				"git_branch": "main", "ssh_key_id": d.keyID}, http.StatusNoContent, nil)
			return name
		},
		object: func(d *doorsProject, name string) client.Object {
			return &bastionv1.Repository{ObjectMeta: d.meta(name), Spec: bastionv1.RepositorySpec{DisplayName: name,
				GitURL: "https://git.example/r.git", GitBranch: "main", SSHKeyRef: bastionv1.ObjectRef{Name: "key"}}}
		},
		takes: map[string]int{"Repository": 1},
	},
	{
		kind: "Inventory", path: "{project}/inventory", newList: func() client.ObjectList { return &bastionv1.InventoryList{} },
		nameOf: func(o client.Object) string { return o.(*bastionv1.Inventory).Spec.DisplayName },
		create: func(d *doorsProject, name string) string {
			d.b.must("POST", d.base+"/inventory", map[string]any{"name": name, "type": "static", "inventory": "web1",
				"ssh_key_id": d.keyID}, http.StatusCreated, nil)
			return name
		},
		object: func(d *doorsProject, name string) client.Object {
			return &bastionv1.Inventory{ObjectMeta: d.meta(name), Spec: bastionv1.InventorySpec{DisplayName: name,
				Type: bastionv1.InventoryStatic, Inventory: "web1\n", SSHKeyRef: bastionv1.ObjectRef{Name: "key"}}}
		},
		takes: map[string]int{"Inventory": 1},
	},
	{
		kind: "Environment", path: "{project}/environment", newList: func() client.ObjectList { return &bastionv1.EnvironmentList{} },
		nameOf: func(o client.Object) string { return o.(*bastionv1.Environment).Spec.DisplayName },
		create: func(d *doorsProject, name string) string {
			d.b.must("POST", d.base+"/environment", map[string]any{"name": name, "json": "{}", "env": "{}"}, http.StatusNoContent, nil)
			return name
		},
		object: func(d *doorsProject, name string) client.Object {
			return &bastionv1.Environment{ObjectMeta: d.meta(name), Spec: bastionv1.EnvironmentSpec{DisplayName: name}}
		},
		takes: map[string]int{"Environment": 1},
	},
	{
		kind: "View", path: "{project}/views", newList: func() client.ObjectList { return &bastionv1.ViewList{} },
		nameOf:  func(o client.Object) string { return o.(*bastionv1.View).Spec.Title },
		apiName: func(item map[string]any) string { return fmt.Sprint(item["title"]) },
		create: func(d *doorsProject, name string) string {
			d.b.must("POST", d.base+"/views", map[string]any{"title": name}, http.StatusCreated, nil)
			return name
		},
		object: func(d *doorsProject, name string) client.Object {
			return &bastionv1.View{ObjectMeta: d.meta(name), Spec: bastionv1.ViewSpec{Title: name}}
		},
		// The base template moves into the view; deleting the view moves
		// it out again.
		dependents: func(d *doorsProject, target client.Object) {
			d.patchTemplate(func(t *bastionv1.Template) { t.Spec.ViewRef = &bastionv1.ObjectRef{Name: target.GetName()} })
		},
		takes: map[string]int{"View": 1, "templates in a view": 1},
	},
	{
		kind: "Template", path: "{project}/templates", newList: func() client.ObjectList { return &bastionv1.TemplateList{} },
		nameOf: func(o client.Object) string { return o.(*bastionv1.Template).Spec.DisplayName },
		create: func(d *doorsProject, name string) string {
			d.b.must("POST", d.base+"/templates", map[string]any{"name": name, "playbook": "site.yml",
				"repository_id": d.repoID, "environment_id": d.envID}, http.StatusCreated, nil)
			return name
		},
		object: func(d *doorsProject, name string) client.Object {
			return &bastionv1.Template{ObjectMeta: d.meta(name), Spec: bastionv1.TemplateSpec{DisplayName: name, Playbook: "site.yml",
				RepositoryRef: bastionv1.ObjectRef{Name: "repo"}, EnvironmentRef: bastionv1.ObjectRef{Name: "env"}}}
		},
		// A schedule, a live task and a task retention pruned (a summary
		// in the store).
		dependents: func(d *doorsProject, target client.Object) {
			d.create(&bastionv1.Schedule{ObjectMeta: d.meta("nightly"), Spec: bastionv1.ScheduleSpec{
				TemplateRef: bastionv1.ObjectRef{Name: target.GetName()}, CronFormat: "0 0 * * *"}})
			d.create(&bastionv1.Task{ObjectMeta: d.meta("run"), Spec: bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: target.GetName()}}})
			d.storeSummary(d.idOf(target))
		},
		takes: map[string]int{"Template": 1, "Schedule": 1, "Task": 1, "stored tasks": 1},
	},
	{
		kind: "Schedule", path: "{project}/schedules", newList: func() client.ObjectList { return &bastionv1.ScheduleList{} },
		nameOf: func(o client.Object) string { return o.(*bastionv1.Schedule).Spec.DisplayName },
		create: func(d *doorsProject, name string) string {
			d.b.must("POST", d.base+"/schedules", map[string]any{"name": name, "template_id": d.templateID,
				"cron_format": "0 0 * * *"}, http.StatusCreated, nil)
			return name
		},
		object: func(d *doorsProject, name string) client.Object {
			return &bastionv1.Schedule{ObjectMeta: d.meta(name), Spec: bastionv1.ScheduleSpec{DisplayName: name,
				TemplateRef: bastionv1.ObjectRef{Name: "base"}, CronFormat: "0 0 * * *"}}
		},
		takes: map[string]int{"Schedule": 1},
	},
	{
		kind: "Integration", path: "{project}/integrations", newList: func() client.ObjectList { return &bastionv1.IntegrationList{} },
		nameOf: func(o client.Object) string { return o.(*bastionv1.Integration).Spec.DisplayName },
		create: func(d *doorsProject, name string) string {
			d.b.must("POST", d.base+"/integrations", map[string]any{"name": name}, http.StatusCreated, nil)
			return name
		},
		object: func(d *doorsProject, name string) client.Object {
			return &bastionv1.Integration{ObjectMeta: d.meta(name), Spec: bastionv1.IntegrationSpec{DisplayName: name}}
		},
		dependents: func(d *doorsProject, target client.Object) {
			d.create(&bastionv1.IntegrationAlias{ObjectMeta: d.meta("alias"), Spec: bastionv1.IntegrationAliasSpec{
				Alias: "doors-alias-of-" + target.GetName(), IntegrationRef: &bastionv1.ObjectRef{Name: target.GetName()}}})
		},
		takes: map[string]int{"Integration": 1, "IntegrationAlias": 1},
	},
	{
		kind: "IntegrationAlias", path: "{project}/integrations/aliases", newList: func() client.ObjectList { return &bastionv1.IntegrationAliasList{} },
		nameOf: func(o client.Object) string { return o.(*bastionv1.IntegrationAlias).Spec.Alias },
		apiName: func(item map[string]any) string {
			url := fmt.Sprint(item["url"])
			return url[strings.LastIndex(url, "/")+1:]
		},
		create: func(d *doorsProject, name string) string {
			var out struct {
				URL string `json:"url"`
			}
			d.b.must("POST", d.base+"/integrations/aliases", nil, http.StatusCreated, &out)
			return out.URL[strings.LastIndex(out.URL, "/")+1:]
		},
		object: func(d *doorsProject, name string) client.Object {
			return &bastionv1.IntegrationAlias{ObjectMeta: d.meta(name), Spec: bastionv1.IntegrationAliasSpec{Alias: name}}
		},
		takes: map[string]int{"IntegrationAlias": 1},
	},
	// A task deleted while it runs, and a finished one: the output (and
	// the summary) go with either (a retention prune keeps them;
	// controllers tests).
	taskDoor("Task", false),
	taskDoor("FinishedTask", true),
	{
		kind: "Project", path: "/api/projects", deletePath: "/api/project", cluster: true,
		newList: func() client.ObjectList { return &bastionv1.ProjectList{} },
		nameOf:  func(o client.Object) string { return o.(*bastionv1.Project).Spec.DisplayName },
		create: func(d *doorsProject, name string) string {
			d.b.must("POST", "/api/projects", map[string]any{"name": name}, http.StatusCreated, nil)
			return name
		},
		object: func(d *doorsProject, name string) client.Object {
			return &bastionv1.Project{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: bastionv1.ProjectSpec{DisplayName: name,
				Members: []bastionv1.ProjectMember{{User: d.admin.Name, Role: bastionv1.RoleOwner}}}}
		},
		// Its namespace goes with it (envtest, like `bastion dev`, has no
		// namespace controller: a deleted namespace stays Terminating).
		dependents: func(d *doorsProject, target client.Object) {
			d.track("Project", target)
			d.track("Namespace", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: bastionv1.ProjectNamespace(target.GetName())}})
		},
		takes: map[string]int{"Project": 1, "Namespace": 1},
	},
	{
		kind: "User", path: "/api/users", cluster: true,
		newList: func() client.ObjectList { return &bastionv1.UserList{} },
		nameOf:  func(o client.Object) string { return o.(*bastionv1.User).Spec.Username },
		apiName: func(item map[string]any) string { return fmt.Sprint(item["username"]) },
		create: func(d *doorsProject, name string) string {
			d.b.must("POST", "/api/users", map[string]any{"username": name, "name": name, "email": name + "@example.test",
				"password": "correct-horse-battery"}, http.StatusCreated, nil)
			return name
		},
		object: func(d *doorsProject, name string) client.Object {
			return &bastionv1.User{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: bastionv1.UserSpec{Username: name, Name: name, Email: name + "@example.test"}}
		},
		// A member of the project's team with an API token: the user leaves
		// the team, and the token ends, with the user.
		dependents: func(d *doorsProject, target client.Object) {
			d.track("User", target)
			d.users = append(d.users, d.idOf(target))
			err := d.e.Store.PutCredential(d.t.Context(), store.Credential{Hash: fmt.Sprintf("%064x", d.idOf(target)),
				Kind: store.CredentialToken, PublicID: target.GetName(), UserID: d.idOf(target), Created: time.Now()})
			if err != nil {
				d.t.Fatal(err)
			}
			project := d.e.projectObject(d.t, d.id)
			before := project.DeepCopy()
			project.Spec.Members = append(project.Spec.Members, bastionv1.ProjectMember{User: target.GetName(), Role: bastionv1.RoleTaskRunner})
			if err := d.e.K8s.Patch(d.t.Context(), project, client.MergeFrom(before)); err != nil {
				d.t.Fatal(err)
			}
		},
		takes: map[string]int{"User": 1, "project members": 1, "stored credentials": 1},
	},
}

// taskDoor is the row of Tasks; finished: the task is deleted once it
// finished, with its summary stored.
func taskDoor(kind string, finished bool) doorKind {
	return doorKind{
		kind: kind, path: "{project}/tasks", newList: func() client.ObjectList { return &bastionv1.TaskList{} },
		nameOf:  func(o client.Object) string { return o.(*bastionv1.Task).Spec.Message },
		apiName: func(item map[string]any) string { return fmt.Sprint(item["message"]) },
		create: func(d *doorsProject, name string) string {
			d.b.must("POST", d.base+"/tasks", map[string]any{"template_id": d.templateID, "message": name}, http.StatusCreated, nil)
			return name
		},
		object: func(d *doorsProject, name string) client.Object {
			return &bastionv1.Task{ObjectMeta: d.meta(name), Spec: bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: "base"}, Message: name}}
		},
		dependents: func(d *doorsProject, target client.Object) {
			d.storeOutput(d.idOf(target))
			if finished {
				d.finishTask(target)
			}
		},
		takes: map[string]int{"Task": 1, "stored tasks": 1},
	}
}

func TestDoors_kubectlAndTheAPIAgreeOnEveryKind(t *testing.T) {
	e := startEnv(t)
	admin, pw := e.newUser(t, "doors", true)
	b := e.signIn(t, admin.Spec.Username, pw)
	for _, k := range doorKinds {
		t.Run(k.kind, func(t *testing.T) {
			viaAPI, viaKubectl := newDoorsProject(t, e, b, admin), newDoorsProject(t, e, b, admin)
			doorsSeq++
			name := func(door string) string {
				return strings.ToLower(fmt.Sprintf("doors-%s-%s-%d-0123456789", k.kind, door, doorsSeq))
			}

			// Created through the API, kubectl lists it, with its id.
			got := k.create(viaAPI, name("api"))
			apiMade := viaAPI.findObject(k, got)

			// Created as kubectl would, without an id, the API lists it.
			kubectlMade := k.object(viaKubectl, name("kubectl"))
			viaKubectl.create(kubectlMade)
			viaKubectl.findInAPI(k, name("kubectl"))

			// Deleted through either door, the same goes.
			before := map[*doorsProject]map[string]int{}
			for d, target := range map[*doorsProject]client.Object{viaAPI: apiMade, viaKubectl: kubectlMade} {
				if k.dependents != nil {
					k.dependents(d, target)
				}
				before[d] = d.snapshot()
			}
			deletePath := cmp.Or(k.deletePath, viaAPI.path(k))
			viaAPI.b.must("DELETE", fmt.Sprintf("%s/%d", deletePath, viaAPI.idOf(apiMade)), nil, http.StatusNoContent, nil)
			if err := e.K8s.Delete(t.Context(), kubectlMade); err != nil {
				t.Fatal(err)
			}
			viaKubectl.waitGone(kubectlMade)
			for d, door := range map[*doorsProject]string{viaAPI: "the API", viaKubectl: "kubectl"} {
				eventually(t, 20*time.Second, func() (bool, string) {
					taken := d.taken(before[d])
					return maps.Equal(taken, k.takes), fmt.Sprintf("deleting a %s through %s took %v, want %v", k.kind, door, taken, k.takes)
				})
			}
		})
	}
}

// doorsProject is a project with a key, a repository, an environment and
// a template, the objects the kinds under test refer to.
type doorsProject struct {
	t                                *testing.T
	admin                            *bastionv1.User
	e                                *apiEnv
	b                                *browser
	id                               int64
	ns, base                         string
	keyID, repoID, envID, templateID int64
	tracked                          []int64 // task ids whose stored rows are counted
	// users are the ids of users whose stored credentials are counted.
	users []int64
	// global are cluster-scoped objects counted by snapshot, by key.
	global []trackedObject
}

type trackedObject struct {
	key string
	obj client.Object
}

// track counts obj in the snapshot under key while it exists (a
// namespace: while it is not being deleted).
func (d *doorsProject) track(key string, obj client.Object) {
	d.global = append(d.global, trackedObject{key, obj})
}

var doorsSeq int

func newDoorsProject(t *testing.T, e *apiEnv, b *browser, admin *bastionv1.User) *doorsProject {
	t.Helper()
	doorsSeq++
	id := e.newProject(t, fmt.Sprintf("Doors %d", doorsSeq), []bastionv1.ProjectMember{{User: admin.Name, Role: bastionv1.RoleOwner}}, b)
	d := &doorsProject{t: t, admin: admin, e: e, b: b, id: id, ns: bastionv1.ProjectNamespace(e.projectObject(t, id).Name), base: fmt.Sprintf("/api/project/%d", id)}
	key := doorKinds[0].object(d, "key")
	d.create(key)
	d.keyID = d.idOf(key)
	repo := &bastionv1.Repository{ObjectMeta: d.meta("repo"), Spec: bastionv1.RepositorySpec{DisplayName: "Repo",
		GitURL: "https://git.example/base.git", GitBranch: "main", SSHKeyRef: bastionv1.ObjectRef{Name: "key"}}}
	env := &bastionv1.Environment{ObjectMeta: d.meta("env"), Spec: bastionv1.EnvironmentSpec{DisplayName: "Env"}}
	tpl := &bastionv1.Template{ObjectMeta: d.meta("base"), Spec: bastionv1.TemplateSpec{DisplayName: "Base", Playbook: "site.yml",
		RepositoryRef: bastionv1.ObjectRef{Name: "repo"}, EnvironmentRef: bastionv1.ObjectRef{Name: "env"}}}
	for _, obj := range []client.Object{repo, env, tpl} {
		d.create(obj)
	}
	d.repoID, d.envID, d.templateID = d.idOf(repo), d.idOf(env), d.idOf(tpl)
	return d
}

func (d *doorsProject) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: d.ns}
}

func (d *doorsProject) path(k doorKind) string {
	return strings.Replace(k.path, "{project}", d.base, 1)
}

// create writes obj as kubectl would.
func (d *doorsProject) create(obj client.Object) {
	d.t.Helper()
	if err := d.e.K8s.Create(d.t.Context(), obj); err != nil {
		d.t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

// idOf waits until obj's reconciler has given it an id, and returns it.
func (d *doorsProject) idOf(obj client.Object) int64 {
	d.t.Helper()
	var id int64
	probe := obj.DeepCopyObject().(client.Object)
	eventually(d.t, 10*time.Second, func() (bool, string) {
		err := d.e.K8s.Get(d.t.Context(), client.ObjectKeyFromObject(obj), probe)
		var ok bool
		id, ok = ids.FromLabels(probe)
		return err == nil && ok, fmt.Sprintf("%s got no id: %v", obj.GetName(), err)
	})
	return id
}

// findObject waits until kubectl lists an object of k called name, with
// an id, and returns it.
func (d *doorsProject) findObject(k doorKind, name string) client.Object {
	d.t.Helper()
	var found client.Object
	eventually(d.t, 10*time.Second, func() (bool, string) {
		list := k.newList()
		var opts []client.ListOption
		if !k.cluster {
			opts = append(opts, client.InNamespace(d.ns))
		}
		if err := d.e.K8s.List(d.t.Context(), list, opts...); err != nil {
			return false, err.Error()
		}
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			obj := o.(client.Object)
			if _, numbered := ids.FromLabels(obj); numbered && k.nameOf(obj) == name {
				found = obj
			}
			return nil
		})
		return found != nil, fmt.Sprintf("kubectl does not list the %s %q made through the API", k.kind, name)
	})
	return found
}

// findInAPI waits until the API lists an item of k called name, with an id.
func (d *doorsProject) findInAPI(k doorKind, name string) {
	d.t.Helper()
	apiName := k.apiName
	if apiName == nil {
		apiName = func(item map[string]any) string { return fmt.Sprint(item["name"]) }
	}
	eventually(d.t, 10*time.Second, func() (bool, string) {
		var items []map[string]any
		d.b.must("GET", d.path(k), nil, http.StatusOK, &items)
		for _, item := range items {
			if id, _ := item["id"].(float64); id > 0 && apiName(item) == name {
				return true, ""
			}
		}
		return false, fmt.Sprintf("the API does not list the %s %q made with kubectl: %v", k.kind, name, items)
	})
}

func (d *doorsProject) waitGone(obj client.Object) {
	d.t.Helper()
	probe := obj.DeepCopyObject().(client.Object)
	eventually(d.t, 20*time.Second, func() (bool, string) {
		err := d.e.K8s.Get(d.t.Context(), client.ObjectKeyFromObject(obj), probe)
		return apierrors.IsNotFound(err), fmt.Sprintf("%s is still there: %v", obj.GetName(), err)
	})
}

func (d *doorsProject) patchTemplate(change func(*bastionv1.Template)) {
	d.t.Helper()
	tpl := &bastionv1.Template{}
	if err := d.e.K8s.Get(d.t.Context(), client.ObjectKey{Namespace: d.ns, Name: "base"}, tpl); err != nil {
		d.t.Fatal(err)
	}
	before := tpl.DeepCopy()
	change(tpl)
	if err := d.e.K8s.Patch(d.t.Context(), tpl, client.MergeFrom(before)); err != nil {
		d.t.Fatal(err)
	}
}

// finishTask ends task as its runner would have (the test's Jobs never
// run), and waits until its reconciler has finished it: the run released,
// its summary stored.
func (d *doorsProject) finishTask(task client.Object) {
	d.t.Helper()
	key := client.ObjectKeyFromObject(task)
	got := &bastionv1.Task{}
	eventually(d.t, 20*time.Second, func() (bool, string) {
		err := d.e.K8s.Get(d.t.Context(), key, got)
		return err == nil && got.Status.Status == bastionv1.TaskStarting, fmt.Sprintf("%s is %q: %v", key.Name, got.Status.Status, err)
	})
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := d.e.K8s.Get(d.t.Context(), key, got); err != nil {
			return err
		}
		now := metav1.Now()
		got.Status.Status, got.Status.Start, got.Status.End = bastionv1.TaskSuccess, &now, &now
		return d.e.K8s.Status().Update(d.t.Context(), got)
	})
	if err != nil {
		d.t.Fatal(err)
	}
	id := d.idOf(task)
	eventually(d.t, 20*time.Second, func() (bool, string) {
		if err := d.e.K8s.Get(d.t.Context(), key, got); err != nil {
			return false, err.Error()
		}
		_, err := d.e.Store.TaskSummary(d.t.Context(), store.TaskKey{ProjectID: d.id, TaskID: id})
		return err == nil && !slices.Contains(got.Finalizers, controllers.TaskFinalizer),
			fmt.Sprintf("%s is not done finishing (finalizers %v, summary: %v)", key.Name, got.Finalizers, err)
	})
}

// storeSummary stores a pruned task of the template with id templateID.
func (d *doorsProject) storeSummary(templateID int64) {
	d.t.Helper()
	taskID := 900000 + int64(len(d.tracked))
	err := d.e.Store.PutTaskSummary(d.t.Context(), store.TaskSummary{ProjectID: d.id, TaskID: taskID, TemplateID: templateID,
		Status: "success", Created: time.Now()})
	if err != nil {
		d.t.Fatal(err)
	}
	d.tracked = append(d.tracked, taskID)
}

// storeOutput stores a line of output of the task with id taskID.
func (d *doorsProject) storeOutput(taskID int64) {
	d.t.Helper()
	key := store.TaskKey{ProjectID: d.id, TaskID: taskID}
	if err := d.e.Store.AppendLines(d.t.Context(), key, []store.Line{{Seq: 1, Time: time.Now(), Output: "hello"}}); err != nil {
		d.t.Fatal(err)
	}
	d.tracked = append(d.tracked, taskID)
}

// snapshot counts what the project holds: objects of every kind, keys,
// templates in a view, and tracked tasks the store still has rows of.
func (d *doorsProject) snapshot() map[string]int {
	d.t.Helper()
	ctx := d.t.Context()
	out := map[string]int{}
	lists := map[string]client.ObjectList{
		"Template": &bastionv1.TemplateList{}, "Schedule": &bastionv1.ScheduleList{}, "Task": &bastionv1.TaskList{},
		"Inventory": &bastionv1.InventoryList{}, "Repository": &bastionv1.RepositoryList{}, "Environment": &bastionv1.EnvironmentList{},
		"View": &bastionv1.ViewList{}, "Integration": &bastionv1.IntegrationList{}, "IntegrationAlias": &bastionv1.IntegrationAliasList{},
	}
	for kind, list := range lists {
		if err := d.e.K8s.List(ctx, list, client.InNamespace(d.ns)); err != nil {
			d.t.Fatal(err)
		}
		out[kind] = meta.LenList(list)
	}
	keys := &corev1.SecretList{}
	if err := d.e.K8s.List(ctx, keys, client.InNamespace(d.ns), client.HasLabels{bastionv1.LabelKeyType}); err != nil {
		d.t.Fatal(err)
	}
	out["Key"] = len(keys.Items)
	for _, t := range lists["Template"].(*bastionv1.TemplateList).Items {
		if t.Spec.ViewRef != nil {
			out["templates in a view"]++
		}
	}
	for _, id := range d.tracked {
		key := store.TaskKey{ProjectID: d.id, TaskID: id}
		_, err := d.e.Store.TaskSummary(ctx, key)
		seq, seqErr := d.e.Store.LastSeq(ctx, key)
		if seqErr != nil {
			d.t.Fatal(seqErr)
		}
		if err == nil || seq > 0 {
			out["stored tasks"]++
		}
	}
	for _, g := range d.global {
		probe := g.obj.DeepCopyObject().(client.Object)
		err := d.e.K8s.Get(ctx, client.ObjectKeyFromObject(g.obj), probe)
		if client.IgnoreNotFound(err) != nil {
			d.t.Fatal(err)
		}
		if err == nil && (g.key != "Namespace" || probe.GetDeletionTimestamp().IsZero()) {
			out[g.key]++
		}
	}
	for _, id := range d.users {
		creds, err := d.e.Store.Credentials(ctx, id, store.CredentialToken)
		if err != nil {
			d.t.Fatal(err)
		}
		out["stored credentials"] += len(creds)
	}
	out["project members"] = len(d.e.projectObject(d.t, d.id).Spec.Members)
	return out
}

// taken is what went since before, by key; keys that did not change are
// left out.
func (d *doorsProject) taken(before map[string]int) map[string]int {
	after := d.snapshot()
	out := map[string]int{}
	for key, n := range before {
		if n != after[key] {
			out[key] = n - after[key]
		}
	}
	return out
}

// A project created through the API is made by its controller, as one
// applied with kubectl: when the API answers, its namespace exists and is
// the Project's, and the Project is Ready.
func TestDoors_aProjectCreatedThroughTheAPIIsMadeByItsController(t *testing.T) {
	e := startEnv(t)
	admin, pw := e.newUser(t, "doorsproject", true)
	b := e.signIn(t, admin.Spec.Username, pw)
	var created struct {
		ID int64 `json:"id"`
	}
	b.must("POST", "/api/projects", map[string]any{"name": "Made by its controller"}, http.StatusCreated, &created)
	project := e.projectObject(t, created.ID)
	ready := meta.FindStatusCondition(project.Status.Conditions, bastionv1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionTrue || project.Status.Namespace == "" {
		t.Fatalf("the API answered before the project was Ready: %+v", project.Status)
	}
	ns := &corev1.Namespace{}
	if err := e.K8s.Get(t.Context(), client.ObjectKey{Name: project.Status.Namespace}, ns); err != nil {
		t.Fatal(err)
	}
	if owner := metav1.GetControllerOf(ns); owner == nil || owner.Kind != "Project" || owner.Name != project.Name {
		t.Fatalf("namespace %s is not controlled by project %s: %v", ns.Name, project.Name, owner)
	}
}
