package v1alpha1

// ObjectRef names another object in the same namespace. Bastion objects
// refer to each other by name; the API maps names to integer ids.
type ObjectRef struct {
	// Name of the referenced object.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}
