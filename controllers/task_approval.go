package controllers

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// holdForApproval puts a new task of a template that requires approval in
// waiting_confirmation, before its queue and before any run: an approval
// can take hours, and a task that waits for one holds no run slot.
func (r *TaskReconciler) holdForApproval(task *bastionv1.Task) {
	setTaskCondition(task, bastionv1.ConditionApproved, metav1.ConditionUnknown, bastionv1.ReasonWaitingForApproval, "waiting for a project owner other than the one who started it")
	r.transition(task, bastionv1.TaskWaitingConfirmation, bastionv1.MessageWaitingForApproval)
}

// reconcileApproval moves a task that waits for approval on by its
// spec.approval, whichever door wrote it: approved, it joins the project's
// queue; rejected, it ends stopped with the approver's reason. Until then
// the approvers are alerted, once.
func (r *TaskReconciler) reconcileApproval(ctx context.Context, task *bastionv1.Task) (ctrl.Result, error) {
	if task.Spec.Stop != "" {
		r.transition(task, bastionv1.TaskStopped, "stopped before it started")
		return ctrl.Result{}, nil
	}
	decision := task.Spec.Approval
	if decision == nil {
		return ctrl.Result{}, r.alertApprovers(ctx, task)
	}
	approver, problem, err := r.approver(ctx, task, decision.Approver())
	if err != nil || problem != "" {
		if problem != "" {
			setTaskCondition(task, bastionv1.ConditionApproved, metav1.ConditionUnknown, bastionv1.ReasonApprovalRefused, problem)
		}
		return ctrl.Result{}, err
	}
	who := r.userLabel(ctx, approver.Name)
	if decision.RejectedBy != "" {
		setTaskCondition(task, bastionv1.ConditionApproved, metav1.ConditionFalse, bastionv1.ReasonRejected, "rejected by "+who)
		r.transition(task, bastionv1.TaskStopped, rejectionMessage(who, decision.Reason))
		r.taskEventBy(ctx, task, approver, "rejected by "+who)
		return ctrl.Result{}, nil
	}
	setTaskCondition(task, bastionv1.ConditionApproved, metav1.ConditionTrue, bastionv1.ReasonApproved, "approved by "+who)
	task.Status.Message = ""
	r.transition(task, bastionv1.TaskWaiting, "")
	r.taskEventBy(ctx, task, approver, "approved by "+who)
	return r.reconcileWaiting(ctx, task)
}

// rejectionMessage is a rejected task's message: who, and why if they
// said.
func rejectionMessage(who, reason string) string {
	if reason == "" {
		return "Rejected by " + who
	}
	return fmt.Sprintf("Rejected by %s: %s", who, reason)
}

// approver is the User named by a task's approval if they may decide on
// it; otherwise problem says why not. The rule is the API's, checked again
// here because a Task can be written with kubectl: an administrator, or a
// member whose role holds updateProject (the owner), and never the user
// who started the task.
func (r *TaskReconciler) approver(ctx context.Context, task *bastionv1.Task, name string) (*bastionv1.User, string, error) {
	if name == task.Spec.User {
		return nil, fmt.Sprintf("%s started this task and cannot approve or reject it", name), nil
	}
	user := &bastionv1.User{}
	if err := r.Get(ctx, client.ObjectKey{Name: name}, user); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, fmt.Sprintf("user %s does not exist", name), nil
		}
		return nil, "", err
	}
	if user.Spec.Admin {
		return user, "", nil
	}
	project := &bastionv1.Project{}
	if err := r.Get(ctx, client.ObjectKey{Name: bastionv1.ProjectOfNamespace(task.Namespace)}, project); err != nil {
		return nil, "", err
	}
	for _, m := range project.Spec.Members {
		if m.User == name && mayApprove(m) {
			return user, "", nil
		}
	}
	return nil, fmt.Sprintf("%s may not approve tasks of this project (it needs the updateProject permission)", name), nil
}

// mayApprove: the project roles that hold updateProject (docs/features.md
// §6; apiserver's rolePermissions): the owner's alone.
func mayApprove(m bastionv1.ProjectMember) bool { return m.Role == bastionv1.RoleOwner }

// alertApprovers tells the members who may approve the task (not its own
// starter) that it waits, through the project's alert channels, once. The
// mark is kept in task too, so that this reconcile's own status write
// does not drop it.
func (r *TaskReconciler) alertApprovers(ctx context.Context, task *bastionv1.Task) error {
	marked, err := r.alertOnce(ctx, task, bastionv1.ConditionApprovalAlerted, "the approvers were alerted",
		func(m bastionv1.ProjectMember) bool { return mayApprove(m) && m.User != task.Spec.User })
	if marked != nil {
		task.Status.Conditions = marked.Status.Conditions
	}
	return err
}
