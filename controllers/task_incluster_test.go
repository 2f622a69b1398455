package controllers_test

import (
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/runspec"
)

// The in-cluster path of a task, for each app: the Job runs that app's
// runner image, mounts the run's input Secret (its runspec and token) and
// the task's key, tells the runner the manager's stream endpoint, and the
// pod's completion finishes the task.
func TestTaskReconciler_runsEachAppAsAJobWithItsRunnerImageAndStreamEndpoint(t *testing.T) {
	p := newTaskProject(t, "tasks-incluster", 0)
	images := launch.DefaultJobOptions().Images
	for _, app := range []bastionv1.TemplateApp{bastionv1.AppAnsible, bastionv1.AppTerraform, bastionv1.AppBash} {
		template := "run-" + string(app)
		p.template(template, func(s *bastionv1.TemplateSpec) {
			s.App = app
			if app != bastionv1.AppAnsible {
				s.InventoryRef = nil
				s.Playbook = "main"
			}
		})
		task := template + "-1"
		p.task(task, template, nil)

		job := p.job(task)
		pod := job.Spec.Template.Spec
		p.g.Expect(pod.Containers).To(HaveLen(1))
		p.g.Expect(pod.Containers[0].Image).To(Equal(images[app]), "app %s", app)
		p.g.Expect(*pod.AutomountServiceAccountToken).To(BeFalse(), "task pods get no Kubernetes API access")
		var mounted []string
		for _, v := range pod.Volumes {
			if v.Secret != nil {
				mounted = append(mounted, v.Secret.SecretName)
			}
		}
		p.g.Expect(mounted).To(ConsistOf(task+"-input", "deploy-key"), "app %s mounts exactly its Secrets", app)

		input := &corev1.Secret{}
		p.g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: p.ns, Name: task + "-input"}, input)).To(Succeed())
		var spec runspec.Spec
		p.g.Expect(json.Unmarshal(input.Data[runspec.TaskFile], &spec)).To(Succeed())
		p.g.Expect(spec.ManagerURL).To(Equal(suiteManagerURL))
		p.g.Expect(spec.App).To(Equal(string(app)))
		p.g.Expect(input.Data[runspec.TokenFile]).To(HaveLen(64))

		p.runToEnd(task, true)
	}
}
