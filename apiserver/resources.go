package apiserver

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What the key, repository, inventory and environment routes share: the
// name rule of docs/features.md §5, the order of their lists, and how a key is read
// when only its id is wanted.

// requiredName is a resource's trimmed name, or "Name is required".
func requiredName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", badRequest("Name is required")
	}
	return name, nil
}

// sortByName orders a list as the console shows it: by name, ignoring
// case, then by id so that equal names keep a stable order.
func sortByName[T any](items []T, name func(T) string, id func(T) int64) {
	slices.SortStableFunc(items, func(a, b T) int { return compareByName(name(a), id(a), name(b), id(b)) })
}

func compareByName(nameA string, idA int64, nameB string, idB int64) int {
	return cmp.Or(cmp.Compare(strings.ToLower(nameA), strings.ToLower(nameB)), cmp.Compare(idA, idB))
}

// secretMetadata is an empty Secret to read as metadata only: turning a
// reference into an id needs the labels, never the secret material.
func secretMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}
