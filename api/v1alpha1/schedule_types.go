package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ScheduleSpec starts tasks of a template on a cron schedule.
type ScheduleSpec struct {
	// DisplayName of the schedule.
	// +optional
	DisplayName string `json:"displayName,omitempty"`

	// TemplateRef names the template to run.
	// +required
	TemplateRef ObjectRef `json:"templateRef"`

	// CronFormat has five fields, as robfig/cron's standard parser reads
	// them, for example "0 0 * * *". The controller reports a bad one in
	// the Ready condition; the API refuses it before saving.
	// +required
	// +kubebuilder:validation:MinLength=1
	CronFormat string `json:"cronFormat"`

	// Active schedules fire; inactive ones don't.
	// +optional
	// +kubebuilder:default=true
	Active bool `json:"active"`

	// RunOnlyOnNewCommit skips a firing when the branch head of
	// RepositoryRef (else the template's repository) has not moved.
	// +optional
	RunOnlyOnNewCommit bool `json:"runOnlyOnNewCommit,omitempty"`

	// RepositoryRef names the repository whose head is checked.
	// +optional
	RepositoryRef *ObjectRef `json:"repositoryRef,omitempty"`
}

// ScheduleStatus is what the controller observed.
type ScheduleStatus struct {
	// ObservedGeneration is the generation of the spec the status
	// describes: when it equals metadata.generation, the controller has
	// seen the latest change.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// LastRunTime is the last minute the schedule fired (or was skipped).
	// +optional
	LastRunTime *metav1.Time `json:"lastRunTime,omitempty"`
	// NextRunTime is the next minute it will fire.
	// +optional
	NextRunTime *metav1.Time `json:"nextRunTime,omitempty"`
	// LastCommit is the branch head seen at the last firing.
	// +optional
	LastCommit string `json:"lastCommit,omitempty"`
	// LastTask names the newest task this schedule started.
	// +optional
	LastTask string `json:"lastTask,omitempty"`
	// Conditions: Ready is False with the parser's message for a bad cron.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Schedule runs a template on a cron schedule.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bsched
// +kubebuilder:printcolumn:name="Template",type=string,JSONPath=`.spec.templateRef.name`
// +kubebuilder:printcolumn:name="Cron",type=string,JSONPath=`.spec.cronFormat`
// +kubebuilder:printcolumn:name="Active",type=boolean,JSONPath=`.spec.active`
// +kubebuilder:printcolumn:name="Next run",type=string,JSONPath=`.status.nextRunTime`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Schedule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ScheduleSpec `json:"spec"`
	// +optional
	Status ScheduleStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ScheduleList is a list of Schedules.
type ScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Schedule `json:"items"`
}

func init() { SchemeBuilder.Register(&Schedule{}, &ScheduleList{}) }
