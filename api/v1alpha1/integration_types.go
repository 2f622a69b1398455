package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IntegrationAuthMethod is how an incoming webhook proves where it comes from.
// +kubebuilder:validation:Enum="";github;token;hmac
type IntegrationAuthMethod string

// The auth methods of docs/features.md §3; empty means no check.
const (
	AuthNone   IntegrationAuthMethod = ""
	AuthGitHub IntegrationAuthMethod = "github"
	AuthToken  IntegrationAuthMethod = "token"
	AuthHMAC   IntegrationAuthMethod = "hmac"
)

// IntegrationMatcher is one condition on an incoming request; all must hold.
// +kubebuilder:validation:XValidation:rule="self.matchType != 'body' || (has(self.bodyDataType) && self.bodyDataType.size() > 0)",message="Body data format is required when matching on body"
type IntegrationMatcher struct {
	// ID is the matcher's id in the /api; given by the API or the controller.
	// +optional
	ID int64 `json:"id,omitempty"`
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// MatchType: body or header.
	// +required
	// +kubebuilder:validation:Enum=body;header
	MatchType string `json:"matchType"`
	// Method: equals, unequals or contains.
	// +required
	// +kubebuilder:validation:Enum=equals;unequals;contains
	Method string `json:"method"`
	// BodyDataType: json (Key is a path such as commits.0.id) or string
	// (the whole body).
	// +optional
	// +kubebuilder:validation:Enum="";json;string
	BodyDataType string `json:"bodyDataType,omitempty"`
	// Key is the JSON path or the header name.
	// +required
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
	// +required
	// +kubebuilder:validation:MinLength=1
	Value string `json:"value"`
}

// IntegrationExtractValue takes a value from an incoming request into the
// new task's environment.
// +kubebuilder:validation:XValidation:rule="self.valueSource != 'body' || (has(self.bodyDataType) && self.bodyDataType.size() > 0)",message="Body data type is required when the source is body"
type IntegrationExtractValue struct {
	// +optional
	ID int64 `json:"id,omitempty"`
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// ValueSource: body or header.
	// +required
	// +kubebuilder:validation:Enum=body;header
	ValueSource string `json:"valueSource"`
	// +optional
	// +kubebuilder:validation:Enum="";json;string
	BodyDataType string `json:"bodyDataType,omitempty"`
	// +required
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
	// Variable is the environment variable name it becomes.
	// +required
	// +kubebuilder:validation:MinLength=1
	Variable string `json:"variable"`
}

// IntegrationSpec is an incoming webhook that starts a template.
// +kubebuilder:validation:XValidation:rule="!has(self.authMethod) || !(self.authMethod in ['token', 'hmac']) || (has(self.authHeader) && self.authHeader.size() > 0)",message="an auth header is required for token and hmac authentication"
// +kubebuilder:validation:XValidation:rule="!has(self.authMethod) || self.authMethod.size() == 0 || has(self.authSecretRef)",message="an auth secret (a login_password key) is required when an auth method is set"
type IntegrationSpec struct {
	// DisplayName of the integration ("Name is required").
	// +required
	// +kubebuilder:validation:MinLength=1
	DisplayName string `json:"displayName"`
	// TemplateRef names the template the webhook runs.
	// +optional
	TemplateRef *ObjectRef `json:"templateRef,omitempty"`
	// +optional
	AuthMethod IntegrationAuthMethod `json:"authMethod,omitempty"`
	// AuthHeader is the header that carries the token or signature.
	// +optional
	AuthHeader string `json:"authHeader,omitempty"`
	// AuthSecretRef names the login_password key whose password is the
	// shared secret.
	// +optional
	AuthSecretRef *ObjectRef `json:"authSecretRef,omitempty"`
	// Searchable integrations are reached through project-level aliases.
	// +optional
	Searchable bool `json:"searchable,omitempty"`
	// TaskParams are task fields (message, arguments, ...) for started tasks.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	TaskParams *apiextensionsv1.JSON `json:"taskParams,omitempty"`
	// +optional
	Matchers []IntegrationMatcher `json:"matchers,omitempty"`
	// +optional
	ExtractValues []IntegrationExtractValue `json:"extractValues,omitempty"`
}

// IntegrationStatus is what the controller observed.
type IntegrationStatus struct {
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

// Integration is an incoming webhook of a project.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bint
// +kubebuilder:printcolumn:name="Display name",type=string,JSONPath=`.spec.displayName`
// +kubebuilder:printcolumn:name="Template",type=string,JSONPath=`.spec.templateRef.name`
// +kubebuilder:printcolumn:name="Auth",type=string,JSONPath=`.spec.authMethod`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Integration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec IntegrationSpec `json:"spec"`
	// +optional
	Status IntegrationStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// IntegrationList is a list of Integrations.
type IntegrationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Integration `json:"items"`
}

// IntegrationAliasSpec is a public URL path that reaches an integration
// (or, with no IntegrationRef, every searchable integration of the project).
type IntegrationAliasSpec struct {
	// Alias is the last path segment of /api/integrations/<alias>: 16 or
	// more random URL-safe characters, so it cannot be guessed.
	// +required
	// +kubebuilder:validation:MinLength=16
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]+$`
	Alias string `json:"alias"`
	// IntegrationRef names the integration; empty for a project-level alias.
	// +optional
	IntegrationRef *ObjectRef `json:"integrationRef,omitempty"`
}

// IntegrationAliasStatus is what the controller observed.
type IntegrationAliasStatus struct {
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

// IntegrationAlias is a URL of an integration. Aliases are their own kind
// because a project-level alias belongs to no integration.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=balias
// +kubebuilder:printcolumn:name="Integration",type=string,JSONPath=`.spec.integrationRef.name`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type IntegrationAlias struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec IntegrationAliasSpec `json:"spec"`
	// +optional
	Status IntegrationAliasStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// IntegrationAliasList is a list of IntegrationAliases.
type IntegrationAliasList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IntegrationAlias `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Integration{}, &IntegrationList{}, &IntegrationAlias{}, &IntegrationAliasList{})
}
