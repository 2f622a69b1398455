package launch

import (
	"flag"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/bastion-dev/bastion/internal/taskpods"
)

// DefaultResources are a task pod's requests and limits unless the flags
// say otherwise: enough for ansible or terraform with a few providers,
// and no more than two cores and 2 GiB of one node.
func DefaultResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("100m"),
			corev1.ResourceMemory: resource.MustParse("256Mi"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("2"),
			corev1.ResourceMemory: resource.MustParse("2Gi"),
		},
	}
}

// resourceFlags name the flags of a task pod's requests and limits (the
// chart's tasks.resources).
var resourceFlags = []struct {
	name     string
	resource corev1.ResourceName
	limit    bool
}{
	{"task-cpu-request", corev1.ResourceCPU, false},
	{"task-memory-request", corev1.ResourceMemory, false},
	{"task-cpu-limit", corev1.ResourceCPU, true},
	{"task-memory-limit", corev1.ResourceMemory, true},
}

// RegisterResourceFlags sets o.Resources, which holds the defaults, from
// --task-cpu-request, --task-memory-request, --task-cpu-limit and
// --task-memory-limit. An empty value removes that request or limit.
func (o *JobOptions) RegisterResourceFlags(fs *flag.FlagSet) {
	defaults := DefaultResources()
	for _, f := range resourceFlags {
		list, defaultList, kind := &o.Resources.Requests, defaults.Requests, "request"
		if f.limit {
			list, defaultList, kind = &o.Resources.Limits, defaults.Limits, "limit"
		}
		def := defaultList[f.resource]
		usage := fmt.Sprintf("%s %s of each task pod (default %s; empty: none)", f.resource, kind, def.String())
		fs.Func(f.name, usage, func(v string) error {
			if v == "" {
				delete(*list, f.resource)
				return nil
			}
			q, err := resource.ParseQuantity(v)
			if err != nil || q.Sign() <= 0 {
				return fmt.Errorf("want a positive quantity such as %s, not %q", def.String(), v)
			}
			if *list == nil {
				*list = corev1.ResourceList{}
			}
			(*list)[f.resource] = q
			return nil
		})
	}
}

// CheckResources refuses a limit below its request, which the apiserver
// would refuse on every task's Job.
func (o *JobOptions) CheckResources() error {
	if err := taskpods.CheckLimits(o.Resources); err != nil {
		return fmt.Errorf("the task pods' %w", err)
	}
	return nil
}
