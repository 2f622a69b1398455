package apiserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

const approvalWait = 20 * time.Second

// approvalTeam is a project whose template requires approval, with a task
// runner, a manager, and a second owner besides the fixture's.
type approvalTeam struct {
	*tplProject
	runner, manager, approver *browser
	approverLogin             string
	template                  int64
}

func newApprovalTeam(t *testing.T) *approvalTeam {
	t.Helper()
	e := startEnv(t)
	owner, pw := e.newUser(t, "aprowner", false)
	b := e.signIn(t, owner.Spec.Username, pw)
	members := []bastionv1.ProjectMember{{User: owner.Name, Role: bastionv1.RoleOwner}}
	team := &approvalTeam{}
	browsers := map[bastionv1.ProjectRole]**browser{
		bastionv1.RoleTaskRunner: &team.runner, bastionv1.RoleManager: &team.manager, bastionv1.RoleOwner: &team.approver,
	}
	for role, out := range browsers {
		u, pw := e.newUser(t, "apr"+strings.ReplaceAll(string(role), "_", ""), false)
		members = append(members, bastionv1.ProjectMember{User: u.Name, Role: role})
		*out = e.signIn(t, u.Spec.Username, pw)
		if role == bastionv1.RoleOwner {
			team.approverLogin = u.Spec.Username
		}
	}
	pid := e.newProject(t, "Approvals", members, b)
	team.tplProject = &tplProject{e: e, owner: owner, b: b, pid: pid}
	team.seed(t, e.projectObject(t, pid))
	team.template = team.createTemplate(t, "Prod deploy", func(m map[string]any) { m["require_approval"] = true }).ID
	return team
}

// start starts a task of the guarded template as b and waits until it
// waits for approval.
func (a *approvalTeam) start(t *testing.T, b *browser) int64 {
	t.Helper()
	var out apiTask
	b.must("POST", a.path("/tasks"), map[string]any{"template_id": a.template}, http.StatusCreated, &out)
	a.waitStatus(t, out.ID, bastionv1.TaskWaitingConfirmation)
	return out.ID
}

// approvalOf is the task's approval as GET /tasks/{id} answers it.
func (a *approvalTeam) approvalOf(t *testing.T, id int64) map[string]any {
	t.Helper()
	approval, _ := a.rawJSON(t, fmt.Sprintf("/tasks/%d", id))["approval"].(map[string]any)
	return approval
}

func TestApprovals_theTemplateFieldIsServedAndKeptByClientsThatDoNotKnowIt(t *testing.T) {
	a := newApprovalTeam(t)
	if got := a.rawJSON(t, fmt.Sprintf("/templates/%d", a.template))["require_approval"]; got != true {
		t.Fatalf("require_approval = %v", got)
	}
	// Semaphore's own UI PUTs a template without the field: the gate stays.
	a.b.must("PUT", a.path("/templates/%d", a.template), a.templateBody("Prod deploy", func(m map[string]any) { m["id"] = a.template }), http.StatusNoContent, nil)
	if !a.templateObject(t, a.template).Spec.RequireApproval {
		t.Fatal("a PUT without require_approval dropped it")
	}
	a.b.must("PUT", a.path("/templates/%d", a.template), a.templateBody("Prod deploy", func(m map[string]any) {
		m["id"], m["require_approval"] = a.template, false
	}), http.StatusNoContent, nil)
	if a.templateObject(t, a.template).Spec.RequireApproval {
		t.Fatal("require_approval false was not applied")
	}
}

// Who may approve: an owner (updateProject) who did not start the task.
// The refusals change nothing; the approval moves the task on (the
// harness has no kubelet: it stays starting) and the event list names
// the approver.
func TestApprovals_confirmApprovesOnlyForAnotherOwner(t *testing.T) {
	a := newApprovalTeam(t)
	id := a.start(t, a.runner)
	if got := a.approvalOf(t, id); got["status"] != "waiting" {
		t.Fatalf("approval = %v", got)
	}
	if got := a.rawJSON(t, fmt.Sprintf("/tasks/%d", id))["message"]; got != "Waiting for approval" {
		t.Errorf("message = %v", got)
	}
	for who, b := range map[string]*browser{"task runner": a.runner, "manager": a.manager} {
		code, data := b.call("POST", a.path("/tasks/%d/confirm", id), nil)
		if code != http.StatusForbidden || errorOf(t, data) != "you need the updateProject permission in this project to approve or reject a task" {
			t.Errorf("confirm as %s = %d %s", who, code, data)
		}
		if code, data := b.call("POST", a.path("/tasks/%d/reject", id), map[string]string{"reason": "no"}); code != http.StatusForbidden {
			t.Errorf("reject as %s = %d %s", who, code, data)
		}
	}
	// An owner may not approve their own task.
	own := a.start(t, a.b)
	code, data := a.b.call("POST", a.path("/tasks/%d/confirm", own), nil)
	if code != http.StatusForbidden || errorOf(t, data) != "you started this task: another owner of the project must approve or reject it" {
		t.Errorf("self-approval = %d %s", code, data)
	}
	for _, task := range []int64{id, own} {
		if obj := a.taskObject(t, task); obj.Spec.Approval != nil || obj.Status.Status != bastionv1.TaskWaitingConfirmation {
			t.Fatalf("a refused call changed task %d: %+v %s", task, obj.Spec.Approval, obj.Status.Status)
		}
	}

	a.approver.must("POST", a.path("/tasks/%d/confirm", id), nil, http.StatusNoContent, nil)
	a.waitStatus(t, id, bastionv1.TaskStarting)
	eventually(t, approvalWait, func() (bool, string) {
		got := a.approvalOf(t, id)
		return got["status"] == "approved" && strings.Contains(fmt.Sprint(got["message"]), a.approverLogin), fmt.Sprint(got)
	})
	eventually(t, approvalWait, func() (bool, string) {
		return hasEventLike(t, a.tplProject, fmt.Sprintf("Task %d of Prod deploy approved by ", id), a.approverLogin), "no approval event"
	})
	// Decided once: a second decision is a conflict.
	if code, data := a.approver.call("POST", a.path("/tasks/%d/reject", id), nil); code != http.StatusConflict {
		t.Errorf("reject after approval = %d %s", code, data)
	}
}

func TestApprovals_rejectStopsTheTaskWithTheReason(t *testing.T) {
	a := newApprovalTeam(t)
	id := a.start(t, a.runner)
	long := strings.Repeat("x", 1001)
	if code, data := a.approver.call("POST", a.path("/tasks/%d/reject", id), map[string]string{"reason": long}); code != http.StatusBadRequest {
		t.Errorf("a 1001-character reason = %d %s", code, data)
	}
	if a.taskObject(t, id).Spec.Approval != nil {
		t.Fatal("a refused reject wrote a decision")
	}
	a.approver.must("POST", a.path("/tasks/%d/reject", id), map[string]string{"reason": "change freeze"}, http.StatusNoContent, nil)
	task := a.waitStatus(t, id, bastionv1.TaskStopped)
	if !strings.HasPrefix(task.Status.Message, "Rejected by ") || !strings.HasSuffix(task.Status.Message, ": change freeze") {
		t.Errorf("message = %q", task.Status.Message)
	}
	eventually(t, approvalWait, func() (bool, string) {
		got := a.approvalOf(t, id)
		return got["status"] == "rejected" && got["reason"] == "change freeze", fmt.Sprint(got)
	})
	if !hasEventLike(t, a.tplProject, fmt.Sprintf("Task %d of Prod deploy rejected by ", id), a.approverLogin) {
		t.Error("no rejection event")
	}
	// Reject is for tasks that wait for approval only.
	if code, data := a.approver.call("POST", a.path("/tasks/%d/reject", id), nil); code != http.StatusConflict {
		t.Errorf("reject of a stopped task = %d %s", code, data)
	}
}

// A runner's token is no user's: it cannot approve. (A task waiting for
// approval has no token at all: nothing ran.)
func TestApprovals_aRunnersTokenCannotApprove(t *testing.T) {
	a := newApprovalTeam(t)
	id := a.start(t, a.runner)
	plain := a.makeTemplate(t, "plain", "Plain")
	live := startLiveTask(t, a.tplProject, plain.ID)
	runner := a.e.browser(t)
	runner.header.Set("Authorization", "Bearer "+live.token)
	for _, path := range []string{"/tasks/%d/confirm", "/tasks/%d/reject"} {
		if code, data := runner.call("POST", a.path(path, id), nil); code != http.StatusUnauthorized {
			t.Errorf("POST %s with a runner's token = %d %s", path, code, data)
		}
	}
	if a.taskObject(t, id).Spec.Approval != nil {
		t.Fatal("a runner's token wrote a decision")
	}
}

// hasEventLike reports whether the project's events hold one whose
// description starts with prefix, recorded under username.
func hasEventLike(t *testing.T, p *tplProject, prefix, username string) bool {
	t.Helper()
	var events []struct {
		Description string `json:"description"`
		Username    string `json:"username"`
	}
	p.b.must("GET", p.path("/events/last"), nil, http.StatusOK, &events)
	for _, ev := range events {
		if strings.HasPrefix(ev.Description, prefix) && ev.Username == username {
			return true
		}
	}
	return false
}
