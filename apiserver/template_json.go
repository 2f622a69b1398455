package apiserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/taskvars"
	"github.com/bastion-dev/bastion/internal/versions"
)

// templateJSON is a template as the API shows it (api-contract.md,
// "template"). Optional references are null when unset.
type templateJSON struct {
	ID                      int64  `json:"id"`
	ProjectID               int64  `json:"project_id"`
	InventoryID             *int64 `json:"inventory_id"`
	RepositoryID            int64  `json:"repository_id"`
	EnvironmentID           int64  `json:"environment_id"`
	Name                    string `json:"name"`
	Playbook                string `json:"playbook"`
	Arguments               string `json:"arguments"`
	AllowOverrideArgsInTask bool   `json:"allow_override_args_in_task"`
	taskOverridesJSON
	Description           string          `json:"description"`
	Vaults                []vaultJSON     `json:"vaults"`
	Type                  string          `json:"type"`
	StartVersion          string          `json:"start_version"`
	BuildTemplateID       *int64          `json:"build_template_id"`
	ViewID                *int64          `json:"view_id"`
	LastTask              *taskItemJSON   `json:"last_task"`
	LastTaskID            *int64          `json:"last_task_id"` // null when the template never ran
	Autorun               bool            `json:"autorun"`
	GitBranch             string          `json:"git_branch"`
	SurveyVars            []surveyVarJSON `json:"survey_vars"`
	SuppressSuccessAlerts bool            `json:"suppress_success_alerts"`
	RequireApproval       bool            `json:"require_approval"`
	App                   string          `json:"app"`
	Tasks                 int             `json:"tasks"`
	managedJSON
	// TaskPods override the project's task_pods (ours).
	TaskPods taskPodsJSON `json:"task_pods"`
}

// vaultJSON is a vault password of a template. Vaults are a list inside
// the Template, so a vault's id is its position, from 1.
// taskOverridesJSON are what a template lets its tasks choose beyond their
// survey variables and arguments (internal/taskvars); all off by default.
// allow_override_branch_in_task is Semaphore's name; it covers git_branch
// and commit_hash, which both choose the code that runs.
type taskOverridesJSON struct {
	AllowOverrideBranchInTask    bool `json:"allow_override_branch_in_task"`
	AllowOverrideInventoryInTask bool `json:"allow_override_inventory_in_task"`
	AllowOverridePlaybookInTask  bool `json:"allow_override_playbook_in_task"`
	AllowOverrideExtraVarsInTask bool `json:"allow_override_extra_vars_in_task"`
}

func overridesJSON(spec *bastionv1.TemplateSpec) taskOverridesJSON {
	return taskOverridesJSON{
		AllowOverrideBranchInTask: spec.AllowOverrideBranchInTask, AllowOverrideInventoryInTask: spec.AllowOverrideInventoryInTask,
		AllowOverridePlaybookInTask: spec.AllowOverridePlaybookInTask, AllowOverrideExtraVarsInTask: spec.AllowOverrideExtraVarsInTask,
	}
}

// apply sets the template's switches from the request.
func (o taskOverridesJSON) apply(spec *bastionv1.TemplateSpec) {
	spec.AllowOverrideBranchInTask, spec.AllowOverrideInventoryInTask = o.AllowOverrideBranchInTask, o.AllowOverrideInventoryInTask
	spec.AllowOverridePlaybookInTask, spec.AllowOverrideExtraVarsInTask = o.AllowOverridePlaybookInTask, o.AllowOverrideExtraVarsInTask
}

type vaultJSON struct {
	ID         int64  `json:"id"`
	ProjectID  int64  `json:"project_id"`
	TemplateID int64  `json:"template_id"`
	VaultKeyID int64  `json:"vault_key_id"`
	Name       string `json:"name"`
}

type surveyVarJSON struct {
	Name        string            `json:"name"`
	Title       string            `json:"title"`
	Required    bool              `json:"required"`
	Type        string            `json:"type"`
	Description string            `json:"description"`
	Values      []surveyValueJSON `json:"values"`
}

type surveyValueJSON struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// templateRequest is the body of POST and PUT /templates. Fields a client
// echoes from a read (last_task, tasks, project_id) are ignored.
type templateRequest struct {
	ID                      int64   `json:"id"`
	InventoryID             *int64  `json:"inventory_id"`
	RepositoryID            int64   `json:"repository_id"`
	EnvironmentID           int64   `json:"environment_id"`
	Name                    string  `json:"name"`
	Playbook                string  `json:"playbook"`
	Arguments               *string `json:"arguments"`
	AllowOverrideArgsInTask bool    `json:"allow_override_args_in_task"`
	taskOverridesJSON
	Description           string          `json:"description"`
	Vaults                []vaultJSON     `json:"vaults"`
	Type                  string          `json:"type"`
	StartVersion          *string         `json:"start_version"`
	BuildTemplateID       *int64          `json:"build_template_id"`
	ViewID                *int64          `json:"view_id"`
	Autorun               bool            `json:"autorun"`
	GitBranch             *string         `json:"git_branch"`
	SurveyVars            []surveyVarJSON `json:"survey_vars"`
	SuppressSuccessAlerts bool            `json:"suppress_success_alerts"`
	// RequireApproval absent keeps what the template had: a client
	// that does not know it (Semaphore's UI) must not drop the gate.
	RequireApproval *bool  `json:"require_approval"`
	App             string `json:"app"`
	// TaskPods: absent or null keeps the stored settings.
	TaskPods *taskPodsJSON `json:"task_pods"`
}

var (
	templateTypes = []string{string(bastionv1.TemplateTask), string(bastionv1.TemplateBuild), string(bastionv1.TemplateDeploy)}
	templateApps  = []string{"", string(bastionv1.AppAnsible), string(bastionv1.AppTerraform), string(bastionv1.AppTofu), string(bastionv1.AppBash)}
	// surveyTypes are what the Template CRD allows: "" is a string.
	surveyTypes = []string{"", "int", "enum", "secret"}
)

// validate checks the rules of docs/features.md §5 that need no lookup, in the order
// the template form shows its fields, and answers the first broken one.
func (req *templateRequest) validate() error {
	switch {
	case strings.TrimSpace(req.Name) == "":
		return badRequest("Name is required")
	case playbookPath(req.Playbook) != nil:
		return playbookPath(req.Playbook)
	case req.RepositoryID == 0:
		return badRequest("Repository is required")
	case req.EnvironmentID == 0:
		return badRequest("Environment is required")
	case !slices.Contains(templateTypes, req.Type):
		return invalidf("type must be \"\", build or deploy, not %q", req.Type)
	case !slices.Contains(templateApps, req.App):
		return invalidf("app must be \"\", ansible, terraform, tofu or bash, not %q", req.App)
	case req.Type == string(bastionv1.TemplateBuild) && strings.TrimSpace(deref(req.StartVersion)) == "":
		return badRequest("Start version is required")
	case req.Type == string(bastionv1.TemplateDeploy) && deref(req.BuildTemplateID) == 0:
		return badRequest("Build template is required")
	}
	if req.Type == string(bastionv1.TemplateBuild) {
		if _, err := versions.First(strings.TrimSpace(*req.StartVersion)); err != nil {
			return invalidf("Start version must contain digits to count up from, for example 0.0.0 (%q has none)", strings.TrimSpace(*req.StartVersion))
		}
	}
	if _, err := parseArguments(deref(req.Arguments)); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i := range req.SurveyVars {
		v := &req.SurveyVars[i]
		v.Name = strings.TrimSpace(v.Name)
		switch {
		case v.Name == "":
			return badRequest("Name is required")
		case strings.TrimSpace(v.Title) == "":
			return badRequest("Title is required")
		case !slices.Contains(surveyTypes, v.Type):
			return invalidf("survey variable %s: type must be \"\", int, enum or secret, not %q", v.Name, v.Type)
		case seen[v.Name]:
			return invalidf("survey variable %s is defined twice", v.Name)
		}
		if err := taskvars.CheckSurveyVar(bastionv1.TemplateApp(req.App), v.Name); err != nil {
			return badRequest(err.Error())
		}
		seen[v.Name] = true
	}
	for _, v := range req.Vaults {
		if v.VaultKeyID == 0 {
			return badRequest("Key is required")
		}
	}
	return nil
}

// parseArguments reads a JSON array of strings as text; "" is none.
func parseArguments(text string) ([]string, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var args []string
	if err := json.Unmarshal([]byte(text), &args); err != nil {
		return nil, badRequest(`Arguments must be a JSON array of strings, such as ["-v", "--check"]`)
	}
	if len(args) == 0 {
		return nil, nil
	}
	return args, nil
}

// templateSpec turns a valid request into a spec, mapping ids to object
// references; self is the template being updated ("" when creating).
func (s *Server) templateSpec(ctx context.Context, a *projectAccess, req *templateRequest, self string) (bastionv1.TemplateSpec, error) {
	args, _ := parseArguments(deref(req.Arguments))
	spec := bastionv1.TemplateSpec{
		DisplayName: strings.TrimSpace(req.Name), Description: req.Description,
		Type: bastionv1.TemplateType(req.Type), App: bastionv1.TemplateApp(req.App),
		Playbook: strings.TrimSpace(req.Playbook), StartVersion: strings.TrimSpace(deref(req.StartVersion)),
		Autorun: req.Autorun, GitBranch: strings.TrimSpace(deref(req.GitBranch)), Arguments: args,
		AllowOverrideArgsInTask: req.AllowOverrideArgsInTask, SuppressSuccessAlerts: req.SuppressSuccessAlerts,
		RequireApproval: deref(req.RequireApproval),
	}
	req.taskOverridesJSON.apply(&spec)
	if req.TaskPods != nil {
		var err error
		if spec.TaskPods, err = req.TaskPods.settings(s.opts.TaskPods); err != nil {
			return spec, err
		}
	}
	for _, v := range req.SurveyVars {
		sv := bastionv1.SurveyVar{Name: v.Name, Title: strings.TrimSpace(v.Title), Description: v.Description, Type: v.Type, Required: v.Required}
		for _, val := range v.Values {
			sv.Values = append(sv.Values, bastionv1.SurveyVarValue{Name: val.Name, Value: val.Value})
		}
		spec.SurveyVars = append(spec.SurveyVars, sv)
	}
	ref, err := s.refTo(ctx, a, req.RepositoryID, &bastionv1.RepositoryList{}, "repository_id")
	if err != nil {
		return spec, err
	}
	spec.RepositoryRef = *ref
	if ref, err = s.refTo(ctx, a, req.EnvironmentID, &bastionv1.EnvironmentList{}, "environment_id"); err != nil {
		return spec, err
	}
	spec.EnvironmentRef = *ref
	if spec.InventoryRef, err = s.optionalRef(ctx, a, req.InventoryID, &bastionv1.InventoryList{}, "inventory_id"); err != nil {
		return spec, err
	}
	if spec.ViewRef, err = s.optionalRef(ctx, a, req.ViewID, &bastionv1.ViewList{}, "view_id"); err != nil {
		return spec, err
	}
	if spec.BuildTemplateRef, err = s.buildTemplateRef(ctx, a, req.BuildTemplateID, self); err != nil {
		return spec, err
	}
	for _, v := range req.Vaults {
		key, err := s.refTo(ctx, a, v.VaultKeyID, &corev1.SecretList{}, "vault_key_id")
		if err != nil {
			return spec, err
		}
		spec.Vaults = append(spec.Vaults, bastionv1.TemplateVault{Name: strings.TrimSpace(v.Name), KeyRef: *key})
	}
	return spec, nil
}

// optionalRef is refTo for a reference that may be absent (null or 0).
func (s *Server) optionalRef(ctx context.Context, a *projectAccess, id *int64, list client.ObjectList, field string) (*bastionv1.ObjectRef, error) {
	if deref(id) == 0 {
		return nil, nil
	}
	return s.refTo(ctx, a, *id, list, field)
}

// buildTemplateRef resolves build_template_id: a build template other
// than the template itself, whose successful tasks a deploy deploys.
func (s *Server) buildTemplateRef(ctx context.Context, a *projectAccess, id *int64, self string) (*bastionv1.ObjectRef, error) {
	if deref(id) == 0 {
		return nil, nil
	}
	obj, err := s.objectByID(ctx, a.namespace(), *id, &bastionv1.TemplateList{}, "template")
	if err != nil {
		if _, missing := err.(*statusError); missing {
			return nil, invalidf("build_template_id %d does not exist in this project", *id)
		}
		return nil, err
	}
	build := obj.(*bastionv1.Template)
	switch {
	case build.Name == self:
		return nil, badRequest("a template cannot be its own build template")
	case build.Spec.Type != bastionv1.TemplateBuild:
		return nil, invalidf("the build template must be a template of type build; %s is not", build.Spec.DisplayName)
	}
	return &bastionv1.ObjectRef{Name: build.Name}, nil
}

// templateRender maps a project's object names to ids for the template
// shape, listing each kind once per request.
type templateRender struct {
	view *taskView
	keys map[string]int64 // key Secrets' names → ids; nil until needed
	// stats is every template's task count and last task.
	stats map[string]templateStats
}

func (s *Server) newTemplateRender(v *taskView) *templateRender {
	return &templateRender{view: v, stats: s.tasks.statsByTemplate(v.tasks)}
}

func (t *templateRender) template(tpl *bastionv1.Template) templateJSON {
	v := t.view
	id := idOf(tpl)
	out := templateJSON{
		ID: id, ProjectID: v.projectID, Name: tpl.Spec.DisplayName, Playbook: tpl.Spec.Playbook,
		Arguments: argumentsText(tpl.Spec.Arguments), AllowOverrideArgsInTask: tpl.Spec.AllowOverrideArgsInTask,
		Description: tpl.Spec.Description, Type: string(tpl.Spec.Type), StartVersion: tpl.Spec.StartVersion,
		Autorun: tpl.Spec.Autorun, GitBranch: tpl.Spec.GitBranch, SuppressSuccessAlerts: tpl.Spec.SuppressSuccessAlerts,
		RequireApproval: tpl.Spec.RequireApproval,
		App:             string(tpl.Spec.App), taskOverridesJSON: overridesJSON(&tpl.Spec), TaskPods: toTaskPodsJSON(tpl.Spec.TaskPods),
		RepositoryID:  v.refID(&tpl.Spec.RepositoryRef, "repository"),
		EnvironmentID: v.refID(&tpl.Spec.EnvironmentRef, "environment"),
		InventoryID:   nullable(v.refID(tpl.Spec.InventoryRef, "inventory")),
		ViewID:        nullable(v.refID(tpl.Spec.ViewRef, "view")),
		Vaults:        []vaultJSON{}, SurveyVars: []surveyVarJSON{},
	}
	if b := tpl.Spec.BuildTemplateRef; b != nil {
		if build := v.template(b.Name); build != nil {
			out.BuildTemplateID = nullable(idOf(build))
		}
	}
	for i, vault := range tpl.Spec.Vaults {
		out.Vaults = append(out.Vaults, vaultJSON{ID: int64(i + 1), ProjectID: v.projectID, TemplateID: id,
			VaultKeyID: t.keyID(vault.KeyRef.Name), Name: vault.Name})
	}
	for _, sv := range tpl.Spec.SurveyVars {
		j := surveyVarJSON{Name: sv.Name, Title: sv.Title, Required: sv.Required, Type: sv.Type,
			Description: sv.Description, Values: []surveyValueJSON{}}
		for _, val := range sv.Values {
			j.Values = append(j.Values, surveyValueJSON{Name: val.Name, Value: val.Value})
		}
		out.SurveyVars = append(out.SurveyVars, j)
	}
	if st, ok := t.stats[tpl.Name]; ok {
		out.Tasks = st.count
		last := v.item(st.last)
		out.LastTask = &last
		out.LastTaskID = &last.ID
	}
	return out
}

// keyID maps a key Secret's name to its id. Keys are Secrets, which are
// never cached: they are listed once, as metadata only, so no secret
// material is read.
func (t *templateRender) keyID(name string) int64 {
	if t.keys == nil {
		t.keys = map[string]int64{}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		v := t.view
		if err := v.s.opts.Client.List(v.ctx, list, inNS(v.ns), client.HasLabels{bastionv1.LabelKeyType}); err == nil {
			for i := range list.Items {
				t.keys[list.Items[i].Name] = idOf(&list.Items[i])
			}
		}
	}
	return t.keys[name]
}

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
