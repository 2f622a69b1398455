package taskpods

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// A template's field that is set replaces the project's as a whole;
// resources combine entry by entry; neither input is changed.
func TestMerge_theTemplatesFieldsReplaceTheProjectsAndResourcesCombine(t *testing.T) {
	project := &bastionv1.TaskPodSettings{
		NodeSelector:       map[string]string{"pool": "automation", "zone": "a"},
		Tolerations:        []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
		RunnerImage:        "ansible-gpu",
		ServiceAccountName: "deployer",
		Resources:          &bastionv1.TaskPodResources{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}},
	}
	template := &bastionv1.TaskPodSettings{
		NodeSelector: map[string]string{"accelerator": "nvidia"},
		Resources:    &bastionv1.TaskPodResources{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Gi")}},
	}
	got := Merge(project, template)
	if len(got.NodeSelector) != 1 || got.NodeSelector["accelerator"] != "nvidia" {
		t.Errorf("node selector %v, want the template's alone", got.NodeSelector)
	}
	if len(got.Tolerations) != 1 || got.RunnerImage != "ansible-gpu" || got.ServiceAccountName != "deployer" {
		t.Errorf("merged %+v lost the project's tolerations, image or service account", got)
	}
	if !got.Resources.Requests.Cpu().Equal(resource.MustParse("250m")) || !got.Resources.Limits.Memory().Equal(resource.MustParse("8Gi")) {
		t.Errorf("resources %+v, want the project's cpu request and the template's memory limit", got.Resources)
	}
	got.NodeSelector["accelerator"] = "changed"
	got.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
	if template.NodeSelector["accelerator"] != "nvidia" || !project.Resources.Requests.Cpu().Equal(resource.MustParse("250m")) {
		t.Error("the merge shares memory with its inputs")
	}
	if empty := Merge(nil, nil); empty.Resources != nil || empty.NodeSelector != nil {
		t.Errorf("Merge(nil, nil) = %+v", empty)
	}

	defaults := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi")},
	}
	r := Resources(defaults, got.Resources)
	if !r.Requests.Cpu().Equal(resource.MustParse("1")) || !r.Requests.Memory().Equal(resource.MustParse("256Mi")) ||
		!r.Limits.Cpu().Equal(resource.MustParse("2")) || !r.Limits.Memory().Equal(resource.MustParse("8Gi")) {
		t.Errorf("resources over the defaults = %+v", r)
	}
	if !defaults.Limits.Memory().Equal(resource.MustParse("2Gi")) {
		t.Error("Resources changed the manager's defaults")
	}
}

func TestCheck_refusesWhatTheAdminDidNotAllowAndWhatNoPodTakes(t *testing.T) {
	policy := Policy{Images: []Image{{Name: "ansible-gpu", Image: "r/gpu:1"}}, ServiceAccounts: []string{"deployer"}}
	secs := int64(5)
	for _, c := range []struct {
		settings bastionv1.TaskPodSettings
		want     string // "" is allowed
	}{
		{bastionv1.TaskPodSettings{RunnerImage: "ansible-gpu", ServiceAccountName: "deployer"}, ""},
		{bastionv1.TaskPodSettings{RunnerImage: "mine"}, `runner image "mine" is not on the list the cluster admin allows (ansible-gpu)`},
		{bastionv1.TaskPodSettings{ServiceAccountName: "admin"}, `service account "admin" is not on the list the cluster admin allows (deployer)`},
		{bastionv1.TaskPodSettings{NodeSelector: map[string]string{"pool": "bad value!"}}, `node selector label pool="bad value!"`},
		{bastionv1.TaskPodSettings{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpEqual, Value: "x"}}}, "toleration 1: a key is required"},
		{bastionv1.TaskPodSettings{Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Value: "x"}}}, "the operator Exists takes no value"},
		{bastionv1.TaskPodSettings{Tolerations: []corev1.Toleration{{Key: "k", Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: &secs}}}, "seconds apply only to the effect NoExecute"},
		{bastionv1.TaskPodSettings{Tolerations: []corev1.Toleration{{Key: "k", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs}}}, ""},
		{bastionv1.TaskPodSettings{Resources: &bastionv1.TaskPodResources{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		}}, "the memory limit 1Gi is below its request 2Gi"},
	} {
		err := policy.Check(&c.settings)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v refused: %v", c.settings, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: got %v, want %q", c.settings, err, c.want)
		}
	}
	if err := (Policy{}).Check(&bastionv1.TaskPodSettings{ServiceAccountName: "default"}); err == nil || !strings.Contains(err.Error(), "allows (none)") {
		t.Errorf("the zero policy allowed a service account: %v", err)
	}
}

func TestParseFlags(t *testing.T) {
	images, err := ParseImages(" ansible-gpu = r/gpu:1 , tf-1.9=r/tf:1.9 ")
	if err != nil || len(images) != 2 || images[1] != (Image{Name: "tf-1.9", Image: "r/tf:1.9"}) {
		t.Fatalf("ParseImages = %v, %v", images, err)
	}
	for _, bad := range []string{"noimage", "a=x,a=y", "bad name!=x"} {
		if _, err := ParseImages(bad); err == nil {
			t.Errorf("ParseImages(%q) accepted", bad)
		}
	}
	if sas, err := ParseServiceAccounts("deployer, backup"); err != nil || len(sas) != 2 {
		t.Errorf("ParseServiceAccounts = %v, %v", sas, err)
	}
	if _, err := ParseServiceAccounts("Not_A_Name"); err == nil {
		t.Error("ParseServiceAccounts accepted an invalid name")
	}
}
