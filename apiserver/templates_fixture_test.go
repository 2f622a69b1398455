package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/runproto"
	"github.com/bastion-dev/bastion/internal/store"
)

// apiTask is a task as a client reads it (api-contract.md, "task" and
// "task in lists").
type apiTask struct {
	ID            int64      `json:"id"`
	TemplateID    int64      `json:"template_id"`
	ProjectID     int64      `json:"project_id"`
	Status        string     `json:"status"`
	Debug         bool       `json:"debug"`
	DryRun        bool       `json:"dry_run"`
	Diff          bool       `json:"diff"`
	Playbook      string     `json:"playbook"`
	Environment   string     `json:"environment"`
	Limit         string     `json:"limit"`
	Secret        string     `json:"secret"`
	Arguments     string     `json:"arguments"`
	GitBranch     string     `json:"git_branch"`
	UserID        *int64     `json:"user_id"`
	IntegrationID *int64     `json:"integration_id"`
	ScheduleID    *int64     `json:"schedule_id"`
	Created       time.Time  `json:"created"`
	Start         *time.Time `json:"start"`
	End           *time.Time `json:"end"`
	Message       string     `json:"message"`
	CommitHash    string     `json:"commit_hash"`
	CommitMessage string     `json:"commit_message"`
	BuildTaskID   *int64     `json:"build_task_id"`
	Version       *string    `json:"version"`
	InventoryID   *int64     `json:"inventory_id"`

	TplPlaybook string   `json:"tpl_playbook"`
	TplAlias    string   `json:"tpl_alias"`
	TplType     string   `json:"tpl_type"`
	TplApp      string   `json:"tpl_app"`
	UserName    *string  `json:"user_name"`
	BuildTask   *apiTask `json:"build_task"`
}

// apiTemplate is a template as a client reads it.
type apiTemplate struct {
	ID              int64      `json:"id"`
	ProjectID       int64      `json:"project_id"`
	Name            string     `json:"name"`
	Type            string     `json:"type"`
	BuildTemplateID *int64     `json:"build_template_id"`
	LastTask        *apiTask   `json:"last_task"`
	Tasks           int        `json:"tasks"`
	Vaults          []apiVault `json:"vaults"`
}

type apiVault struct {
	ID         int64  `json:"id"`
	ProjectID  int64  `json:"project_id"`
	TemplateID int64  `json:"template_id"`
	VaultKeyID int64  `json:"vault_key_id"`
	Name       string `json:"name"`
}

// objRef names an object made by the fixture, with its id.
type objRef struct {
	name string
	id   int64
}

// tplProject is a project with an owner and one object of every kind a
// template refers to, made straight in the cluster with ids (their API
// routes are another part of the API).
type tplProject struct {
	e     *apiEnv
	owner *bastionv1.User
	b     *browser // the owner's
	pid   int64
	ns    string

	key, repo, env, inv, view objRef
}

func newTplProject(t *testing.T, e *apiEnv) *tplProject {
	t.Helper()
	owner, pw := e.newUser(t, "tplowner", false)
	b := e.signIn(t, owner.Spec.Username, pw)
	pid := e.newProject(t, "Templates", []bastionv1.ProjectMember{{User: owner.Name, Role: bastionv1.RoleOwner}}, b)
	p := &tplProject{e: e, owner: owner, b: b, pid: pid}
	p.seed(t, e.projectObject(t, pid))
	return p
}

// seed makes the objects templates refer to in project.
func (p *tplProject) seed(t *testing.T, project *bastionv1.Project) {
	t.Helper()
	p.ns = bastionv1.ProjectNamespace(project.Name)
	key := &corev1.Secret{Type: corev1.SecretTypeBasicAuth, StringData: map[string]string{"username": "vault", "password": "VAULT-CANARY"}}
	key.Labels = map[string]string{bastionv1.LabelKeyType: string(bastionv1.KeyTypeLoginPassword)}
	p.key = p.make(t, key, "vault-key", ids.CounterKey)
	p.repo = p.make(t, &bastionv1.Repository{Spec: bastionv1.RepositorySpec{DisplayName: "App", GitURL: "https://git.example/app.git",
		GitBranch: "main", SSHKeyRef: bastionv1.ObjectRef{Name: p.key.name}}}, "app", ids.CounterRepository)
	p.env = p.make(t, &bastionv1.Environment{Spec: bastionv1.EnvironmentSpec{DisplayName: "Prod"}}, "prod", ids.CounterEnvironment)
	p.inv = p.make(t, &bastionv1.Inventory{Spec: bastionv1.InventorySpec{DisplayName: "Hosts", Type: bastionv1.InventoryStatic,
		Inventory: "web1\n", SSHKeyRef: bastionv1.ObjectRef{Name: p.key.name}}}, "hosts", ids.CounterInventory)
	p.view = p.make(t, &bastionv1.View{Spec: bastionv1.ViewSpec{Title: "Ops"}}, "ops", ids.CounterView)
}

// make creates obj called name with an id from counter and waits until
// the API's cache has it.
func (p *tplProject) make(t *testing.T, obj client.Object, name, counter string) objRef {
	t.Helper()
	id, err := (&ids.Allocator{Client: p.e.K8s}).Next(t.Context(), p.ns, counter)
	if err != nil {
		t.Fatal(err)
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[bastionv1.LabelID] = ids.Format(id)
	obj.SetLabels(labels)
	obj.SetName(name)
	obj.SetNamespace(p.ns)
	if err := p.e.K8s.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
	probe := obj.DeepCopyObject().(client.Object)
	eventually(t, 10*time.Second, func() (bool, string) {
		err := p.e.opts.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), probe)
		return err == nil, fmt.Sprintf("%s never reached the cache: %v", name, err)
	})
	return objRef{name, id}
}

// eventually polls cond until it holds, failing with its message after
// timeout. It polls a real server's state; it never sleeps as a wait for
// something to happen by itself.
func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *tplProject) path(format string, a ...any) string {
	return fmt.Sprintf("/api/project/%d", p.pid) + fmt.Sprintf(format, a...)
}

// templateBody is a valid plain template named name; change edits it.
func (p *tplProject) templateBody(name string, change func(map[string]any)) map[string]any {
	body := map[string]any{
		"name": name, "playbook": "site.yml", "repository_id": p.repo.id, "environment_id": p.env.id,
		"inventory_id": p.inv.id, "app": "ansible",
	}
	if change != nil {
		change(body)
	}
	return body
}

// createTemplate creates a template through the API and returns it.
func (p *tplProject) createTemplate(t *testing.T, name string, change func(map[string]any)) apiTemplate {
	t.Helper()
	var out apiTemplate
	p.b.must("POST", p.path("/templates"), p.templateBody(name, change), http.StatusCreated, &out)
	if out.ID == 0 {
		t.Fatalf("created template has no id: %+v", out)
	}
	return out
}

// madeTemplate is a template made in the cluster: its object name and id.
type madeTemplate struct {
	name string
	ID   int64
}

// makeTemplate makes a plain template straight in the cluster, without
// the API.
func (p *tplProject) makeTemplate(t *testing.T, name, display string) madeTemplate {
	t.Helper()
	ref := p.make(t, &bastionv1.Template{Spec: bastionv1.TemplateSpec{DisplayName: display, Playbook: "site.yml",
		RepositoryRef: bastionv1.ObjectRef{Name: p.repo.name}, EnvironmentRef: bastionv1.ObjectRef{Name: p.env.name}}}, name, ids.CounterTemplate)
	return madeTemplate{ref.name, ref.id}
}

// prune does what retention does to a finished task: the reconciler has
// saved its summary, then its Task object is deleted.
func (p *tplProject) prune(t *testing.T, id int64) {
	t.Helper()
	eventually(t, 20*time.Second, func() (bool, string) {
		_, err := p.e.Store.TaskSummary(t.Context(), store.TaskKey{ProjectID: p.pid, TaskID: id})
		return err == nil, fmt.Sprintf("task %d has no summary: %v", id, err)
	})
	// As retention does: marked pruned, so that its history stays.
	task := p.taskObject(t, id)
	marked := client.MergeFrom(task.DeepCopy())
	metav1.SetMetaDataAnnotation(&task.ObjectMeta, bastionv1.AnnotationPruned, "true")
	if err := p.e.K8s.Patch(t.Context(), task, marked); err != nil {
		t.Fatal(err)
	}
	if err := p.e.K8s.Delete(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		list := &bastionv1.TaskList{}
		err := p.e.K8s.List(t.Context(), list, client.InNamespace(p.ns), client.MatchingLabels{bastionv1.LabelID: ids.Format(id)})
		return err == nil && len(list.Items) == 0, fmt.Sprintf("task %d was never deleted", id)
	})
}

// templateObject is the Template with the API id id.
func (p *tplProject) templateObject(t *testing.T, id int64) *bastionv1.Template {
	t.Helper()
	list := &bastionv1.TemplateList{}
	if err := p.e.K8s.List(t.Context(), list, client.InNamespace(p.ns), client.MatchingLabels{bastionv1.LabelID: ids.Format(id)}); err != nil || len(list.Items) != 1 {
		t.Fatalf("template %d: %v (%d found)", id, err, len(list.Items))
	}
	return &list.Items[0]
}

// startTask starts a task through the API and returns it.
func (p *tplProject) startTask(t *testing.T, body map[string]any) apiTask {
	t.Helper()
	var out apiTask
	p.b.must("POST", p.path("/tasks"), body, http.StatusCreated, &out)
	return out
}

// taskObject is the Task with the API id id, read from the apiserver.
func (p *tplProject) taskObject(t *testing.T, id int64) *bastionv1.Task {
	t.Helper()
	list := &bastionv1.TaskList{}
	if err := p.e.K8s.List(t.Context(), list, client.InNamespace(p.ns), client.MatchingLabels{bastionv1.LabelID: ids.Format(id)}); err != nil || len(list.Items) != 1 {
		t.Fatalf("task %d: %v (%d found)", id, err, len(list.Items))
	}
	return &list.Items[0]
}

// taskCount is how many Task objects the project has.
func (p *tplProject) taskCount(t *testing.T) int {
	t.Helper()
	list := &bastionv1.TaskList{}
	if err := p.e.K8s.List(t.Context(), list, client.InNamespace(p.ns)); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

// waitStatus waits until the reconciler moved task id to want.
func (p *tplProject) waitStatus(t *testing.T, id int64, want bastionv1.TaskStatusValue) *bastionv1.Task {
	t.Helper()
	var task *bastionv1.Task
	eventually(t, 20*time.Second, func() (bool, string) {
		task = p.taskObject(t, id)
		return task.Status.Status == want, fmt.Sprintf("task %d is %q (%s), want %q", id, task.Status.Status, task.Status.Message, want)
	})
	return task
}

// setStatus puts task id in status through the status subresource, as if
// the reconciler had (the test's Jobs never run).
func (p *tplProject) setStatus(t *testing.T, id int64, status bastionv1.TaskStatusValue) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		task := p.taskObject(t, id)
		task.Status.Status = status
		if status == bastionv1.TaskWaitingConfirmation {
			// What makes the reconciler keep it there: its runner's report.
			task.Status.Run = &bastionv1.TaskRun{Phase: runproto.PhaseWaitingConfirmation}
		}
		if status.Finished() {
			now := metav1.Now()
			task.Status.End = &now
			if task.Status.Start == nil {
				task.Status.Start = &now
			}
		}
		return p.e.K8s.Status().Update(t.Context(), task)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// putSummary stores the summary of a task retention pruned: it has an id
// and a summary but no object.
func (p *tplProject) putSummary(t *testing.T, s store.TaskSummary) int64 {
	t.Helper()
	if s.TaskID == 0 {
		id, err := (&ids.Allocator{Client: p.e.K8s}).Next(t.Context(), p.ns, ids.CounterTask)
		if err != nil {
			t.Fatal(err)
		}
		s.TaskID = id
	}
	s.ProjectID = p.pid
	if s.Created.IsZero() {
		s.Created = time.Now().Add(-time.Hour)
	}
	if err := p.e.Store.PutTaskSummary(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	return s.TaskID
}

// list reads a list route.
func (p *tplProject) tasks(t *testing.T, path string) []apiTask {
	t.Helper()
	var out []apiTask
	p.b.must("GET", p.path("%s", path), nil, http.StatusOK, &out)
	return out
}

// rawJSON reads path into a generic map, for field-by-field checks.
func (p *tplProject) rawJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	var out map[string]any
	p.b.must("GET", p.path("%s", path), nil, http.StatusOK, &out)
	return out
}

// normalized is v as a JSON round trip makes it (numbers as float64).
func normalized(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// allowEveryOverride turns on every task-time override of a template
// (internal/taskvars): arguments, branch and commit, inventory, playbook
// and extra variables.
func allowEveryOverride(b map[string]any) {
	for _, field := range []string{"allow_override_args_in_task", "allow_override_branch_in_task",
		"allow_override_inventory_in_task", "allow_override_playbook_in_task", "allow_override_extra_vars_in_task"} {
		b[field] = true
	}
}
