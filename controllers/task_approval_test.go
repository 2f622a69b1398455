package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/alert/alerttest"
)

// approvalProject is a project whose template "guarded" requires approval,
// with the named members (user: role); every member is a User.
func approvalProject(t *testing.T, name string, maxParallel int32, alertOn bool, members map[string]bastionv1.ProjectRole) *taskProject {
	t.Helper()
	for user := range members {
		alertUser(t, user, true)
	}
	p := newTaskProjectWith(t, name, func(p *bastionv1.Project) {
		p.Spec.MaxParallelTasks, p.Spec.Alert, p.Spec.AlertChat = maxParallel, alertOn, "-4242"
		for user, role := range members {
			p.Spec.Members = append(p.Spec.Members, bastionv1.ProjectMember{User: user, Role: role})
		}
	})
	p.template("guarded", func(s *bastionv1.TemplateSpec) { s.RequireApproval = true })
	return p
}

// approval is the task's Approved condition (nil: none).
func (p *taskProject) approval(name string) *metav1.Condition {
	return meta.FindStatusCondition(p.get(name).Status.Conditions, bastionv1.ConditionApproved)
}

// descriptions are the project's events, newest first, as one text.
func (p *taskProject) descriptions(name string) string {
	list, err := suiteStore.Events(context.Background(), []int64{p.key(name).ProjectID}, 50)
	p.g.Expect(err).NotTo(HaveOccurred())
	var all []string
	for _, e := range list {
		all = append(all, e.Username+": "+e.Description)
	}
	return strings.Join(all, "\n")
}

// A task of a template that requires approval waits before any run and
// holds no run slot; a decision by its own starter or by a member without
// updateProject is refused; an owner's approval queues it and it runs.
// Every write here is a plain Kubernetes update, as kubectl would make.
func TestTaskApproval_waitsWithoutARunUntilAnotherOwnerApproves(t *testing.T) {
	p := approvalProject(t, "approve-run", 1, false, map[string]bastionv1.ProjectRole{
		"apr-starter": bastionv1.RoleOwner, "apr-manager": bastionv1.RoleManager, "apr-owner": bastionv1.RoleOwner,
	})
	p.task("guarded-1", "guarded", func(s *bastionv1.TaskSpec) { s.User = "apr-starter" })
	task := p.waitStatus("guarded-1", bastionv1.TaskWaitingConfirmation)
	p.g.Expect(task.Status.Message).To(Equal("Waiting for approval"))
	p.g.Expect(task.Status.Start).To(BeNil(), "nothing started")
	p.g.Expect(task.Status.RunName).To(BeEmpty())
	p.g.Expect(p.approval("guarded-1").Reason).To(Equal(bastionv1.ReasonWaitingForApproval))

	// The project runs one task at a time: the waiting one holds no slot.
	p.task("plain", "deploy-site", nil)
	p.runToEnd("plain", true)
	p.g.Expect(jobExists(p.ns, "guarded-1")).To(BeFalse())

	for _, who := range []string{"apr-starter", "apr-manager", "nobody-at-all"} {
		p.update("guarded-1", func(t *bastionv1.Task) { t.Spec.Approval = &bastionv1.TaskApproval{ApprovedBy: who} })
		p.g.Eventually(func() string { return p.approval("guarded-1").Message }, timeout, interval).Should(ContainSubstring(who))
		cond := p.approval("guarded-1")
		p.g.Expect(cond.Status).To(Equal(metav1.ConditionUnknown))
		p.g.Expect(cond.Reason).To(Equal(bastionv1.ReasonApprovalRefused))
		p.g.Expect(p.get("guarded-1").Status.Status).To(Equal(bastionv1.TaskWaitingConfirmation))
		p.g.Expect(jobExists(p.ns, "guarded-1")).To(BeFalse(), "%s may not approve", who)
	}

	p.update("guarded-1", func(t *bastionv1.Task) { t.Spec.Approval = &bastionv1.TaskApproval{ApprovedBy: "apr-owner"} })
	p.runToEnd("guarded-1", true)
	cond := p.approval("guarded-1")
	p.g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
	p.g.Expect(cond.Message).To(Equal("approved by Apr-owner (apr-owner)"))
	p.g.Eventually(func() string { return p.descriptions("guarded-1") }, timeout, interval).Should(ContainSubstring(
		fmt.Sprintf("apr-owner: Task %d of guarded approved by Apr-owner (apr-owner)", p.key("guarded-1").TaskID)))
}

// A rejection ends the task stopped, with the approver's reason, and
// nothing ever ran; a stop while it waits ends it too.
func TestTaskApproval_rejectionStopsTheTaskWithTheReason(t *testing.T) {
	p := approvalProject(t, "approve-reject", 0, false, map[string]bastionv1.ProjectRole{
		"rej-runner": bastionv1.RoleTaskRunner, "rej-owner": bastionv1.RoleOwner,
	})
	p.task("guarded-1", "guarded", func(s *bastionv1.TaskSpec) { s.User = "rej-runner" })
	p.waitStatus("guarded-1", bastionv1.TaskWaitingConfirmation)
	p.update("guarded-1", func(t *bastionv1.Task) {
		t.Spec.Approval = &bastionv1.TaskApproval{RejectedBy: "rej-owner", Reason: "change freeze until Monday"}
	})
	task := p.finished("guarded-1")
	p.g.Expect(task.Status.Status).To(Equal(bastionv1.TaskStopped))
	p.g.Expect(task.Status.Message).To(Equal("Rejected by Rej-owner (rej-owner): change freeze until Monday"))
	p.g.Expect(task.Status.Start).To(BeNil())
	p.g.Expect(jobExists(p.ns, "guarded-1")).To(BeFalse())
	p.g.Expect(p.approval("guarded-1").Status).To(Equal(metav1.ConditionFalse))
	p.g.Eventually(func() string { return p.descriptions("guarded-1") }, timeout, interval).Should(ContainSubstring("rej-owner: Task"))
	p.g.Expect(p.descriptions("guarded-1")).To(ContainSubstring("of guarded rejected by Rej-owner (rej-owner)"))

	p.task("guarded-2", "guarded", func(s *bastionv1.TaskSpec) { s.User = "rej-runner" })
	p.waitStatus("guarded-2", bastionv1.TaskWaitingConfirmation)
	p.update("guarded-2", func(t *bastionv1.Task) { t.Spec.Stop = bastionv1.StopGraceful })
	p.g.Expect(p.finished("guarded-2").Status.Message).To(Equal("stopped before it started"))
}

// The approvers (owners, but not the one who started the task) are told
// through the project's channels when a task starts waiting, once.
func TestTaskApproval_alertsTheApproversOnce(t *testing.T) {
	p := approvalProject(t, "approve-alert", 0, true, map[string]bastionv1.ProjectRole{
		"ala-starter": bastionv1.RoleOwner, "ala-owner": bastionv1.RoleOwner, "ala-runner": bastionv1.RoleTaskRunner,
	})
	p.task("guarded-1", "guarded", func(s *bastionv1.TaskSpec) { s.User = "ala-starter"; s.Message = "hotfix" })
	p.waitStatus("guarded-1", bastionv1.TaskWaitingConfirmation)
	id := p.key("guarded-1").TaskID
	p.g.Eventually(func() []alerttest.Mail { return mailsOf("approve-alert") }, timeout, interval).Should(HaveLen(1))
	mail := mailsOf("approve-alert")[0]
	p.g.Expect(mail.To).To(Equal([]string{"ala-owner@example.com"}), "the starter and a task runner are not approvers")
	p.g.Expect(mail.Subject()).To(Equal(fmt.Sprintf("[Project approve-alert] guarded waits for approval (task #%d)", id)))
	p.g.Expect(mail.Body()).To(And(ContainSubstring("Started by: Ala-starter (ala-starter)"), ContainSubstring("Message:    hotfix"),
		ContainSubstring("Nothing runs until a project owner other than the one who started it approves it.")))
	p.g.Eventually(func() []string { return chatsOf(suiteTelegram, "approve-alert") }, timeout, interval).Should(HaveLen(1))
	p.g.Expect(chatsOf(suiteTelegram, "approve-alert")[0]).To(ContainSubstring("waits for approval"))
	p.g.Expect(meta.FindStatusCondition(p.get("guarded-1").Status.Conditions, bastionv1.ConditionApprovalAlerted)).NotTo(BeNil())

	// A refused decision reconciles the task again: no second alert.
	p.update("guarded-1", func(t *bastionv1.Task) { t.Spec.Approval = &bastionv1.TaskApproval{ApprovedBy: "ala-runner"} })
	p.g.Eventually(func() string { return p.approval("guarded-1").Reason }, timeout, interval).Should(Equal(bastionv1.ReasonApprovalRefused))
	p.g.Consistently(func() int { return len(mailsOf("approve-alert")) + len(chatsOf(suiteTelegram, "approve-alert")) }, "1s", interval).Should(Equal(2))
	p.g.Expect(meta.FindStatusCondition(p.get("guarded-1").Status.Conditions, bastionv1.ConditionApprovalAlerted)).NotTo(BeNil(), "the mark survives later status writes")
}
