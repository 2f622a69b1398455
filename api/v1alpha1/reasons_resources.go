package v1alpha1

// Condition reasons of the kinds that refer to other objects by name.
const (
	// ReasonMissingReference: an object this one refers to by name does not
	// exist in its namespace (or, for a key, is a Secret without
	// LabelKeyType); the message names each one.
	ReasonMissingReference = "MissingReference"
)
