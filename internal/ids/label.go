package ids

import (
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// FromLabels returns the id in obj's LabelID. Only the canonical decimal
// form of a positive integer counts: "007" or "-1" would not match a
// lookup by id through the index, so such a label is treated as no id
// and the controller replaces it.
func FromLabels(obj client.Object) (int64, bool) {
	return Parse(obj.GetLabels()[bastionv1.LabelID])
}

// Parse reads an id label value; ok is false unless it is canonical.
func Parse(value string) (id int64, ok bool) {
	id, err := strconv.ParseInt(value, 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != value {
		return 0, false
	}
	return id, true
}

// Format is the label value (and index key) of an id.
func Format(id int64) string {
	return strconv.FormatInt(id, 10)
}
