// Package v1alpha1 holds the Bastion custom resources of the
// automation.bastion.dev API group: projects and users so far, and the
// project resources (templates, tasks, inventories, ...) as they are added.
//
// +kubebuilder:object:generate=true
// +groupName=automation.bastion.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every Bastion resource.
	GroupVersion = schema.GroupVersion{Group: "automation.bastion.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the Bastion types with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the Bastion types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
