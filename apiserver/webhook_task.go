package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/taskvars"
)

// integrationTaskParams are the task fields an integration's task_params
// may set for the tasks it starts, named as in POST /tasks. arguments is a
// JSON array or a string holding one; environment a JSON object or a
// string holding one. Other keys are kept but not used.
type integrationTaskParams struct {
	Message     string          `json:"message"`
	Debug       bool            `json:"debug"`
	DryRun      bool            `json:"dry_run"`
	Diff        bool            `json:"diff"`
	Playbook    string          `json:"playbook"`
	Limit       string          `json:"limit"`
	GitBranch   string          `json:"git_branch"`
	Arguments   json.RawMessage `json:"arguments"`
	Environment json.RawMessage `json:"environment"`

	arguments   []string
	environment map[string]json.RawMessage
}

// parseTaskParams reads task_params; a missing one is all defaults.
func parseTaskParams(raw []byte) (integrationTaskParams, error) {
	var p integrationTaskParams
	if len(raw) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, badRequest("task_params: " + describeJSONError(err))
	}
	if err := unwrapJSON(p.Arguments, &p.arguments); err != nil {
		return p, badRequest("task_params: arguments must be a JSON array of strings")
	}
	if err := unwrapJSON(p.Environment, &p.environment); err != nil {
		return p, badRequest("Environment and extra variables must be valid JSON")
	}
	return p, nil
}

// unwrapJSON decodes raw into v, or the JSON text raw holds when it is a
// string (forms send "[\"-v\"]"); absent, null and "" leave v alone.
func unwrapJSON(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	var text string
	if json.Unmarshal(raw, &text) == nil {
		raw = bytes.TrimSpace([]byte(text))
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// webhookTask is the task an integration starts: its template, its
// task_params, and the extracted values as its environment (over
// task_params' environment).
func webhookTask(in *bastionv1.Integration, template *bastionv1.Template, values map[string]json.RawMessage) (*bastionv1.Task, error) {
	var raw []byte
	if in.Spec.TaskParams != nil {
		raw = in.Spec.TaskParams.Raw
	}
	params, err := parseTaskParams(raw)
	if err != nil {
		return nil, fmt.Errorf("integration %q: %w", in.Spec.DisplayName, err)
	}
	env := params.environment
	if env == nil {
		env = map[string]json.RawMessage{}
	}
	for k, v := range values {
		env[k] = v
	}
	task := &bastionv1.Task{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{bastionv1.LabelTemplate: template.Name},
			// With its id (createObject) and the run's finalizer, as the
			// reconciler would give them one write later.
			Finalizers: []string{bastionv1.TaskRunFinalizer}},
		Spec: bastionv1.TaskSpec{
			TemplateRef:    bastionv1.ObjectRef{Name: template.Name},
			IntegrationRef: &bastionv1.ObjectRef{Name: in.Name},
			Message:        params.Message, Arguments: params.arguments,
			Debug: params.Debug, DryRun: params.DryRun, Diff: params.Diff,
			Playbook: params.Playbook, Limit: params.Limit, GitBranch: params.GitBranch,
		},
	}
	// The integration's manager wrote task_params, but the values come from
	// the sender: both meet the template's rule, as a task_runner would.
	if err := taskvars.CheckTask(&template.Spec, &task.Spec, slices.Collect(maps.Keys(env))); err != nil {
		return nil, badRequest(err.Error())
	}
	if len(env) > 0 {
		data, err := json.Marshal(env)
		if err != nil {
			return nil, err
		}
		task.Spec.ExtraVars = &apiextensionsv1.JSON{Raw: data}
	}
	return task, nil
}

// errTaskMayHaveStarted is a webhook task's create whose outcome is not
// known: the request to the apiserver failed without a refusal (a timeout,
// a connection cut, a 5xx), and the apiserver may have made the Task all
// the same. The delivery then counts as run (a GitHub delivery keeps its
// claim, webhook_replay.go): running a deployment twice is worse than
// asking its owner to start it again, so the delivery is run at most once.
var errTaskMayHaveStarted = &statusError{http.StatusServiceUnavailable,
	"the cluster did not confirm the task's creation, so it may have started: check the project's tasks before starting it again; " +
		"a GitHub delivery is not run again (its redelivery is answered replay)"}

// startWebhookTask creates the task (the TaskReconciler does the rest) and
// records who started it. An error other than errTaskMayHaveStarted means
// no task was made.
func (s *Server) startWebhookTask(ctx context.Context, a *projectAccess, in *bastionv1.Integration, template *bastionv1.Template, values map[string]json.RawMessage) error {
	task, err := webhookTask(in, template, values)
	if err != nil {
		return err
	}
	taskID, err := s.createObject(ctx, a, task, ids.CounterTask, template.Spec.DisplayName)
	switch {
	case err == nil:
	case taskID != 0:
		// Made, not yet seen in the cache (createObject's wait): the
		// reconciler will run it all the same.
		logAPI().Error(err, "a webhook's task was made but not yet seen", "integration", in.Name, "task", task.Name)
	case createRefused(err):
		return err
	default:
		logAPI().Error(err, "a webhook's task create has no answer; it may have started", "integration", in.Name)
		return errTaskMayHaveStarted
	}
	_, err = s.opts.Store.AddEvent(ctx, store.Event{
		ProjectID: a.id, ProjectName: a.project.Spec.DisplayName, IntegrationID: idOf(in),
		ObjectType: "task", ObjectID: taskID, ObjectName: template.Spec.DisplayName,
		Description: fmt.Sprintf("Task %d of %s started by integration %s", taskID, template.Spec.DisplayName, in.Spec.DisplayName),
	})
	if err != nil {
		logAPI().Error(err, "recording a webhook's task", "integration", in.Name, "task", task.Name)
	}
	return nil
}

// createRefused tells a createObject failure after which nothing was made
// (its id allocation failed, or the apiserver refused the create with a
// 4xx: invalid, forbidden, a name taken, too many requests) from one whose
// outcome is unknown.
func createRefused(err error) bool {
	var status apierrors.APIStatus
	switch {
	case errors.As(err, new(nothingMade)):
		return true
	case errors.As(err, &status):
		code := status.Status().Code
		return code >= 400 && code < 500 && code != http.StatusRequestTimeout
	}
	return false
}
