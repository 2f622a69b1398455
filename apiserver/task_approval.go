package apiserver

import (
	"fmt"
	"net/http"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// Approvals (docs/features.md, "Beyond the anchors"): a task of a template
// with require_approval waits in waiting_confirmation until an approver
// decides. The API records the decision in the Task's spec.approval and
// returns; the task reconciler checks it again and alone moves the task
// on, and records who decided in the event list.

// maxRejectReason is the schema's limit of spec.approval.reason.
const maxRejectReason = 1000

type rejectRequest struct {
	Reason string `json:"reason"`
}

// rejectTask serves POST /project/{id}/tasks/{task_id}/reject {reason}:
// the task ends stopped, with the reason in its message.
func (s *Server) rejectTask(w http.ResponseWriter, r *http.Request) {
	var req rejectRequest
	if !decodeOptional(w, r, &req) {
		return
	}
	if utf8.RuneCountInString(req.Reason) > maxRejectReason {
		fail(w, http.StatusBadRequest, fmt.Sprintf("reason: at most %d characters", maxRejectReason))
		return
	}
	s.changeTask(w, r, func(task *bastionv1.Task) (string, error) {
		if !task.AwaitingApproval() {
			return "", conflict(fmt.Sprintf("task %d is not waiting for approval (it is %s)", taskOf(r).id, statusOf(task.Status.Status)))
		}
		return "", s.decide(r, task, &bastionv1.TaskApproval{RejectedBy: who(r).user.Name, Reason: req.Reason})
	})
}

// decide writes an approver's decision on task, after the checks the
// reconciler makes again: the caller holds updateProject in the project
// (admins do), did not start the task, and nobody decided before them.
func (s *Server) decide(r *http.Request, task *bastionv1.Task, decision *bastionv1.TaskApproval) error {
	if !projectOf(r).can(permUpdateProject) {
		return forbidden("you need the updateProject permission in this project to approve or reject a task")
	}
	if task.Spec.User == who(r).user.Name {
		return forbidden("you started this task: another owner of the project must approve or reject it")
	}
	if task.Spec.Approval != nil && approvalReason(task) != bastionv1.ReasonApprovalRefused {
		return conflict(fmt.Sprintf("task %d was already approved or rejected", taskOf(r).id))
	}
	task.Spec.Approval = decision
	return nil
}

// approvalReason is the reason of the task's Approved condition ("": none).
func approvalReason(task *bastionv1.Task) string {
	if c := meta.FindStatusCondition(task.Status.Conditions, bastionv1.ConditionApproved); c != nil {
		return c.Reason
	}
	return ""
}

// taskApprovalJSON is the approval of a task whose template requires one,
// a Bastion addition to the task's shape (absent otherwise). Status is
// waiting, approved or rejected; message says who decided, or why a
// decision was refused; reason is a rejection's.
type taskApprovalJSON struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	Reason  string `json:"reason,omitempty"`
}

// approvalJSON renders the task's approval, or nil if it needs none.
func approvalJSON(task *bastionv1.Task) *taskApprovalJSON {
	c := meta.FindStatusCondition(task.Status.Conditions, bastionv1.ConditionApproved)
	if c == nil {
		return nil
	}
	out := &taskApprovalJSON{Status: "waiting", Message: c.Message}
	switch c.Status {
	case metav1.ConditionTrue:
		out.Status = "approved"
	case metav1.ConditionFalse:
		out.Status = "rejected"
	}
	if task.Spec.Approval != nil && c.Status == metav1.ConditionFalse {
		out.Reason = task.Spec.Approval.Reason
	}
	return out
}
