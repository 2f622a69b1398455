package apiserver

import (
	"net/http"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/taskpods"
)

// taskPodsJSON is a project's or a template's task_pods: where its task
// pods run and with what (api-contract.md, "task_pods"). A read always
// answers every field; in a PUT, task_pods absent or null keeps what is
// stored (Semaphore's own web UI knows nothing of it), an object replaces
// it, and {} clears it.
type taskPodsJSON struct {
	NodeSelector   map[string]string `json:"node_selector"`
	Tolerations    []tolerationJSON  `json:"tolerations"`
	Resources      resourcesJSON     `json:"resources"`
	RunnerImage    string            `json:"runner_image"`
	ServiceAccount string            `json:"service_account"`
}

type tolerationJSON struct {
	Key               string `json:"key"`
	Operator          string `json:"operator"`
	Value             string `json:"value"`
	Effect            string `json:"effect"`
	TolerationSeconds *int64 `json:"toleration_seconds"`
}

// resourcesJSON are requests and limits by resource name: {"cpu": "500m"}.
type resourcesJSON struct {
	Requests map[string]string `json:"requests"`
	Limits   map[string]string `json:"limits"`
}

func toTaskPodsJSON(s *bastionv1.TaskPodSettings) taskPodsJSON {
	out := taskPodsJSON{NodeSelector: map[string]string{}, Tolerations: []tolerationJSON{},
		Resources: resourcesJSON{Requests: map[string]string{}, Limits: map[string]string{}}}
	if s == nil {
		return out
	}
	for k, v := range s.NodeSelector {
		out.NodeSelector[k] = v
	}
	for _, t := range s.Tolerations {
		out.Tolerations = append(out.Tolerations, tolerationJSON{Key: t.Key, Operator: string(t.Operator), Value: t.Value,
			Effect: string(t.Effect), TolerationSeconds: t.TolerationSeconds})
	}
	if r := s.Resources; r != nil {
		quantitiesJSON(out.Resources.Requests, r.Requests)
		quantitiesJSON(out.Resources.Limits, r.Limits)
	}
	out.RunnerImage, out.ServiceAccount = s.RunnerImage, s.ServiceAccountName
	return out
}

func quantitiesJSON(out map[string]string, list corev1.ResourceList) {
	for name, q := range list {
		out[string(name)] = q.String()
	}
}

// settings checks the request against the cluster admin's lists and the
// rules of a pod spec (internal/taskpods, which the task controller
// applies too) and returns what to store; nil when nothing is set.
func (j *taskPodsJSON) settings(policy taskpods.Policy) (*bastionv1.TaskPodSettings, error) {
	s := &bastionv1.TaskPodSettings{
		RunnerImage: strings.TrimSpace(j.RunnerImage), ServiceAccountName: strings.TrimSpace(j.ServiceAccount),
	}
	for k, v := range j.NodeSelector {
		if s.NodeSelector == nil {
			s.NodeSelector = map[string]string{}
		}
		s.NodeSelector[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	for _, t := range j.Tolerations {
		s.Tolerations = append(s.Tolerations, corev1.Toleration{Key: strings.TrimSpace(t.Key), Operator: corev1.TolerationOperator(t.Operator),
			Value: strings.TrimSpace(t.Value), Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.TolerationSeconds})
	}
	var err error
	if s.Resources, err = j.Resources.settings(); err != nil {
		return nil, err
	}
	if err := policy.Check(s); err != nil {
		return nil, badRequest(err.Error())
	}
	if s.NodeSelector == nil && s.Tolerations == nil && s.Resources == nil && s.RunnerImage == "" && s.ServiceAccountName == "" {
		return nil, nil
	}
	return s, nil
}

func (r resourcesJSON) settings() (*bastionv1.TaskPodResources, error) {
	out := &bastionv1.TaskPodResources{}
	var err error
	if out.Requests, err = quantities(r.Requests, "request"); err != nil {
		return nil, err
	}
	if out.Limits, err = quantities(r.Limits, "limit"); err != nil {
		return nil, err
	}
	if out.Requests == nil && out.Limits == nil {
		return nil, nil
	}
	return out, nil
}

// quantities parses {"cpu": "500m"}; an empty value is no entry, as an
// empty field of a form is.
func quantities(in map[string]string, kind string) (corev1.ResourceList, error) {
	names := make([]string, 0, len(in))
	for name := range in {
		names = append(names, name)
	}
	sort.Strings(names) // the first bad one, the same each time
	var out corev1.ResourceList
	for _, name := range names {
		if strings.TrimSpace(in[name]) == "" {
			continue
		}
		q, err := taskpods.ParseQuantity(strings.TrimSpace(name)+" "+kind, in[name])
		if err != nil {
			return nil, badRequest(err.Error())
		}
		if out == nil {
			out = corev1.ResourceList{}
		}
		out[corev1.ResourceName(strings.TrimSpace(name))] = q
	}
	return out, nil
}

// taskPodOptionsJSON is GET /api/task_pods/options: what the cluster admin
// lets projects and templates choose, for the console's lists.
type taskPodOptionsJSON struct {
	RunnerImages    []taskpods.Image `json:"runner_images"`
	ServiceAccounts []string         `json:"service_accounts"`
}

// taskPodOptions answers any signed-in user: the names are chosen by the
// project's owners and managers, shown to everyone who sees its settings.
func (s *Server) taskPodOptions(w http.ResponseWriter, _ *http.Request) {
	out := taskPodOptionsJSON{RunnerImages: []taskpods.Image{}, ServiceAccounts: []string{}}
	out.RunnerImages = append(out.RunnerImages, s.opts.TaskPods.Images...)
	out.ServiceAccounts = append(out.ServiceAccounts, s.opts.TaskPods.ServiceAccounts...)
	respond(w, http.StatusOK, out)
}
