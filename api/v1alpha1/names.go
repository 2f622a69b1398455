package v1alpha1

// Label keys Bastion puts on the objects it owns or indexes.
const (
	// LabelID carries the integer id that the /api contract uses for an object.
	LabelID = "automation.bastion.dev/id"
	// LabelProject marks an object (a project's Namespace, a user's password
	// Secret) with the name of the Project or User it belongs to.
	LabelProject = "automation.bastion.dev/project"
	// LabelUser marks a Secret that holds a User's password hash.
	LabelUser = "automation.bastion.dev/user"
)

// Condition types shared by every kind.
const (
	// ConditionReady is True when the object's controller has brought the
	// world in line with its spec.
	ConditionReady = "Ready"
)

// Condition reasons.
const (
	// ReasonReconciled: the last reconcile finished without error.
	ReasonReconciled = "Reconciled"
	// ReasonNamespaceConflict: the namespace a Project wants exists and belongs
	// to something else, so the Project cannot take it.
	ReasonNamespaceConflict = "NamespaceConflict"
	// ReasonReconcileError: the last reconcile failed; the message says why.
	ReasonReconcileError = "ReconcileError"
)

// Finalizers.
const (
	// ProjectFinalizer lets the Project controller delete the project's
	// namespace explicitly: the embedded control plane of `bastion dev` runs
	// no garbage collector, so owner references alone would leave it behind.
	ProjectFinalizer = "automation.bastion.dev/project-namespace"
)
