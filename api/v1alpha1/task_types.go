package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TaskStatusValue is a task's state (docs/features.md §4).
// +kubebuilder:validation:Enum=waiting;starting;waiting_confirmation;confirmed;running;success;error;stopping;stopped
type TaskStatusValue string

// The task states of docs/features.md §4.
const (
	TaskWaiting             TaskStatusValue = "waiting"
	TaskStarting            TaskStatusValue = "starting"
	TaskWaitingConfirmation TaskStatusValue = "waiting_confirmation"
	TaskConfirmed           TaskStatusValue = "confirmed"
	TaskRunning             TaskStatusValue = "running"
	TaskSuccess             TaskStatusValue = "success"
	TaskError               TaskStatusValue = "error"
	TaskStopping            TaskStatusValue = "stopping"
	TaskStopped             TaskStatusValue = "stopped"
)

// Finished reports whether the state is terminal.
func (s TaskStatusValue) Finished() bool {
	return s == TaskSuccess || s == TaskError || s == TaskStopped
}

// Active reports whether a task in this state holds a run slot.
func (s TaskStatusValue) Active() bool {
	switch s {
	case TaskStarting, TaskWaitingConfirmation, TaskConfirmed, TaskRunning, TaskStopping:
		return true
	}
	return false
}

// StopRequest asks for a task to be stopped.
// +kubebuilder:validation:Enum=graceful;force
type StopRequest string

// Stop requests: graceful goes through stopping; force is stopped at once.
const (
	StopGraceful StopRequest = "graceful"
	StopForce    StopRequest = "force"
)

// TaskSpec is one run of a template, with the user's choices.
// +kubebuilder:validation:XValidation:rule="self.templateRef == oldSelf.templateRef",message="a task's template cannot change"
type TaskSpec struct {
	// TemplateRef names the template to run.
	// +required
	TemplateRef ObjectRef `json:"templateRef"`

	// Message is the user's note on this run.
	// +optional
	Message string `json:"message,omitempty"`

	// ExtraVars (the /api's `environment`) are merged under the
	// Environment's variables; the Environment wins.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	ExtraVars *apiextensionsv1.JSON `json:"extraVars,omitempty"`

	// Arguments follow the template's, if the template allows it.
	// +optional
	Arguments []string `json:"arguments,omitempty"`

	// +optional
	Debug bool `json:"debug,omitempty"`
	// +optional
	DryRun bool `json:"dryRun,omitempty"`
	// +optional
	Diff bool `json:"diff,omitempty"`

	// SecretRef names a Secret with this run's secret values (the /api's
	// `secret`: answers to secret survey variables), keys "var.NAME" and
	// "env.NAME" as in an Environment's Secret. Never part of the spec
	// itself, so reading a Task never shows them.
	// +optional
	SecretRef *ObjectRef `json:"secretRef,omitempty"`

	// Playbook overrides the template's.
	// +optional
	Playbook string `json:"playbook,omitempty"`
	// Limit is passed to ansible --limit.
	// +optional
	Limit string `json:"limit,omitempty"`
	// GitBranch overrides the template's and the repository's branch.
	// +optional
	GitBranch string `json:"gitBranch,omitempty"`
	// CommitHash checks out this commit instead of the branch head.
	// +optional
	CommitHash string `json:"commitHash,omitempty"`
	// InventoryRef overrides the template's inventory.
	// +optional
	InventoryRef *ObjectRef `json:"inventoryRef,omitempty"`

	// BuildTaskRef names the successful build task whose version a deploy
	// task deploys ("Build version is required").
	// +optional
	BuildTaskRef *ObjectRef `json:"buildTaskRef,omitempty"`

	// User is the metadata.name of the User who started the task; empty for
	// schedules and integrations.
	// +optional
	User string `json:"user,omitempty"`
	// ScheduleRef names the schedule that started the task.
	// +optional
	ScheduleRef *ObjectRef `json:"scheduleRef,omitempty"`
	// IntegrationRef names the integration that started the task.
	// +optional
	IntegrationRef *ObjectRef `json:"integrationRef,omitempty"`

	// Confirmed answers a task in waiting_confirmation (a Terraform plan):
	// true lets it apply.
	// +optional
	Confirmed bool `json:"confirmed,omitempty"`

	// Approval is an approver's decision on a task whose template requires
	// approval: the API writes it for POST .../confirm (approvedBy) and
	// .../reject (rejectedBy, reason), after checking the caller. The task
	// reconciler checks it again (an owner of the project who did not start
	// the task) and alone moves the task on. See docs/security.md for what
	// writing it with kubectl means.
	// +optional
	Approval *TaskApproval `json:"approval,omitempty"`

	// Stop asks for the task to stop: graceful (stopping, then stopped) or
	// force (stopped at once, the run killed).
	// +optional
	Stop StopRequest `json:"stop,omitempty"`
}

// TaskApproval is one decision on a task that waits for approval: either
// approvedBy or rejectedBy names the User (metadata.name) who decided.
// +kubebuilder:validation:XValidation:rule="has(self.approvedBy) != has(self.rejectedBy)",message="an approval names either approvedBy or rejectedBy"
type TaskApproval struct {
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ApprovedBy string `json:"approvedBy,omitempty"`
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	RejectedBy string `json:"rejectedBy,omitempty"`
	// Reason is the approver's word, shown in a rejected task's message.
	// +optional
	// +kubebuilder:validation:MaxLength=1000
	Reason string `json:"reason,omitempty"`
}

// Approver is the User who decided, whichever way.
func (a *TaskApproval) Approver() string {
	if a == nil {
		return ""
	}
	if a.ApprovedBy != "" {
		return a.ApprovedBy
	}
	return a.RejectedBy
}

// MessageWaitingForApproval is the message of a task that waits for its
// approval (status waiting_confirmation, before any run).
const MessageWaitingForApproval = "Waiting for approval"

// AwaitingApproval reports whether the task waits for an approver: it is
// in waiting_confirmation with its Approved condition Unknown, before any
// run started (a Terraform plan's confirmation comes from a running run,
// and never has that condition).
func (t *Task) AwaitingApproval() bool {
	if t.Status.Status != TaskWaitingConfirmation {
		return false
	}
	for _, c := range t.Status.Conditions {
		if c.Type == ConditionApproved {
			return c.Status == metav1.ConditionUnknown
		}
	}
	return false
}

// TaskStatus is the state of the run.
type TaskStatus struct {
	// Status is the task's state (docs/features.md §4).
	// +optional
	Status TaskStatusValue `json:"status,omitempty"`

	// Start is when the run started; End when it finished.
	// +optional
	Start *metav1.Time `json:"start,omitempty"`
	// +optional
	End *metav1.Time `json:"end,omitempty"`

	// Version of a build or deploy task.
	// +optional
	Version string `json:"version,omitempty"`

	// CommitHash and CommitMessage of the checkout: the reconciler's copy
	// of run.commit.
	// +optional
	CommitHash string `json:"commitHash,omitempty"`
	// +optional
	CommitMessage string `json:"commitMessage,omitempty"`

	// Message says why the task is in its state, for errors in particular.
	// +optional
	Message string `json:"message,omitempty"`

	// RunName names the run: the Job, or the local process's directory.
	// +optional
	RunName string `json:"runName,omitempty"`

	// Run is what the task's runner reported of its run. The runner
	// endpoint alone writes it (server-side apply, field manager
	// RunFieldManager); the reconciler derives the fields above from it
	// and from the launcher's view of the run, and never writes it.
	// +optional
	Run *TaskRun `json:"run,omitempty"`

	// ObservedGeneration is the spec generation the status was derived from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready is True once the task succeeded, False once it
	// failed or stopped, Unknown while it waits or runs (its reason is the
	// state); Queued says why a waiting task waits; Alerted marks a
	// finished task whose alerts were queued.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RunFieldManager is the field manager of status.run: the runner endpoint
// of the API server, which applies it from the runner's reports.
const RunFieldManager = "bastion-runner-endpoint"

// TaskRun holds the facts a runner reported: never a verdict on the task,
// which is the reconciler's.
type TaskRun struct {
	// Phase is the phase the runner last reported: running, or
	// waiting_confirmation while a Terraform plan waits for spec.confirmed.
	// +optional
	// +kubebuilder:validation:Enum=running;waiting_confirmation
	Phase string `json:"phase,omitempty"`

	// Commit is the commit the runner checked out.
	// +optional
	Commit *TaskRunCommit `json:"commit,omitempty"`

	// Exit is how the runner said its run ended, recorded once every line
	// of the output was stored: the run is over even if its process (or
	// pod) has not gone yet.
	// +optional
	Exit *TaskRunExit `json:"exit,omitempty"`
}

// TaskRunCommit is a checkout's commit.
type TaskRunCommit struct {
	// +optional
	Hash string `json:"hash,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// TaskRunExit is how a run ended, as its runner reported.
type TaskRunExit struct {
	// Code is the program's exit code; -1 when it never ran.
	Code int32 `json:"code"`
	// Message says what went wrong before or around the program (a failed
	// clone, a path outside the checkout).
	// +optional
	Message string `json:"message,omitempty"`
	// Lines is how many output lines the run had, all of them stored.
	// +optional
	Lines int64 `json:"lines,omitempty"`
	// Time is when the manager recorded the exit.
	Time metav1.Time `json:"time"`
}

// Task is one run of a template.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=btask
// +kubebuilder:printcolumn:name="Template",type=string,JSONPath=`.spec.templateRef.name`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.status`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="User",type=string,JSONPath=`.spec.user`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Task struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec TaskSpec `json:"spec"`
	// +optional
	Status TaskStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TaskList is a list of Tasks.
type TaskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Task `json:"items"`
}

func init() { SchemeBuilder.Register(&Task{}, &TaskList{}) }
