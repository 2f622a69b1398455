package apiserver_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// The permission matrix of the template and task routes (docs/features.md §6): every
// member reads; template writes and task deletes need
// manageProjectResources; starting, stopping and confirming tasks need
// runProjectTasks.
var templatesMatrix = []matrixRow{
	{"GET", "/api/project/{project}/templates", "", members(200), nil, false},
	{"POST", "/api/project/{project}/templates", `{"name":"T","playbook":"site.yml","repository_id":{repo},"environment_id":{env}}`,
		needs(201, manager, owner), seedTemplate, false},
	{"GET", "/api/project/{project}/templates/{template}", "", members(200), seedTemplate, false},
	{"PUT", "/api/project/{project}/templates/{template}", `{"name":"T2","playbook":"site.yml","repository_id":{repo},"environment_id":{env}}`,
		needs(204, manager, owner), seedTemplate, false},
	// A template's task pod settings (issue 23) are a template write too;
	// the admin's allowlist bounds the service account, not the role.
	{"PUT", "/api/project/{project}/templates/{template}", `{"name":"T2","playbook":"site.yml","repository_id":{repo},"environment_id":{env},"task_pods":{"service_account":"deployer","runner_image":"ansible-gpu"}}`,
		needs(204, manager, owner), seedTemplate, false},
	{"DELETE", "/api/project/{project}/templates/{template}", "", needs(204, manager, owner), seedTemplate, false},
	{"GET", "/api/project/{project}/templates/{template}/refs", "", members(200), seedTemplate, false},
	{"GET", "/api/project/{project}/templates/{template}/tasks?status=success", "", members(200), seedTemplate, false},
	{"GET", "/api/project/{project}/templates/{template}/tasks/last?limit=5", "", members(200), seedTemplate, false},
	{"GET", "/api/project/{project}/templates/{template}/schedules", "", members(200), seedTemplate, false},
	{"GET", "/api/project/{project}/templates/{template}/durations?limit=5", "", members(200), seedTemplate, false},

	{"GET", "/api/project/{project}/tasks", "", members(200), nil, false},
	{"GET", "/api/project/{project}/tasks/last", "", members(200), nil, false},
	{"GET", "/api/project/{project}/stats/tasks?days=30", "", members(200), nil, false},
	{"POST", "/api/project/{project}/tasks", `{"template_id":{template}}`, needs(201, taskRunner, manager, owner), seedTemplate, false},
	// What a task may set (internal/taskvars) is the template's to allow,
	// for every role alike: a name that changes how the run connects, a
	// secret answer of one, or a branch the template does not let a task
	// choose is a 400 to those who may run tasks at all.
	{"POST", "/api/project/{project}/tasks", `{"template_id":{template},"environment":"{\"ansible_python_interpreter\":\"/bin/sh\"}"}`,
		needs(400, taskRunner, manager, owner), seedTemplate, false},
	{"POST", "/api/project/{project}/tasks", `{"template_id":{template},"secret":"{\"ansible_host\":\"elsewhere\"}"}`,
		needs(400, taskRunner, manager, owner), seedTemplate, false},
	{"POST", "/api/project/{project}/tasks", `{"template_id":{template},"git_branch":"attacker"}`,
		needs(400, taskRunner, manager, owner), seedTemplate, false},
	// A limit is host patterns for everyone: "@FILE" would make ansible
	// read and print a file on the runner.
	{"POST", "/api/project/{project}/tasks", `{"template_id":{template},"limit":"web1,@/etc/passwd"}`,
		needs(400, taskRunner, manager, owner), seedTemplate, false},
	{"GET", "/api/project/{project}/tasks/{task}", "", members(200), seedTask, false},
	{"GET", "/api/project/{project}/tasks/{task}/output", "", members(200), seedTask, false},
	{"GET", "/api/project/{project}/tasks/{task}/raw", "", members(200), seedTask, false},
	{"GET", "/api/project/{project}/tasks/{task}/stderr", "", members(200), seedTask, false},
	{"POST", "/api/project/{project}/tasks/{task}/stop", `{"force":true}`, needs(204, taskRunner, manager, owner), seedTask, false},
	{"POST", "/api/project/{project}/tasks/{task}/confirm", "", needs(204, taskRunner, manager, owner), seedWaitingTask, false},
	{"DELETE", "/api/project/{project}/tasks/{task}", "", needs(204, manager, owner), seedTask, false},
	// Approvals: confirm of a task waiting for approval, and reject, need
	// updateProject (owners; admins pass every check). The task was
	// started by nobody in the matrix (a schedule's, say), so no caller is
	// its starter; approvals_test.go refuses the starter.
	{"POST", "/api/project/{project}/tasks/{task}/confirm", "", needs(204, owner), seedApprovalTask, false},
	{"POST", "/api/project/{project}/tasks/{task}/reject", `{"reason":"not now"}`, needs(204, owner), seedApprovalTask, false},
	// Reject is for a task that waits for approval: a conflict otherwise,
	// to those who may reject at all.
	{"POST", "/api/project/{project}/tasks/{task}/reject", "", needs(409, owner), seedTask, false},
}

func TestPermissionMatrix_templates(t *testing.T) { runMatrix(t, templatesMatrix) }

// seeded remembers what a setup made in a project: read rows share one
// project, and its objects are made once.
var seeded sync.Map // project name + setup → map[string]string

func seedOnce(project *bastionv1.Project, what string, build func() map[string]string) map[string]string {
	key := project.Name + "/" + what
	if v, ok := seeded.Load(key); ok {
		return v.(map[string]string)
	}
	v := build()
	seeded.Store(key, v)
	return v
}

// seedTemplate makes a template and what it refers to: {template},
// {repo}, {env}.
func seedTemplate(t *testing.T, e *apiEnv, project *bastionv1.Project) map[string]string {
	return seedOnce(project, "template", func() map[string]string {
		p := &tplProject{e: e}
		p.seed(t, project)
		tpl := p.make(t, &bastionv1.Template{Spec: bastionv1.TemplateSpec{DisplayName: "Site", Playbook: "site.yml",
			RepositoryRef: bastionv1.ObjectRef{Name: p.repo.name}, EnvironmentRef: bastionv1.ObjectRef{Name: p.env.name}}}, "site", ids.CounterTemplate)
		return map[string]string{"template": itoa(tpl.id), "repo": itoa(p.repo.id), "env": itoa(p.env.id)}
	})
}

// seedTask adds a task of that template: {task}.
func seedTask(t *testing.T, e *apiEnv, project *bastionv1.Project) map[string]string {
	return seedOnce(project, "task", func() map[string]string {
		out := seedTemplate(t, e, project)
		p := &tplProject{e: e, ns: bastionv1.ProjectNamespace(project.Name)}
		task := p.make(t, &bastionv1.Task{Spec: bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: "site"}}}, "site-run", ids.CounterTask)
		out = cloneMap(out)
		out["task"] = itoa(task.id)
		return out
	})
}

// seedWaitingTask adds a task that waits for confirmation, as a
// Terraform plan does.
func seedWaitingTask(t *testing.T, e *apiEnv, project *bastionv1.Project) map[string]string {
	out := seedTask(t, e, project)
	p := &tplProject{e: e, ns: bastionv1.ProjectNamespace(project.Name)}
	id, _ := ids.Parse(out["task"])
	p.waitStatus(t, id, bastionv1.TaskStarting)
	p.setStatus(t, id, bastionv1.TaskWaitingConfirmation)
	eventually(t, 10*time.Second, func() (bool, string) {
		task := &bastionv1.Task{}
		err := e.opts.Client.Get(t.Context(), client.ObjectKey{Namespace: p.ns, Name: "site-run"}, task)
		return err == nil && task.Status.Status == bastionv1.TaskWaitingConfirmation,
			fmt.Sprintf("the cache never saw task %d wait for confirmation: %v", id, err)
	})
	return out
}

// seedApprovalTask adds a task of a template that requires approval, and
// waits until it waits for approval: {task}.
func seedApprovalTask(t *testing.T, e *apiEnv, project *bastionv1.Project) map[string]string {
	out := cloneMap(seedTemplate(t, e, project))
	p := &tplProject{e: e, ns: bastionv1.ProjectNamespace(project.Name)}
	p.make(t, &bastionv1.Template{Spec: bastionv1.TemplateSpec{DisplayName: "Guarded", Playbook: "site.yml", RequireApproval: true,
		RepositoryRef: bastionv1.ObjectRef{Name: "app"}, EnvironmentRef: bastionv1.ObjectRef{Name: "prod"}}}, "guarded", ids.CounterTemplate)
	task := p.make(t, &bastionv1.Task{Spec: bastionv1.TaskSpec{TemplateRef: bastionv1.ObjectRef{Name: "guarded"}}}, "guarded-run", ids.CounterTask)
	p.waitStatus(t, task.id, bastionv1.TaskWaitingConfirmation)
	eventually(t, 10*time.Second, func() (bool, string) {
		obj := &bastionv1.Task{}
		err := e.opts.Client.Get(t.Context(), client.ObjectKey{Namespace: p.ns, Name: "guarded-run"}, obj)
		return err == nil && obj.AwaitingApproval(), fmt.Sprintf("the cache never saw task %d wait for approval: %v", task.id, err)
	})
	out["task"] = itoa(task.id)
	return out
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
