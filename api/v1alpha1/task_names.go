package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
)

// TaskRunName is the name of a task's run (its Job, its local run
// directory): the task's name, cut and hashed when longer than a Job name
// may be. The one rule, for the reconciler that starts the run and the API
// that authenticates its runner.
func TaskRunName(task *Task) string {
	const max = 52 // Job names feed pod labels of at most 63 characters
	if len(task.Name) <= max {
		return task.Name
	}
	sum := sha256.Sum256([]byte(task.Name))
	return task.Name[:max-7] + "-" + hex.EncodeToString(sum[:])[:6]
}

// TaskInputSecretName names the Secret with a task's runspec and its
// runner's token.
func TaskInputSecretName(task *Task) string { return TaskRunName(task) + "-input" }

// Task condition types and reasons.
const (
	// ConditionQueued is True while a waiting task waits; the reason and
	// message say for what.
	ConditionQueued = "Queued"

	// ReasonProjectLimit: the project's maxParallelTasks are running.
	ReasonProjectLimit = "ProjectLimit"
	// ReasonGlobalLimit: the manager's global limit of running tasks is reached.
	ReasonGlobalLimit = "GlobalLimit"
	// ReasonQueuedBehind: older tasks of the project wait for the same slot.
	ReasonQueuedBehind = "QueuedBehindOlderTasks"

	// ReasonWaitingForTemplate (Ready=False): the task's template does not
	// exist yet. A GitOps apply has no order, so a task may arrive before
	// its template; it stays waiting, and fails only after a grace period.
	ReasonWaitingForTemplate = "WaitingForTemplate"
	// ReasonWaitingForInputs (Ready=False): the template exists, but
	// something the run needs (repository, environment, inventory, key,
	// secret, build task) does not yet; the message names it.
	ReasonWaitingForInputs = "WaitingForInputs"
)

// Labels and annotations on Tasks.
const (
	// LabelAutorunOf marks a task queued by autorun with the name of the
	// successful build task that queued it.
	LabelAutorunOf = "automation.bastion.dev/autorun-of"
	// AnnotationPruned marks a finished task that retention deletes: its
	// history (stored output and summary) stays, where a user's delete of
	// a task takes it along.
	AnnotationPruned = "automation.bastion.dev/pruned"
)

// IndexTaskTemplate is the field index of Tasks by the name of their
// template, registered by the manager and used by the controllers and the
// API server alike.
const IndexTaskTemplate = ".spec.templateRef.name"

// The alert marker on a finished Task.
const (
	// ConditionAlerted is set once a finished task's alerts were handed to
	// the sender, before they are sent: a repeated finish, or a restarted
	// manager, finds it and never sends them again.
	ConditionAlerted = "Alerted"
	// ReasonAlertsQueued: the alerts were queued for sending.
	ReasonAlertsQueued = "AlertsQueued"
)

// The approval of a task whose template requires it.
const (
	// ConditionApproved is Unknown while the task waits for approval, True
	// once approved, False once rejected; its message names the approver.
	ConditionApproved = "Approved"
	// ReasonWaitingForApproval (Approved=Unknown): nobody decided yet.
	ReasonWaitingForApproval = "WaitingForApproval"
	// ReasonApprovalRefused (Approved=Unknown): spec.approval names someone
	// who may not decide (the task's own starter, or not an owner of the
	// project); the task goes on waiting for a valid decision.
	ReasonApprovalRefused = "ApprovalRefused"
	// ReasonApproved (Approved=True) and ReasonRejected (Approved=False).
	ReasonApproved = "Approved"
	ReasonRejected = "Rejected"

	// ConditionApprovalAlerted is set once the approvers' alerts about a
	// task waiting for approval were queued, so they go out once.
	ConditionApprovalAlerted = "ApprovalAlerted"
)
