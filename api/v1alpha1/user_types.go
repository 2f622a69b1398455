package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UserSpec is a console user (docs/features.md §3). The password hash is not here: it
// lives in a Secret in the manager's namespace, labelled with LabelUser, so
// that reading Users never exposes it.
type UserSpec struct {
	// Username is the sign-in name ("Username is required").
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Username string `json:"username"`

	// Name is the display name ("Name is required").
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Email ("Email is required").
	// +required
	// +kubebuilder:validation:MinLength=1
	Email string `json:"email"`

	// Admin users pass every permission check.
	// +optional
	Admin bool `json:"admin,omitempty"`

	// Alert: send this user alerts on task results.
	// +optional
	Alert bool `json:"alert,omitempty"`

	// External users sign in through an identity provider; their fields
	// are not editable in the console.
	// +optional
	External bool `json:"external,omitempty"`

	// CanCreateProject lets a user who is not an admin create (and restore)
	// projects; admins always can.
	// +optional
	CanCreateProject bool `json:"canCreateProject,omitempty"`
}

// UserStatus is what the controllers observed about a User.
type UserStatus struct {
	// ObservedGeneration is the generation of the spec the status
	// describes: when it equals metadata.generation, the controller has
	// seen the latest change.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// User is a person who signs in to the console.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=buser
// +kubebuilder:printcolumn:name="Username",type=string,JSONPath=`.spec.username`
// +kubebuilder:printcolumn:name="Full name",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Email",type=string,JSONPath=`.spec.email`
// +kubebuilder:printcolumn:name="Admin",type=boolean,JSONPath=`.spec.admin`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type User struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec UserSpec `json:"spec"`
	// +optional
	Status UserStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// UserList is a list of Users.
type UserList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []User `json:"items"`
}

func init() {
	SchemeBuilder.Register(&User{}, &UserList{})
}
