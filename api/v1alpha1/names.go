package v1alpha1

import "strings"

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
	// ReasonNoPassword: a User who is not external has no password yet.
	ReasonNoPassword = "NoPassword"
	// ReasonLoginConflict: a User's username or email is another User's
	// login too, so that login signs in neither of them.
	ReasonLoginConflict = "LoginConflict"
	// ReasonReconcileError: the last reconcile failed; the message says why.
	ReasonReconcileError = "ReconcileError"
)

// Finalizers.
const (
	// ProjectFinalizer lets the Project controller delete the project's
	// namespace explicitly: the embedded control plane of `bastion dev` runs
	// no garbage collector, so owner references alone would leave it behind.
	ProjectFinalizer = "automation.bastion.dev/project-namespace"
	// CascadeFinalizer holds a Template, Integration or View until its
	// reconciler has dealt with what depends on it (controllers/cascade.go),
	// whichever door, kubectl or the API, deleted it.
	CascadeFinalizer = "automation.bastion.dev/cascade"
	// TaskRunFinalizer keeps a Task until its run is released (a local
	// process killed, its private files removed). The Task reconciler adds
	// it to a new task before anything else; the API creates tasks with it
	// already, which saves that write per task.
	TaskRunFinalizer = "automation.bastion.dev/task-run"
)

// NamespacePrefix starts the name of every project namespace, so that a
// project called "default" or "kube-system" can never take over a system
// namespace.
const NamespacePrefix = "bastion-"

// ProjectNamespace is the namespace that holds a project's resources. The
// Project CRD limits names to DNS labels of at most 55 characters, so the
// prefixed name is always a valid namespace name.
func ProjectNamespace(projectName string) string { return NamespacePrefix + projectName }

// ProjectOfNamespace is the name of the project a project namespace
// belongs to.
func ProjectOfNamespace(namespace string) string {
	return strings.TrimPrefix(namespace, NamespacePrefix)
}
