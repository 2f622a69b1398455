package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ViewSpec is a tab that groups templates in the template list.
type ViewSpec struct {
	// Title of the tab ("Title is required").
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self.trim().size() > 0",message="Title is required"
	Title string `json:"title"`

	// Position orders the tabs, lowest first.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Position int32 `json:"position,omitempty"`
}

// ViewStatus is what the controller observed.
type ViewStatus struct {
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

// View is a tab of the template list.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bview
// +kubebuilder:printcolumn:name="Title",type=string,JSONPath=`.spec.title`
// +kubebuilder:printcolumn:name="Position",type=integer,JSONPath=`.spec.position`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type View struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ViewSpec `json:"spec"`
	// +optional
	Status ViewStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ViewList is a list of Views.
type ViewList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []View `json:"items"`
}

func init() { SchemeBuilder.Register(&View{}, &ViewList{}) }
