package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// InventoryType says how Inventory.spec.inventory is read.
// +kubebuilder:validation:Enum=static;static-yaml;file;terraform-workspace
type InventoryType string

// The inventory types of docs/features.md §3 and api-contract.md.
const (
	InventoryStatic             InventoryType = "static"
	InventoryStaticYAML         InventoryType = "static-yaml"
	InventoryFile               InventoryType = "file"
	InventoryTerraformWorkspace InventoryType = "terraform-workspace"
)

// InventorySpec is the hosts a task runs against and the credentials used.
// +kubebuilder:validation:XValidation:rule="self.type != 'file' || (has(self.inventory) && self.inventory.size() > 0)",message="Path to Inventory file is required"
// +kubebuilder:validation:XValidation:rule="self.type != 'file' || !has(self.inventory) || !(self.inventory.startsWith('/') || self.inventory == '..' || self.inventory.startsWith('../') || self.inventory.contains('/../') || self.inventory.endsWith('/..'))",message="the inventory file must be a relative path inside the repository"
type InventorySpec struct {
	// DisplayName is the inventory's name in the console ("Name is required").
	// +required
	// +kubebuilder:validation:MinLength=1
	DisplayName string `json:"displayName"`

	// Type: static (INI text), static-yaml (YAML text), file (a path in the
	// repository) or terraform-workspace ("Type is required").
	// +required
	Type InventoryType `json:"type"`

	// Inventory is the content, or the path for type file.
	// +optional
	Inventory string `json:"inventory,omitempty"`

	// SSHKeyRef names the user credentials ("User credentials is required").
	// +required
	SSHKeyRef ObjectRef `json:"sshKeyRef"`

	// BecomeKeyRef names the sudo credentials.
	// +optional
	BecomeKeyRef *ObjectRef `json:"becomeKeyRef,omitempty"`

	// RepositoryRef names the repository that holds a file inventory, when
	// it is not the template's.
	// +optional
	RepositoryRef *ObjectRef `json:"repositoryRef,omitempty"`
}

// InventoryStatus is what the controller observed.
type InventoryStatus struct {
	// ObservedGeneration is the generation of the spec the status
	// describes: when it equals metadata.generation, the controller has
	// seen the latest change.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready is True when the referenced keys exist.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Inventory is a project's inventory.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=binv
// +kubebuilder:printcolumn:name="Display name",type=string,JSONPath=`.spec.displayName`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Inventory struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec InventorySpec `json:"spec"`
	// +optional
	Status InventoryStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// InventoryList is a list of Inventories.
type InventoryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Inventory `json:"items"`
}

func init() { SchemeBuilder.Register(&Inventory{}, &InventoryList{}) }
