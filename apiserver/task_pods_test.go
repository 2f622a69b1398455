package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// taskPodsBody is a complete task_pods as the console sends it.
func taskPodsBody() map[string]any {
	return map[string]any{
		"node_selector": map[string]any{"pool": "automation"},
		"tolerations": []any{
			map[string]any{"key": "dedicated", "operator": "Equal", "value": "automation", "effect": "NoSchedule", "toleration_seconds": nil},
			map[string]any{"key": "", "operator": "Exists", "value": "", "effect": "NoExecute", "toleration_seconds": float64(60)},
		},
		"resources":       map[string]any{"requests": map[string]any{"cpu": "250m"}, "limits": map[string]any{"memory": "1Gi"}},
		"runner_image":    "ansible-gpu",
		"service_account": "deployer",
	}
}

// Issue 23, item 1: a project's and a template's task_pods round trip
// through /api onto the CRDs; an absent task_pods keeps them (Semaphore's
// web UI never sends it), {} clears them.
func TestTaskPods_roundTripThroughProjectAndTemplate(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	want := normalized(t, taskPodsBody())

	// The project.
	project := p.rawJSON(t, "/")
	project["task_pods"] = taskPodsBody()
	p.b.must("PUT", p.path("/"), project, http.StatusNoContent, nil)
	if got := p.rawJSON(t, "/")["task_pods"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("project task_pods = %v, want %v", got, want)
	}
	stored := e.projectObject(t, p.pid).Spec.TaskPods
	if stored == nil || stored.ServiceAccountName != "deployer" || stored.RunnerImage != "ansible-gpu" || stored.NodeSelector["pool"] != "automation" ||
		len(stored.Tolerations) != 2 || *stored.Tolerations[1].TolerationSeconds != 60 || !stored.Resources.Requests.Cpu().Equal(resource.MustParse("250m")) {
		t.Fatalf("the Project's taskPods = %+v", stored)
	}
	delete(project, "task_pods")
	project["name"] = "Templates renamed"
	p.b.must("PUT", p.path("/"), project, http.StatusNoContent, nil)
	if got := p.rawJSON(t, "/")["task_pods"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("a PUT without task_pods changed them to %v", got)
	}

	// The template: created with them, kept by a PUT without, cleared by {}.
	body := p.templateBody("GPU", func(b map[string]any) {
		b["task_pods"] = map[string]any{"node_selector": map[string]any{"accelerator": "nvidia"}, "runner_image": "tf-1.9"}
	})
	created := p.createTemplate(t, "GPU", func(b map[string]any) { b["task_pods"] = body["task_pods"] })
	path := fmt.Sprintf("/templates/%d", created.ID)
	got := p.rawJSON(t, path)["task_pods"].(map[string]any)
	if got["runner_image"] != "tf-1.9" || !reflect.DeepEqual(got["node_selector"], map[string]any{"accelerator": "nvidia"}) ||
		got["service_account"] != "" || len(got["tolerations"].([]any)) != 0 {
		t.Fatalf("template task_pods = %v", got)
	}
	if tpl := p.templateObject(t, created.ID); tpl.Spec.TaskPods == nil || tpl.Spec.TaskPods.RunnerImage != "tf-1.9" {
		t.Fatalf("the Template's taskPods = %+v", tpl.Spec.TaskPods)
	}
	p.b.must("PUT", p.path("%s", path), p.templateBody("GPU", func(b map[string]any) { b["id"] = created.ID }), http.StatusNoContent, nil)
	if tpl := p.templateObject(t, created.ID); tpl.Spec.TaskPods == nil || tpl.Spec.TaskPods.RunnerImage != "tf-1.9" {
		t.Fatalf("a PUT without task_pods changed the Template's to %+v", tpl.Spec.TaskPods)
	}
	p.b.must("PUT", p.path("%s", path), p.templateBody("GPU", func(b map[string]any) { b["id"] = created.ID; b["task_pods"] = map[string]any{} }), http.StatusNoContent, nil)
	if tpl := p.templateObject(t, created.ID); tpl.Spec.TaskPods != nil {
		t.Fatalf("task_pods {} left the Template's %+v", tpl.Spec.TaskPods)
	}
}

// The other door: settings written with kubectl (here the client of the
// apiserver) read through /api as the same JSON.
func TestTaskPods_settingsWrittenOnTheCRDReadTheSameThroughTheAPI(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	made := p.makeTemplate(t, "kubectl-gpu", "Kubectl GPU")
	tpl := p.templateObject(t, made.ID)
	// A merge patch, as `kubectl patch --type merge` sends: no
	// resourceVersion, so the controller's status write meanwhile is no
	// conflict (an Update of the copy read above was, once).
	before := tpl.DeepCopy()
	secs := int64(60)
	tpl.Spec.TaskPods = &bastionv1.TaskPodSettings{
		NodeSelector: map[string]string{"pool": "automation"},
		Tolerations: []corev1.Toleration{
			{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "automation", Effect: corev1.TaintEffectNoSchedule},
			{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs},
		},
		Resources: &bastionv1.TaskPodResources{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		},
		RunnerImage: "ansible-gpu", ServiceAccountName: "deployer",
	}
	if err := e.K8s.Patch(t.Context(), tpl, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	want := normalized(t, taskPodsBody())
	eventually(t, 10*time.Second, func() (bool, string) {
		got := p.rawJSON(t, fmt.Sprintf("/templates/%d", made.ID))["task_pods"]
		return reflect.DeepEqual(got, want), fmt.Sprintf("task_pods = %v, want %v", got, want)
	})
}

// A PUT naming what the cluster admin did not allow, or what no pod spec
// takes, is refused with the reason and changes nothing.
func TestTaskPods_putOffTheListsOrInvalidIsRefusedAndChangesNothing(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	created := p.createTemplate(t, "Refusals", nil)
	path := fmt.Sprintf("/templates/%d", created.ID)
	project := p.rawJSON(t, "/")
	for _, c := range []struct {
		name   string
		change func(map[string]any)
		want   string
	}{
		{"service account", func(b map[string]any) { b["service_account"] = "cluster-admin" },
			`service account "cluster-admin" is not on the list the cluster admin allows (deployer)`},
		{"image", func(b map[string]any) { b["runner_image"] = "my-own" },
			`runner image "my-own" is not on the list the cluster admin allows (ansible-gpu, tf-1.9)`},
		{"quantity", func(b map[string]any) { b["resources"] = map[string]any{"requests": map[string]any{"cpu": "lots"}} },
			`cpu request must be a positive quantity such as 500m or 1Gi, not "lots"`},
		{"limit below request", func(b map[string]any) {
			b["resources"] = map[string]any{"requests": map[string]any{"memory": "2Gi"}, "limits": map[string]any{"memory": "1Gi"}}
		}, "the memory limit 1Gi is below its request 2Gi"},
		{"label", func(b map[string]any) { b["node_selector"] = map[string]any{"bad key!": "x"} }, `node selector label "bad key!"`},
		{"operator", func(b map[string]any) {
			b["tolerations"] = []any{map[string]any{"key": "k", "operator": "Near", "effect": "NoSchedule"}}
		}, `toleration 1: operator must be Equal or Exists, not "Near"`},
	} {
		pods := map[string]any{}
		c.change(pods)
		tplBody := p.templateBody("Refusals", func(b map[string]any) { b["id"] = created.ID; b["task_pods"] = pods })
		projBody := map[string]any{}
		for k, v := range project {
			projBody[k] = v
		}
		projBody["task_pods"] = pods
		for what, call := range map[string][2]any{"template": {path, tplBody}, "project": {"/", projBody}} {
			code, data := p.b.call("PUT", p.path("%s", call[0]), call[1])
			if code != http.StatusBadRequest || !strings.Contains(errorOf(t, data), c.want) {
				t.Errorf("%s, %s: PUT = %d %s, want 400 with %q", c.name, what, code, data, c.want)
			}
		}
	}
	if tpl := p.templateObject(t, created.ID); tpl.Spec.TaskPods != nil {
		t.Errorf("a refused PUT stored the Template's %+v", tpl.Spec.TaskPods)
	}
	if pr := e.projectObject(t, p.pid); pr.Spec.TaskPods != nil {
		t.Errorf("a refused PUT stored the Project's %+v", pr.Spec.TaskPods)
	}
}

// GET /api/task_pods/options lists what the cluster admin allows, for
// the console's choices.
func TestTaskPods_optionsListTheAdminsImagesAndServiceAccounts(t *testing.T) {
	e := startEnv(t)
	u, pw := e.newUser(t, "podsopts", false)
	b := e.signIn(t, u.Spec.Username, pw)
	var got map[string]any
	b.must("GET", "/api/task_pods/options", nil, http.StatusOK, &got)
	want := map[string]any{}
	if err := json.Unmarshal([]byte(`{"runner_images":[{"name":"ansible-gpu","image":"registry.example.com/runner-ansible-gpu:1.2"},
		{"name":"tf-1.9","image":"registry.example.com/runner-terraform:1.9"}],"service_accounts":["deployer"]}`), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("options = %v, want %v", got, want)
	}
	if code, _ := e.browser(t).call("GET", "/api/task_pods/options", nil); code != http.StatusUnauthorized {
		t.Errorf("options without signing in = %d, want 401", code)
	}
}
