package kinds

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReferencesField indexes cached objects by what they refer to, as
// Target.IndexKey, so that "who refers to repository x" is one indexed
// list per kind: for the controllers (an appearing Secret or Repository
// finds the objects that wait for it) and for the API (/refs, the in-use
// check on delete).
const ReferencesField = ".spec.references"

// IndexReferences registers ReferencesField for every kind that refers to
// something. It is registered here, once, for every kind, rather than by
// each reconciler: the API reads the index too, whichever reconciler owns
// the kind (Schedule has a reconciler of its own).
func IndexReferences(ctx context.Context, indexer client.FieldIndexer) error {
	for _, kind := range All() {
		if len(kind.Targets()) == 0 {
			continue
		}
		err := indexer.IndexField(ctx, kind.NewObject(), ReferencesField, func(o client.Object) []string {
			var keys []string
			for _, ref := range kind.ReferencesOf(o) {
				keys = append(keys, ref.Target.IndexKey(ref.Name))
			}
			return keys
		})
		if err != nil {
			return fmt.Errorf("indexing %s references: %w", kind.KindName(), err)
		}
	}
	return nil
}

// Referrer is an object that refers to a target, with its references to it.
type Referrer struct {
	Kind       Descriptor
	Object     client.Object
	References []Reference
}

// Blocks reports whether the referrer forbids deleting the target.
func (r Referrer) Blocks() bool {
	for _, ref := range r.References {
		if ref.Use == Needs {
			return true
		}
	}
	return false
}

// Referring lists, kind by kind in All's order, the live objects in ns
// that refer to the object of target called name. c must have
// ReferencesField (the manager's cached client).
func Referring(ctx context.Context, c client.Reader, ns string, target Target, name string) ([]Referrer, error) {
	var out []Referrer
	for _, kind := range All() {
		if !refersTo(kind, target) {
			continue
		}
		list := kind.NewObjectList()
		err := c.List(ctx, list, client.InNamespace(ns), client.MatchingFields{ReferencesField: target.IndexKey(name)})
		if err != nil {
			return nil, err
		}
		err = meta.EachListItem(list, func(o runtime.Object) error {
			obj := o.(client.Object)
			// Keys and plain Secrets share an index key: keep only the
			// references to this target.
			refs := RefersTo(kind.ReferencesOf(obj), target, name)
			if obj.GetDeletionTimestamp().IsZero() && len(refs) > 0 {
				out = append(out, Referrer{Kind: kind, Object: obj, References: refs})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func refersTo(kind Descriptor, target Target) bool {
	for _, t := range kind.Targets() {
		if t.Noun == target.Noun {
			return true
		}
	}
	return false
}
