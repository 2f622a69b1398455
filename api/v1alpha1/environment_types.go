package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EnvironmentSpec holds the variables a task runs with. The /api carries
// `json` and `env` as JSON text; here they are structured, so that the
// schema itself rejects what is not a JSON object and kubectl users write
// plain YAML.
type EnvironmentSpec struct {
	// DisplayName is the environment's name in the console ("Name is required").
	// +required
	// +kubebuilder:validation:MinLength=1
	DisplayName string `json:"displayName"`

	// ExtraVars (the /api's `json`) become ansible --extra-vars, terraform
	// -var and bash arguments.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	ExtraVars *apiextensionsv1.JSON `json:"extraVars,omitempty"`

	// Env (the /api's `env`) becomes process environment variables.
	// +optional
	Env map[string]string `json:"env,omitempty"`

	// SecretRef names a Secret with the secret variables: keys "var.NAME"
	// are extra variables, keys "env.NAME" environment variables, and the
	// key "password" is the /api's environment password (an ansible vault
	// password). Their values are never read back through the API.
	// +optional
	SecretRef *ObjectRef `json:"secretRef,omitempty"`
}

// Prefixes of the keys in an Environment's Secret.
const (
	EnvironmentSecretVarPrefix = "var."
	EnvironmentSecretEnvPrefix = "env."
	EnvironmentSecretPassword  = "password"
)

// EnvironmentStatus is what the controller observed.
type EnvironmentStatus struct {
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

// Environment is a set of variables of a project.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=benv
// +kubebuilder:printcolumn:name="Display name",type=string,JSONPath=`.spec.displayName`
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=`.spec.secretRef.name`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Environment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec EnvironmentSpec `json:"spec"`
	// +optional
	Status EnvironmentStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// EnvironmentList is a list of Environments.
type EnvironmentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Environment `json:"items"`
}

func init() { SchemeBuilder.Register(&Environment{}, &EnvironmentList{}) }
