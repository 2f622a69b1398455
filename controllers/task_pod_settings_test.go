package controllers_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// Issue 23, item 1: the project's task pod settings, with the template's
// override, reach the pod spec of the task's Job. A template's field
// replaces the project's as a whole; resources combine entry by entry,
// over the manager's defaults.
func TestTaskPodSettings_theJobGetsTheProjectsSettingsWithTheTemplatesOverrides(t *testing.T) {
	p := newTaskProjectWith(t, "pods-merged", func(project *bastionv1.Project) {
		project.Spec.TaskPods = &bastionv1.TaskPodSettings{
			NodeSelector: map[string]string{"pool": "automation", "zone": "a"},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "automation", Effect: corev1.TaintEffectNoSchedule}},
			Resources: &bastionv1.TaskPodResources{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
			},
			RunnerImage:        "ansible-gpu",
			ServiceAccountName: "deployer",
		}
	})
	p.template("gpu-train", func(spec *bastionv1.TemplateSpec) {
		spec.TaskPods = &bastionv1.TaskPodSettings{
			NodeSelector: map[string]string{"accelerator": "nvidia"},
			Resources:    &bastionv1.TaskPodResources{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Gi"), "nvidia.com/gpu": resource.MustParse("1")}},
		}
	})
	p.task("train", "gpu-train", nil)

	pod := p.job("train").Spec.Template.Spec
	p.g.Expect(pod.NodeSelector).To(Equal(map[string]string{"accelerator": "nvidia"}), "the template's node selector replaces the project's")
	p.g.Expect(pod.Tolerations).To(Equal([]corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "automation", Effect: corev1.TaintEffectNoSchedule}}), "the project's tolerations stay")
	p.g.Expect(pod.ServiceAccountName).To(Equal("deployer"))
	p.g.Expect(*pod.AutomountServiceAccountToken).To(BeTrue(), "an allowed service account's token is what it is chosen for")
	runner := pod.Containers[0]
	p.g.Expect(runner.Image).To(Equal("registry.example.com/runner-ansible-gpu:1.2"))
	for name, want := range map[string]struct{ got, want resource.Quantity }{
		"cpu request (project)":     {runner.Resources.Requests[corev1.ResourceCPU], resource.MustParse("250m")},
		"memory request (default)":  {runner.Resources.Requests[corev1.ResourceMemory], resource.MustParse("256Mi")},
		"cpu limit (default)":       {runner.Resources.Limits[corev1.ResourceCPU], resource.MustParse("2")},
		"memory limit (template)":   {runner.Resources.Limits[corev1.ResourceMemory], resource.MustParse("8Gi")},
		"nvidia.com/gpu (template)": {runner.Resources.Limits["nvidia.com/gpu"], resource.MustParse("1")},
	} {
		if want.got.Cmp(want.want) != 0 {
			t.Errorf("%s %s, want %s", name, want.got.String(), want.want.String())
		}
	}

	// A template of the same project without settings runs with the
	// project's.
	p.task("plain", "deploy-site", nil)
	plain := p.job("plain").Spec.Template.Spec
	p.g.Expect(plain.NodeSelector).To(Equal(map[string]string{"pool": "automation", "zone": "a"}))
	p.g.Expect(plain.Containers[0].Image).To(Equal("registry.example.com/runner-ansible-gpu:1.2"))
}

// Without settings a task pod is what it always was: the app's image, no
// service account token, no placement.
func TestTaskPodSettings_noSettingsKeepTheManagersPod(t *testing.T) {
	p := newTaskProject(t, "pods-none", 0)
	p.task("plain", "deploy-site", nil)
	pod := p.job("plain").Spec.Template.Spec
	p.g.Expect(pod.ServiceAccountName).To(BeEmpty())
	p.g.Expect(*pod.AutomountServiceAccountToken).To(BeFalse())
	p.g.Expect(pod.NodeSelector).To(BeEmpty())
	p.g.Expect(pod.Tolerations).To(BeEmpty())
	p.g.Expect(pod.Containers[0].Image).To(Equal("bastion-runner-ansible:latest"))
}

// A kubectl user writes what the API would refuse: a service account the
// cluster admin did not allow, or a runner image not on the list. The CRD
// stores it (it has no list to check against); the task controller
// refuses the task with the reason, and no Job is made.
func TestTaskPodSettings_kubectlAppliedSettingsOffTheListsFailTheTask(t *testing.T) {
	k := newKubectl(t)
	p := newTaskProject(t, "pods-refused", 0)
	manifest := `apiVersion: automation.bastion.dev/v1alpha1
kind: Template
metadata: {name: borrow-admin, namespace: ` + p.ns + `}
spec:
  displayName: Borrow admin
  playbook: site.yml
  repositoryRef: {name: site}
  environmentRef: {name: prod}
  taskPods: {serviceAccountName: cluster-admin}
---
apiVersion: automation.bastion.dev/v1alpha1
kind: Template
metadata: {name: own-image, namespace: ` + p.ns + `}
spec:
  displayName: Own image
  playbook: site.yml
  repositoryRef: {name: site}
  environmentRef: {name: prod}
  taskPods: {runnerImage: my-image}
`
	file := filepath.Join(t.TempDir(), "templates.yaml")
	p.g.Expect(os.WriteFile(file, []byte(manifest), 0o600)).To(Succeed())
	k.mustRun("apply", "-f", file)

	for task, want := range map[string]string{
		"borrow": `service account "cluster-admin" is not on the list the cluster admin allows (deployer)`,
		"image":  `runner image "my-image" is not on the list the cluster admin allows (ansible-gpu)`,
	} {
		template := map[string]string{"borrow": "borrow-admin", "image": "own-image"}[task]
		p.task(task, template, nil)
		failed := p.waitStatus(task, bastionv1.TaskError)
		p.g.Expect(failed.Status.Message).To(ContainSubstring(want))
		p.g.Expect(jobExists(p.ns, bastionv1.TaskRunName(failed))).To(BeFalse(), "no Job runs with a refused setting")
	}
}
