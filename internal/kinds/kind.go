// Package kinds describes each project resource kind once: its Go type,
// its id counter, how it is named, what it refers to and where its
// conditions are. The controllers (ResourceReconciler, the cache's
// reference index), the API server (routes, /refs, the in-use check on
// delete) and backup/restore all read these descriptors, so adding a kind
// or a reference field touches this package and nothing else that knows
// about references.
//
// It lives apart from api/v1alpha1 because it needs controller-runtime's
// client (lists, field indexes) and core Secrets (keys), which the API
// types package should not import; and apart from controllers and
// apiserver because both import it, without HTTP or reconcile loops.
package kinds

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Use says what a reference means when its target is deleted.
type Use int

const (
	// Needs: the referring object cannot work without the target, so
	// deleting the target is refused while the reference exists.
	Needs Use = iota
	// BelongsTo: the referring object is part of the target (a schedule
	// of its template, an alias of its integration); the target's
	// controller removes it with the target.
	BelongsTo
	// Optional: the reference is dropped when the target goes (a
	// template's view); the target's controller clears it.
	Optional
)

// Target is a kind of referenced object.
type Target struct {
	// Noun names it in messages ("key", "repository").
	Noun string
	// Object is its type. Secrets are read as metadata only by the
	// controllers: they need to know that a Secret exists, never its data.
	Object client.Object
	// IsKey: the Secret must also carry LabelKeyType.
	IsKey bool
}

// IsSecret reports a target that is a core Secret (a key or a plain one).
func (t Target) IsSecret() bool {
	_, ok := t.Object.(*corev1.Secret)
	return ok
}

// IndexKey is a referenced object's key in ReferencesField. Keys and plain
// Secrets share one: both are Secrets, and one watch serves both.
func (t Target) IndexKey(name string) string {
	return fmt.Sprintf("%T/%s", t.Object, name)
}

// Reference names an object in the referring object's namespace.
type Reference struct {
	Target Target
	Name   string
	Use    Use
}

// Kind describes one kind of project resource.
type Kind[T client.Object] struct {
	// Name names the kind's id counter, its controller and the kind in
	// events ("inventory", "key").
	Name string
	// New returns an empty object; NewList an empty list of the kind.
	New     func() T
	NewList func() client.ObjectList
	// Display is the object's name for people: its display name or title.
	Display func(T) string
	// References lists the objects this one refers to; nil when it
	// refers to nothing.
	References func(T) []Reference
	// Referenced are the targets References may name; the controllers
	// watch them, so that an object is checked again when one appears.
	Referenced []Target
	// Self is this kind as the target of other kinds' references.
	Self Target
	// Cascades: deleting an object of the kind takes what depends on it
	// along, so it carries CascadeFinalizer until its reconciler's cascade
	// (controllers/cascade.go) has done that; the controllers refuse to
	// start when a kind's cascade and this flag disagree. The API
	// creates such objects with the finalizer already set: the
	// reconciler's patch adding it is then a write saved per create.
	Cascades bool
}

// Descriptor is a Kind with its type parameter erased, for code that goes
// over every kind (the reference index, /refs, backups).
type Descriptor interface {
	KindName() string
	NewObject() client.Object
	NewObjectList() client.ObjectList
	DisplayOf(client.Object) string
	ReferencesOf(client.Object) []Reference
	Targets() []Target
	AsTarget() Target
}

func (k Kind[T]) KindName() string                   { return k.Name }
func (k Kind[T]) NewObject() client.Object           { return k.New() }
func (k Kind[T]) NewObjectList() client.ObjectList   { return k.NewList() }
func (k Kind[T]) DisplayOf(obj client.Object) string { return k.Display(obj.(T)) }
func (k Kind[T]) Targets() []Target                  { return k.Referenced }
func (k Kind[T]) AsTarget() Target                   { return k.Self }

// ReferencesOf is References for an object of the kind; nil for an object
// of another type or a kind that refers to nothing.
func (k Kind[T]) ReferencesOf(obj client.Object) []Reference {
	typed, ok := obj.(T)
	if !ok || k.References == nil {
		return nil
	}
	return k.References(typed)
}

// RefersTo reports the references of obj to the object called name of
// target.
func RefersTo(refs []Reference, target Target, name string) []Reference {
	var out []Reference
	for _, ref := range refs {
		if ref.Name == name && ref.Target.Noun == target.Noun {
			out = append(out, ref)
		}
	}
	return out
}
