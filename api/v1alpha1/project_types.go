package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProjectRole is a member's role in a project (docs/features.md §6).
// +kubebuilder:validation:Enum=owner;manager;task_runner;guest
type ProjectRole string

// The project roles of docs/features.md §6.
const (
	RoleOwner      ProjectRole = "owner"
	RoleManager    ProjectRole = "manager"
	RoleTaskRunner ProjectRole = "task_runner"
	RoleGuest      ProjectRole = "guest"
)

// ProjectMember links a User to the project with a role.
type ProjectMember struct {
	// User is the metadata.name of the User.
	// +required
	// +kubebuilder:validation:MinLength=1
	User string `json:"user"`
	// Role is the member's role in this project.
	// +required
	Role ProjectRole `json:"role"`
}

// ProjectSpec is what a project is: its name in the console, its team and
// its limits.
type ProjectSpec struct {
	// DisplayName is the project name shown in the console ("Project name is
	// required"). metadata.name must be a DNS name; this may be anything.
	// +required
	// +kubebuilder:validation:MinLength=1
	DisplayName string `json:"displayName"`

	// Alert allows alerts on task results in this project.
	// +optional
	Alert bool `json:"alert,omitempty"`

	// AlertChat is the chat id alerts go to.
	// +optional
	AlertChat string `json:"alertChat,omitempty"`

	// MaxParallelTasks limits how many tasks of this project run at once;
	// 0 means unlimited.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxParallelTasks int32 `json:"maxParallelTasks,omitempty"`

	// Type is empty for a normal project.
	// +optional
	Type string `json:"type,omitempty"`

	// Members is the project's team.
	// +optional
	// +listType=map
	// +listMapKey=user
	Members []ProjectMember `json:"members,omitempty"`

	// TaskPods are the defaults of the project's task pods; a template
	// may override them.
	// +optional
	TaskPods *TaskPodSettings `json:"taskPods,omitempty"`
}

// ProjectStatus is what the Project controller observed.
type ProjectStatus struct {
	// Namespace is the namespace that holds the project's resources.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready is True once the namespace exists and belongs to
	// this project.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Project is a Bastion project. It is cluster-scoped and owns one Namespace
// that holds every resource of the project.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=bproj
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && self.metadata.name.size() <= 55",message="a project name must be a DNS label of at most 55 characters (its namespace is bastion-<name>)"
// +kubebuilder:printcolumn:name="Display name",type=string,JSONPath=`.spec.displayName`
// +kubebuilder:printcolumn:name="Namespace",type=string,JSONPath=`.status.namespace`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Project struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ProjectSpec `json:"spec"`
	// +optional
	Status ProjectStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ProjectList is a list of Projects.
type ProjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Project `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Project{}, &ProjectList{})
}
