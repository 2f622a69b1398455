package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// RepositorySpec is a git repository that templates run code from.
// +kubebuilder:validation:XValidation:rule="!self.gitURL.contains('://') || self.gitURL.matches('^(ssh|https|file|git)://')",message="Incorrect URL: the scheme must be ssh, https, file or git (or a local path starting with /)"
// +kubebuilder:validation:XValidation:rule="self.gitURL.startsWith('/') || (has(self.gitBranch) && self.gitBranch.size() > 0)",message="Branch is required unless the URL is a local path"
type RepositorySpec struct {
	// DisplayName is the repository's name in the console ("Name is required").
	// +required
	// +kubebuilder:validation:MinLength=1
	DisplayName string `json:"displayName"`

	// GitURL: a leading slash is a local path, no scheme is ssh
	// (user@host:path), and the schemes ssh, https, file and git are
	// accepted.
	// +required
	// +kubebuilder:validation:MinLength=1
	GitURL string `json:"gitURL"`

	// GitBranch is required unless GitURL is a local path.
	// +optional
	GitBranch string `json:"gitBranch,omitempty"`

	// SSHKeyRef names the access key (a key Secret) ("Key is required").
	// +required
	SSHKeyRef ObjectRef `json:"sshKeyRef"`
}

// RepositoryStatus is what the controller observed.
type RepositoryStatus struct {
	// ObservedGeneration is the generation of the spec the status
	// describes: when it equals metadata.generation, the controller has
	// seen the latest change.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready is True when the access key exists.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Repository is a git repository of a project.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=brepo
// +kubebuilder:printcolumn:name="Display name",type=string,JSONPath=`.spec.displayName`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.gitURL`
// +kubebuilder:printcolumn:name="Branch",type=string,JSONPath=`.spec.gitBranch`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Repository struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec RepositorySpec `json:"spec"`
	// +optional
	Status RepositoryStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// RepositoryList is a list of Repositories.
type RepositoryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Repository `json:"items"`
}

func init() { SchemeBuilder.Register(&Repository{}, &RepositoryList{}) }
