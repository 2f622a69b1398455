package ids

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// IDField is the cache index of objects by their id label. Field selectors
// cannot select on labels, so the index is what lets the API find
// "template 5" in the cache without listing the namespace:
//
//	c.List(ctx, &list, client.InNamespace(ns), ids.MatchingID(5))
const IDField = ".metadata.labels.id"

// IndexByID registers IDField for each kind of objs with the manager's cache.
// Objects without a valid id are not indexed.
func IndexByID(ctx context.Context, indexer client.FieldIndexer, objs ...client.Object) error {
	for _, obj := range objs {
		if err := indexer.IndexField(ctx, obj, IDField, indexID); err != nil {
			return fmt.Errorf("indexing %T by id: %w", obj, err)
		}
	}
	return nil
}

// MatchingID selects the objects whose id is id, through IDField.
func MatchingID(id int64) client.MatchingFields {
	return client.MatchingFields{IDField: Format(id)}
}

func indexID(obj client.Object) []string {
	if id, ok := FromLabels(obj); ok {
		return []string{Format(id)}
	}
	return nil
}
