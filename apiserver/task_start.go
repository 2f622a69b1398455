package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/taskvars"
)

// taskRequest is the body of POST /tasks (docs/features.md §7).
type taskRequest struct {
	TemplateID  int64  `json:"template_id"`
	BuildTaskID *int64 `json:"build_task_id"`
	Message     string `json:"message"`
	// Environment is a JSON object as text: the extra variables, with the
	// answers to the template's survey variables.
	Environment string  `json:"environment"`
	Debug       bool    `json:"debug"`
	DryRun      bool    `json:"dry_run"`
	Diff        bool    `json:"diff"`
	Arguments   *string `json:"arguments"`
	CommitHash  string  `json:"commit_hash"`
	GitBranch   string  `json:"git_branch"`
	Limit       string  `json:"limit"`
	Playbook    string  `json:"playbook"`
	InventoryID *int64  `json:"inventory_id"`
	Secret      string  `json:"secret"`
}

var (
	commitHash = regexp.MustCompile(`^[0-9a-fA-F]{4,64}$`)
	digitsOnly = regexp.MustCompile(`^[0-9]+$`)
)

// startTask creates a Task of a template for the signed-in user; the task
// reconciler queues and runs it.
func (s *Server) startTask(w http.ResponseWriter, r *http.Request) {
	var req taskRequest
	if !decode(w, r, &req) {
		return
	}
	a := projectOf(r)
	task, template, secrets, err := s.newTask(r.Context(), a, &req)
	if err != nil {
		failErr(w, r, err)
		return
	}
	task.Spec.User = who(r).user.Name
	secret, err := s.newTaskSecret(r.Context(), a, template, secrets)
	if err != nil {
		failErr(w, r, err)
		return
	}
	if secret != nil {
		task.Spec.SecretRef = &bastionv1.ObjectRef{Name: secret.Name}
	}
	id, err := s.createObject(r.Context(), a, task, ids.CounterTask, template.Spec.DisplayName)
	if err != nil {
		s.dropTaskSecret(r.Context(), secret)
		failErr(w, r, err)
		return
	}
	s.ownTaskSecret(r.Context(), secret, task)
	s.waitTaskIndexed(r.Context(), task)
	s.taskEvent(r, id, template.Name, "created")
	v, err := s.newTaskView(r.Context(), a)
	if err != nil {
		failErr(w, r, err)
		return
	}
	respond(w, http.StatusCreated, v.task(&taskEntry{id: id, template: template.Name, task: task, live: true}))
}

// newTask checks a request by docs/features.md §5 and the template's rules and builds
// the Task, with the secret answers that go into the task's own Secret
// rather than into the Task; nothing is written.
func (s *Server) newTask(ctx context.Context, a *projectAccess, req *taskRequest) (*bastionv1.Task, *bastionv1.Template, map[string]string, error) {
	if req.TemplateID == 0 {
		return nil, nil, nil, badRequest("Template is required")
	}
	obj, err := s.objectByID(ctx, a.namespace(), req.TemplateID, &bastionv1.TemplateList{}, "template")
	if err != nil {
		if _, missing := err.(*statusError); missing {
			return nil, nil, nil, invalidf("template_id %d does not exist in this project", req.TemplateID)
		}
		return nil, nil, nil, err
	}
	template := obj.(*bastionv1.Template)
	vars, err := parseEnvironment(req.Environment)
	if err != nil {
		return nil, nil, nil, err
	}
	secrets, err := parseSecretAnswers(req.Secret)
	if err != nil {
		return nil, nil, nil, err
	}
	if vars, err = moveSecretAnswers(template.Spec.SurveyVars, vars, secrets); err != nil {
		return nil, nil, nil, err
	}
	if err := taskvars.CheckVars(&template.Spec, append(varNames(vars), slices.Collect(maps.Keys(secrets))...)); err != nil {
		return nil, nil, nil, badRequest(err.Error())
	}
	if err := checkSurvey(template.Spec.SurveyVars, withAnswers(vars, secrets)); err != nil {
		return nil, nil, nil, err
	}
	args, err := parseArguments(deref(req.Arguments))
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkRunOptions(req); err != nil {
		return nil, nil, nil, err
	}
	if err := taskvars.CheckOverrides(&template.Spec, taskvars.Overrides{
		GitBranch: strings.TrimSpace(req.GitBranch), CommitHash: strings.TrimSpace(req.CommitHash),
		Playbook: strings.TrimSpace(req.Playbook), Inventory: deref(req.InventoryID) != 0, Arguments: len(args) > 0,
	}); err != nil {
		return nil, nil, nil, badRequest(err.Error())
	}
	if err := taskvars.CheckCommandLine(template.Spec.App, strings.TrimSpace(req.Limit), args); err != nil {
		return nil, nil, nil, badRequest(err.Error())
	}
	task := &bastionv1.Task{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{bastionv1.LabelTemplate: template.Name},
			// With its id (createObject) and the run's finalizer, as the
			// reconciler would give them one write later.
			Finalizers: []string{bastionv1.TaskRunFinalizer}},
		Spec: bastionv1.TaskSpec{
			TemplateRef: bastionv1.ObjectRef{Name: template.Name}, Message: strings.TrimSpace(req.Message),
			Arguments: args, Debug: req.Debug, DryRun: req.DryRun, Diff: req.Diff,
			Playbook: strings.TrimSpace(req.Playbook), Limit: strings.TrimSpace(req.Limit),
			GitBranch: strings.TrimSpace(req.GitBranch), CommitHash: strings.TrimSpace(req.CommitHash),
		},
	}
	if vars != nil {
		task.Spec.ExtraVars = &apiextensionsv1.JSON{Raw: vars}
	}
	if task.Spec.InventoryRef, err = s.optionalRef(ctx, a, req.InventoryID, &bastionv1.InventoryList{}, "inventory_id"); err != nil {
		return nil, nil, nil, err
	}
	if template.Spec.Type == bastionv1.TemplateDeploy {
		build, err := s.buildTask(ctx, a, template, deref(req.BuildTaskID))
		if err != nil {
			return nil, nil, nil, err
		}
		task.Spec.BuildTaskRef = &bastionv1.ObjectRef{Name: build.Name}
	}
	return task, template, secrets, nil
}

// parseEnvironment reads the environment text: nothing, or a JSON object.
// It returns the object compacted, nil for nothing.
func parseEnvironment(text string) (json.RawMessage, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
		return nil, badRequest("Environment and extra variables must be valid JSON")
	}
	var out bytes.Buffer
	if err := json.Compact(&out, []byte(text)); err != nil {
		return nil, badRequest("Environment and extra variables must be valid JSON")
	}
	return out.Bytes(), nil
}

// varNames are the names of an environment object (already parsed).
func varNames(env json.RawMessage) []string {
	vars := map[string]json.RawMessage{}
	if env != nil {
		_ = json.Unmarshal(env, &vars)
	}
	return slices.Collect(maps.Keys(vars))
}

// checkSurvey applies the template's survey variables to the task's
// environment: a required one must be filled ("<title> is required"), an
// int one must be digits only, an enum one one of its values.
func checkSurvey(survey []bastionv1.SurveyVar, env json.RawMessage) error {
	vars := map[string]json.RawMessage{}
	if env != nil {
		_ = json.Unmarshal(env, &vars)
	}
	for _, sv := range survey {
		value, filled := surveyValue(vars[sv.Name])
		switch {
		case !filled && sv.Required:
			return badRequest(sv.Title + " is required")
		case !filled:
		case sv.Type == "int" && !digitsOnly.MatchString(value):
			return invalidf("%s must be a whole number (digits only)", sv.Title)
		case sv.Type == "enum" && len(sv.Values) > 0 && !enumHas(sv.Values, value):
			return invalidf("%s must be one of its listed values", sv.Title)
		}
	}
	return nil
}

// surveyValue is a variable's value as text; a missing, null or empty
// value is not filled. Numbers count as their JSON text.
func surveyValue(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var text string
	if json.Unmarshal(raw, &text) != nil {
		text = string(raw)
	}
	return text, strings.TrimSpace(text) != ""
}

func enumHas(values []bastionv1.SurveyVarValue, v string) bool {
	for _, val := range values {
		if val.Value == v {
			return true
		}
	}
	return false
}

// checkRunOptions refuses values that would reach the runner's argv as
// options rather than values.
func checkRunOptions(req *taskRequest) error {
	switch {
	case req.CommitHash != "" && !commitHash.MatchString(strings.TrimSpace(req.CommitHash)):
		return badRequest("commit_hash must be a commit id: 4 to 64 hexadecimal characters")
	case strings.HasPrefix(strings.TrimSpace(req.GitBranch), "-"):
		return badRequest("git_branch must not start with -")
	case strings.TrimSpace(req.Playbook) != "" && !insideRepository(req.Playbook):
		return badRequest("the playbook must be a relative path inside the repository")
	}
	return nil
}

// buildTask is the build a deploy task deploys: a successful task of the
// deploy template's build template that etcd still keeps (the reconciler
// reads its version from the object).
func (s *Server) buildTask(ctx context.Context, a *projectAccess, deploy *bastionv1.Template, id int64) (*bastionv1.Task, error) {
	if id == 0 {
		return nil, badRequest("Build version is required")
	}
	obj, err := s.objectByID(ctx, a.namespace(), id, &bastionv1.TaskList{}, "task")
	if _, missing := err.(*statusError); missing {
		_, summaryErr := s.opts.Store.TaskSummary(ctx, store.TaskKey{ProjectID: a.id, TaskID: id})
		if summaryErr == nil {
			return nil, invalidf("build task %d was pruned by retention and can no longer be deployed; choose a newer build", id)
		}
		if !errors.Is(summaryErr, store.ErrNotFound) {
			return nil, summaryErr
		}
		return nil, invalidf("build task %d does not exist in this project", id)
	}
	if err != nil {
		return nil, err
	}
	build := obj.(*bastionv1.Task)
	if deploy.Spec.BuildTemplateRef == nil || build.Spec.TemplateRef.Name != deploy.Spec.BuildTemplateRef.Name {
		return nil, invalidf("task %d is not a build of this template's build template", id)
	}
	if build.Status.Status != bastionv1.TaskSuccess {
		return nil, invalidf("build task %d did not succeed (it is %s); only successful builds can be deployed", id, statusOf(build.Status.Status))
	}
	return build, nil
}
