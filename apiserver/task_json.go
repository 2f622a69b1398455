package apiserver

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

// taskJSON is a task as the API shows it (api-contract.md, "task").
// Optional references are null when unset, as Semaphore answers them;
// secret is always "": a task's secret values are never read back.
type taskJSON struct {
	ID            int64      `json:"id"`
	TemplateID    int64      `json:"template_id"`
	ProjectID     int64      `json:"project_id"`
	Status        string     `json:"status"`
	Debug         bool       `json:"debug"`
	DryRun        bool       `json:"dry_run"`
	Diff          bool       `json:"diff"`
	Playbook      string     `json:"playbook"`
	Environment   string     `json:"environment"`
	Limit         string     `json:"limit"`
	Secret        string     `json:"secret"`
	Arguments     string     `json:"arguments"`
	GitBranch     string     `json:"git_branch"`
	UserID        *int64     `json:"user_id"`
	IntegrationID *int64     `json:"integration_id"`
	ScheduleID    *int64     `json:"schedule_id"`
	Created       time.Time  `json:"created"`
	Start         *time.Time `json:"start"`
	End           *time.Time `json:"end"`
	Message       string     `json:"message"`
	CommitHash    string     `json:"commit_hash"`
	CommitMessage string     `json:"commit_message"`
	BuildTaskID   *int64     `json:"build_task_id"`
	Version       *string    `json:"version"`
	InventoryID   *int64     `json:"inventory_id"`
	// Approval is Bastion's: present for a task whose template requires
	// approval (task_approval.go).
	Approval *taskApprovalJSON `json:"approval,omitempty"`
}

// taskItemJSON is a task in a list: the task plus its template's fields,
// its user's name and its build task.
type taskItemJSON struct {
	taskJSON
	TplPlaybook string    `json:"tpl_playbook"`
	TplAlias    string    `json:"tpl_alias"`
	TplType     string    `json:"tpl_type"`
	TplApp      string    `json:"tpl_app"`
	UserName    *string   `json:"user_name"`
	BuildTask   *taskJSON `json:"build_task"`
}

// taskView renders the tasks of one project for one request. It resolves
// references (template, user, inventory, schedule, integration, build
// task) through lookups remembered for the request, never by a search per
// task. Objects come from the cache without a copy: they are only read.
type taskView struct {
	s         *Server
	ctx       context.Context
	ns        string
	projectID int64
	tasks     *projectTasks

	templates map[string]*bastionv1.Template // by object name; nil entry: none
	users     map[string]*bastionv1.User     // by object name; nil entry: none
	refs      map[string]map[string]int64
}

// newTaskView prepares the project's task index for a read.
func (s *Server) newTaskView(ctx context.Context, a *projectAccess) (*taskView, error) {
	if s.tasks == nil {
		return nil, errNoTaskIndex
	}
	v := &taskView{s: s, ctx: ctx, ns: a.namespace(), projectID: a.id,
		templates: map[string]*bastionv1.Template{}, users: map[string]*bastionv1.User{}, refs: map[string]map[string]int64{}}
	tasks, err := s.tasks.prepare(ctx, v.ns, a.id)
	if err != nil {
		return nil, err
	}
	v.tasks = tasks
	return v, nil
}

// errNoTaskIndex: the server was built without the manager's cache.
var errNoTaskIndex = &statusError{http.StatusServiceUnavailable, "task lists need the manager's cache, which this server was started without"}

// template is the project's Template called name, or nil.
func (v *taskView) template(name string) *bastionv1.Template {
	t, seen := v.templates[name]
	if !seen {
		t = &bastionv1.Template{}
		key := client.ObjectKey{Namespace: v.ns, Name: name}
		if name == "" || v.s.opts.Client.Get(v.ctx, key, t, client.UnsafeDisableDeepCopy) != nil || !t.DeletionTimestamp.IsZero() {
			t = nil
		}
		v.templates[name] = t
	}
	return t
}

// allTemplates lists the project's numbered templates.
func (v *taskView) allTemplates() ([]*bastionv1.Template, error) {
	list := &bastionv1.TemplateList{}
	if err := v.s.opts.Client.List(v.ctx, list, inNS(v.ns), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make([]*bastionv1.Template, 0, len(list.Items))
	for i := range list.Items {
		t := &list.Items[i]
		if _, ok := ids.FromLabels(t); ok && t.DeletionTimestamp.IsZero() {
			v.templates[t.Name] = t
			out = append(out, t)
		}
	}
	return out, nil
}

// templateNamesByID maps the project's template ids to object names.
func (s *Server) templateNamesByID(ctx context.Context, ns string) map[int64]string {
	list := &bastionv1.TemplateList{}
	out := map[int64]string{}
	if err := s.opts.Client.List(ctx, list, inNS(ns), client.UnsafeDisableDeepCopy); err == nil {
		for i := range list.Items {
			if id, ok := ids.FromLabels(&list.Items[i]); ok {
				out[id] = list.Items[i].Name
			}
		}
	}
	return out
}

// task renders an entry in the task shape.
func (v *taskView) task(e *taskEntry) taskJSON {
	if e.task == nil {
		return v.fromSummary(e.summary)
	}
	t := e.task
	// The checkout as the runner reported it: the controller copies it
	// into status.commitHash later (controllers: commitShowsAfter).
	var run bastionv1.TaskRunCommit
	if t.Status.Run != nil && t.Status.Run.Commit != nil {
		run = *t.Status.Run.Commit
	}
	out := taskJSON{
		ID: e.id, ProjectID: v.projectID, Status: statusOf(t.Status.Status),
		Debug: t.Spec.Debug, DryRun: t.Spec.DryRun, Diff: t.Spec.Diff, Playbook: t.Spec.Playbook,
		Environment: "{}", Limit: t.Spec.Limit, Arguments: argumentsText(t.Spec.Arguments), GitBranch: t.Spec.GitBranch,
		Created: t.CreationTimestamp.UTC(), Start: timeOf(t.Status.Start), End: timeOf(t.Status.End),
		// The user's note; a task started without one shows why it is
		// in its state, as a pruned task's summary does.
		Message:    cmp.Or(t.Spec.Message, t.Status.Message),
		CommitHash: cmp.Or(run.Hash, t.Status.CommitHash, t.Spec.CommitHash), CommitMessage: cmp.Or(run.Message, t.Status.CommitMessage),
		Version:       nullableString(t.Status.Version),
		UserID:        nullable(idOrZero(v.user(t.Spec.User))),
		InventoryID:   nullable(v.refID(t.Spec.InventoryRef, "inventory")),
		ScheduleID:    nullable(v.refID(t.Spec.ScheduleRef, "schedule")),
		IntegrationID: nullable(v.refID(t.Spec.IntegrationRef, "integration")),
		Approval:      approvalJSON(t),
	}
	if t.Spec.ExtraVars != nil && len(t.Spec.ExtraVars.Raw) > 0 {
		out.Environment = string(t.Spec.ExtraVars.Raw)
	}
	if tpl := v.template(t.Spec.TemplateRef.Name); tpl != nil {
		out.TemplateID = idOf(tpl)
	}
	if b := v.buildTask(e); b != nil {
		out.BuildTaskID = &b.id
	}
	return out
}

func (v *taskView) fromSummary(s *store.TaskSummary) taskJSON {
	return taskJSON{
		ID: s.TaskID, TemplateID: s.TemplateID, ProjectID: v.projectID, Status: statusOf(bastionv1.TaskStatusValue(s.Status)),
		Environment: "{}", Arguments: "[]", Created: s.Created.UTC(), Start: s.Start, End: s.End,
		Message: s.Message, CommitHash: s.CommitHash, CommitMessage: s.CommitMessage,
		Version: nullableString(s.Version), UserID: nullable(cmp.Or(idOrZero(v.user(s.UserName)), s.UserID)),
		BuildTaskID: nullable(s.BuildTaskID), ScheduleID: nullable(s.ScheduleID), IntegrationID: nullable(s.IntegrationID),
	}
}

// item renders an entry in the list shape.
func (v *taskView) item(e *taskEntry) taskItemJSON {
	out := taskItemJSON{taskJSON: v.task(e)}
	userName := ""
	if e.task != nil {
		userName = e.task.Spec.User
	} else {
		userName = e.summary.UserName
		out.TplPlaybook, out.TplAlias, out.TplType, out.TplApp = e.summary.TplPlaybook, e.summary.TplAlias, e.summary.TplType, e.summary.TplApp
	}
	if tpl := v.template(e.template); tpl != nil {
		out.TplPlaybook, out.TplAlias = tpl.Spec.Playbook, tpl.Spec.DisplayName
		out.TplType, out.TplApp = string(tpl.Spec.Type), string(tpl.Spec.App)
	}
	if u := v.user(userName); u != nil {
		name := u.Spec.Name
		out.UserName = &name
	}
	if b := v.buildTask(e); b != nil {
		build := v.task(b)
		out.BuildTask = &build
	}
	return out
}

// items renders entries in the list shape, in their order.
func (v *taskView) items(entries []*taskEntry) []taskItemJSON {
	out := make([]taskItemJSON, 0, len(entries))
	for _, e := range entries {
		out = append(out, v.item(e))
	}
	return out
}

// buildTask is the build task a deploy task deploys, if the project still
// has it.
func (v *taskView) buildTask(e *taskEntry) *taskEntry {
	switch {
	case e.task != nil && e.task.Spec.BuildTaskRef != nil:
		return v.s.tasks.entryNamed(v.tasks, e.task.Spec.BuildTaskRef.Name)
	case e.summary != nil && e.summary.BuildTaskID != 0:
		return v.s.tasks.byID(v.tasks, e.summary.BuildTaskID)
	}
	return nil
}

// user is the User called name (its object name), or nil.
func (v *taskView) user(name string) *bastionv1.User {
	if name == "" {
		return nil
	}
	u, seen := v.users[name]
	if !seen {
		u = &bastionv1.User{}
		if v.s.opts.Client.Get(v.ctx, client.ObjectKey{Name: name}, u, client.UnsafeDisableDeepCopy) != nil {
			u = nil
		}
		v.users[name] = u
	}
	return u
}

// refID maps a reference to the id of the object of kind it names,
// listing that kind once per request.
func (v *taskView) refID(ref *bastionv1.ObjectRef, kind string) int64 {
	if ref == nil {
		return 0
	}
	byName, ok := v.refs[kind]
	if !ok {
		byName = v.s.idsByName(v.ctx, v.ns, kind)
		v.refs[kind] = byName
	}
	return byName[ref.Name]
}

// idsByName maps the object names of a kind of project object to their
// ids. A failed list maps nothing: readers still get an answer.
func (s *Server) idsByName(ctx context.Context, ns, kind string) map[string]int64 {
	var list client.ObjectList
	switch kind {
	case "inventory":
		list = &bastionv1.InventoryList{}
	case "schedule":
		list = &bastionv1.ScheduleList{}
	case "integration":
		list = &bastionv1.IntegrationList{}
	case "repository":
		list = &bastionv1.RepositoryList{}
	case "environment":
		list = &bastionv1.EnvironmentList{}
	case "view":
		list = &bastionv1.ViewList{}
	default:
		return nil
	}
	out := map[string]int64{}
	if err := s.opts.Client.List(ctx, list, inNS(ns), client.UnsafeDisableDeepCopy); err != nil {
		return out
	}
	items, _ := meta.ExtractList(list)
	for _, item := range items {
		if obj, ok := item.(client.Object); ok && obj.GetDeletionTimestamp().IsZero() {
			out[obj.GetName()] = idOf(obj)
		}
	}
	return out
}

// idOrZero is a User's id, or 0 for none.
func idOrZero(u *bastionv1.User) int64 {
	if u == nil {
		return 0
	}
	return idOf(u)
}

// statusOf is the status a client sees: a task the reconciler has not
// reached yet is waiting.
func statusOf(s bastionv1.TaskStatusValue) string {
	if s == "" {
		return string(bastionv1.TaskWaiting)
	}
	return string(s)
}

// argumentsText is a list of arguments as the JSON-array text the API
// carries.
func argumentsText(args []string) string {
	if len(args) == 0 {
		return "[]"
	}
	data, _ := json.Marshal(args)
	return string(data)
}

func nullableString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
