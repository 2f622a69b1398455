// Package taskpods holds the rules of a task pod's settings (where a task
// runs and with what): which runner images and service accounts the
// cluster admin allows, how a template's settings combine with its
// project's, and what a valid setting is. The API checks a PUT with it
// and the task controller checks the merged settings of every run, so an
// object applied with kubectl meets the same rules as one written through
// /api (docs/features.md, "Where a task runs").
package taskpods

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// Image is a runner image the cluster admin offers, by name.
type Image struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// Policy is what the cluster admin allows projects and templates to
// choose: runner images by name (--runner-images) and service accounts
// (--task-service-accounts). The zero Policy allows neither.
type Policy struct {
	Images          []Image
	ServiceAccounts []string
}

// ImageOf returns the image a name stands for.
func (p Policy) ImageOf(name string) (string, bool) {
	for _, i := range p.Images {
		if i.Name == name {
			return i.Image, true
		}
	}
	return "", false
}

// ParseImages reads --runner-images: name=image pairs separated by commas.
func ParseImages(v string) ([]Image, error) {
	var images []Image
	for _, pair := range splitList(v) {
		name, image, ok := strings.Cut(pair, "=")
		name, image = strings.TrimSpace(name), strings.TrimSpace(image)
		if !ok || name == "" || image == "" {
			return nil, fmt.Errorf("want name=image pairs separated by commas, not %q", pair)
		}
		if errs := validation.IsDNS1123Subdomain(strings.ToLower(name)); len(errs) > 0 || len(name) > 63 {
			return nil, fmt.Errorf("runner image name %q: use letters, digits, '-' or '.', at most 63", name)
		}
		if slices.ContainsFunc(images, func(i Image) bool { return i.Name == name }) {
			return nil, fmt.Errorf("runner image name %q is given twice", name)
		}
		images = append(images, Image{Name: name, Image: image})
	}
	return images, nil
}

// ParseServiceAccounts reads --task-service-accounts: names separated by
// commas.
func ParseServiceAccounts(v string) ([]string, error) {
	names := splitList(v)
	for _, n := range names {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			return nil, fmt.Errorf("service account %q: %s", n, errs[0])
		}
	}
	return names, nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Merge combines a project's settings with a template's: each field the
// template sets (a non-empty node selector, list of tolerations, image or
// service account) replaces the project's as a whole; resources combine
// request by request and limit by limit, the template's over the
// project's. Either may be nil. The result shares no memory with them.
func Merge(project, template *bastionv1.TaskPodSettings) bastionv1.TaskPodSettings {
	var out bastionv1.TaskPodSettings
	for _, s := range []*bastionv1.TaskPodSettings{project, template} {
		if s == nil {
			continue
		}
		if len(s.NodeSelector) > 0 {
			out.NodeSelector = maps.Clone(s.NodeSelector)
		}
		if len(s.Tolerations) > 0 {
			out.Tolerations = slices.Clone(s.Tolerations)
		}
		if s.RunnerImage != "" {
			out.RunnerImage = s.RunnerImage
		}
		if s.ServiceAccountName != "" {
			out.ServiceAccountName = s.ServiceAccountName
		}
		if s.Resources != nil {
			out.Resources = overlayResources(out.Resources, s.Resources)
		}
	}
	return out
}

// Resources returns the runner container's requests and limits: the
// manager's defaults with each entry the settings name replaced.
func Resources(defaults corev1.ResourceRequirements, s *bastionv1.TaskPodResources) corev1.ResourceRequirements {
	out := *defaults.DeepCopy()
	if s == nil {
		return out
	}
	out.Requests = overlayList(out.Requests, s.Requests)
	out.Limits = overlayList(out.Limits, s.Limits)
	return out
}

func overlayResources(base, top *bastionv1.TaskPodResources) *bastionv1.TaskPodResources {
	out := &bastionv1.TaskPodResources{}
	if base != nil {
		out.Requests, out.Limits = base.Requests.DeepCopy(), base.Limits.DeepCopy()
	}
	out.Requests = overlayList(out.Requests, top.Requests)
	out.Limits = overlayList(out.Limits, top.Limits)
	return out
}

func overlayList(base, top corev1.ResourceList) corev1.ResourceList {
	if len(top) == 0 {
		return base
	}
	out := base.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for name, q := range top {
		out[name] = q.DeepCopy()
	}
	return out
}

// Check reports the first setting that is not allowed or not valid, as a
// sentence for the user; nil settings are fine.
func (p Policy) Check(s *bastionv1.TaskPodSettings) error {
	if s == nil {
		return nil
	}
	if s.RunnerImage != "" {
		if _, ok := p.ImageOf(s.RunnerImage); !ok {
			return fmt.Errorf("runner image %q is not on the list the cluster admin allows (%s)", s.RunnerImage, p.imageNames())
		}
	}
	if s.ServiceAccountName != "" && !slices.Contains(p.ServiceAccounts, s.ServiceAccountName) {
		return fmt.Errorf("service account %q is not on the list the cluster admin allows (%s)", s.ServiceAccountName, listOrNone(p.ServiceAccounts))
	}
	if err := checkNodeSelector(s.NodeSelector); err != nil {
		return err
	}
	for i := range s.Tolerations {
		if err := checkToleration(&s.Tolerations[i]); err != nil {
			return fmt.Errorf("toleration %d: %w", i+1, err)
		}
	}
	return CheckResources(s.Resources)
}

func (p Policy) imageNames() string {
	names := make([]string, len(p.Images))
	for i, img := range p.Images {
		names[i] = img.Name
	}
	return listOrNone(names)
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func checkNodeSelector(sel map[string]string) error {
	keys := slices.Collect(maps.Keys(sel))
	sort.Strings(keys)
	for _, k := range keys {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("node selector label %q: %s", k, errs[0])
		}
		if errs := validation.IsValidLabelValue(sel[k]); len(errs) > 0 {
			return fmt.Errorf("node selector label %s=%q: %s", k, sel[k], errs[0])
		}
	}
	return nil
}

func checkToleration(t *corev1.Toleration) error {
	if t.Key != "" {
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return fmt.Errorf("key %q: %s", t.Key, errs[0])
		}
	}
	switch t.Operator {
	case "", corev1.TolerationOpEqual:
		if t.Key == "" {
			return fmt.Errorf("a key is required unless the operator is Exists")
		}
	case corev1.TolerationOpExists:
		if t.Value != "" {
			return fmt.Errorf("the operator Exists takes no value")
		}
	default:
		return fmt.Errorf("operator must be Equal or Exists, not %q", t.Operator)
	}
	switch t.Effect {
	case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule:
		if t.TolerationSeconds != nil {
			return fmt.Errorf("seconds apply only to the effect NoExecute")
		}
	case corev1.TaintEffectNoExecute:
	default:
		return fmt.Errorf("effect must be NoSchedule, PreferNoSchedule or NoExecute, not %q", t.Effect)
	}
	return nil
}

// CheckResources refuses a quantity that is not positive and a limit
// below its request (the apiserver would refuse the Job).
func CheckResources(r *bastionv1.TaskPodResources) error {
	if r == nil {
		return nil
	}
	for _, list := range []corev1.ResourceList{r.Requests, r.Limits} {
		for name, q := range list {
			if q.Sign() <= 0 {
				return fmt.Errorf("%s must be a positive quantity such as 500m or 1Gi, not %s", name, q.String())
			}
		}
	}
	if err := CheckLimits(corev1.ResourceRequirements{Requests: r.Requests, Limits: r.Limits}); err != nil {
		return fmt.Errorf("the %w", err)
	}
	return nil
}

// CheckLimits refuses a limit below its request.
func CheckLimits(r corev1.ResourceRequirements) error {
	names := slices.Collect(maps.Keys(r.Limits))
	slices.Sort(names)
	for _, name := range names {
		limit := r.Limits[name]
		if request, ok := r.Requests[name]; ok && limit.Cmp(request) < 0 {
			return fmt.Errorf("%s limit %s is below its request %s", name, limit.String(), request.String())
		}
	}
	return nil
}

// ParseQuantity reads a request or limit typed by a user.
func ParseQuantity(name, v string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(strings.TrimSpace(v))
	if err != nil || q.Sign() <= 0 {
		return q, fmt.Errorf("%s must be a positive quantity such as 500m or 1Gi, not %q", name, v)
	}
	return q, nil
}
