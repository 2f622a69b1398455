package ids

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// Assign gives obj an id from counter in namespace unless it has one, and
// returns the id. obj is updated in place with the patched object.
//
// Only the label is patched (a JSON merge patch), so a concurrent change to
// the spec is not overwritten. The patch carries obj's resourceVersion: obj
// usually comes from a cache, and without that check a reconcile that read
// the object before its id landed would give it a second, different id.
// On a conflict the object is read again; if it has an id by then, that id
// wins and the one just allocated is left unused (a gap, never a reuse).
//
// An id the object already carries is reserved in the counter, so that ids
// written by hand or restored from a backup are not handed out again.
func Assign(ctx context.Context, c client.Client, alloc *Allocator, obj client.Object, namespace, counter string) (int64, error) {
	if id, ok := FromLabels(obj); ok {
		return id, alloc.Reserve(ctx, namespace, counter, id)
	}
	id, err := alloc.Next(ctx, namespace, counter)
	if err != nil {
		return 0, err
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, labelPatch(obj.GetResourceVersion(), id)))
		if !apierrors.IsConflict(err) {
			return err
		}
		if getErr := alloc.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); getErr != nil {
			return getErr
		}
		if existing, ok := FromLabels(obj); ok {
			id = existing
			return nil
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("labelling %s with id %d: %w", obj.GetName(), id, err)
	}
	return id, nil
}

// labelPatch sets LabelID and nothing else, on the condition that the object
// is still at resourceVersion.
func labelPatch(resourceVersion string, id int64) []byte {
	metadata := map[string]any{"labels": map[string]string{bastionv1.LabelID: Format(id)}}
	if resourceVersion != "" {
		metadata["resourceVersion"] = resourceVersion
	}
	patch := map[string]any{"metadata": metadata}
	data, err := json.Marshal(patch)
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return data
}
