package taskvars

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// A task's secret answers live in a Secret of their own that the API
// writes just before the Task (labelled LabelTaskSecrets) and that the
// Task then controls. A Task may name (spec.secretRef) only that Secret:
// the TaskReconciler claims it when still unowned and refuses any other,
// and only its owner deletes it.

// SecretOwner is the owner reference that makes the Task the controller
// of its secret answers' Secret; the API and the TaskReconciler set the
// same one, so whichever comes second finds it already there.
func SecretOwner(task *bastionv1.Task) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: bastionv1.GroupVersion.String(), Kind: "Task", Name: task.Name, UID: task.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false),
	}
}

// OwnsSecret reports whether the Task (by UID) owns the Secret.
func OwnsSecret(task *bastionv1.Task, owners []metav1.OwnerReference) bool {
	return slices.ContainsFunc(owners, func(o metav1.OwnerReference) bool {
		return o.Kind == "Task" && o.UID == task.UID
	})
}
