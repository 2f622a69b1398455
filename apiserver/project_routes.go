package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/objname"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/taskpods"
)

// projectJSON is a project as the API shows it (api-contract.md).
type projectJSON struct {
	ID               int64     `json:"id"`
	Name             string    `json:"name"`
	Created          time.Time `json:"created"`
	Alert            bool      `json:"alert"`
	AlertChat        *string   `json:"alert_chat"`
	MaxParallelTasks int32     `json:"max_parallel_tasks"`
	Type             string    `json:"type"`
	managedJSON
	// TaskPods are the defaults of the project's task pods (ours).
	TaskPods taskPodsJSON `json:"task_pods"`
}

func (s *Server) toProjectJSON(p *bastionv1.Project) projectJSON {
	id, _ := ids.FromLabels(p)
	out := projectJSON{
		ID: id, Name: p.Spec.DisplayName, Created: p.CreationTimestamp.UTC(), Alert: p.Spec.Alert,
		MaxParallelTasks: p.Spec.MaxParallelTasks, Type: p.Spec.Type, TaskPods: toTaskPodsJSON(p.Spec.TaskPods),
	}
	if p.Spec.AlertChat != "" {
		chat := p.Spec.AlertChat
		out.AlertChat = &chat
	}
	s.markManaged(&out, p)
	return out
}

// projectRequest is the body of POST /projects and PUT /project/{id}.
type projectRequest struct {
	ID               int64           `json:"id"`
	Name             string          `json:"name"`
	Alert            bool            `json:"alert"`
	AlertChat        *string         `json:"alert_chat"`
	MaxParallelTasks json.RawMessage `json:"max_parallel_tasks"`
	Type             string          `json:"type"`
	// TaskPods: absent or null keeps the stored settings.
	TaskPods *taskPodsJSON `json:"task_pods"`
	// Demo fills the new project with the demo resources.
	Demo bool `json:"demo"`
}

// spec validates the request by docs/features.md §5 and returns the project's fields.
// Task pod settings are checked against policy; absent, the spec has none
// (an update keeps the stored ones: see updateProject).
func (req projectRequest) spec(policy taskpods.Policy) (bastionv1.ProjectSpec, error) {
	if strings.TrimSpace(req.Name) == "" {
		return bastionv1.ProjectSpec{}, badRequest("Project name is required")
	}
	limit, err := parseLimit(req.MaxParallelTasks)
	if err != nil {
		return bastionv1.ProjectSpec{}, err
	}
	spec := bastionv1.ProjectSpec{
		DisplayName: strings.TrimSpace(req.Name), Alert: req.Alert, MaxParallelTasks: limit, Type: req.Type,
	}
	if req.AlertChat != nil {
		spec.AlertChat = strings.TrimSpace(*req.AlertChat)
	}
	if req.TaskPods != nil {
		if spec.TaskPods, err = req.TaskPods.settings(policy); err != nil {
			return bastionv1.ProjectSpec{}, err
		}
	}
	return spec, nil
}

// parseLimit reads max_parallel_tasks: absent or null is 0 (unlimited); a
// number or a string of one (forms send either) must be a whole number of
// at least 0.
func parseLimit(raw json.RawMessage) (int32, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		text = strings.TrimSpace(text)
		if text == "" {
			return 0, nil
		}
		raw = json.RawMessage(text)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
		return 0, badRequest("Must be integer")
	}
	if f < 0 {
		return 0, badRequest("Must be 0 or greater")
	}
	if f > math.MaxInt32 {
		return 0, badRequest("max_parallel_tasks is too large")
	}
	return int32(f), nil
}

// projectListRoutes serves /projects.
func (s *Server) projectListRoutes() chi.Router {
	r := chi.NewRouter()
	r.Get("/", s.listProjects)
	r.Post("/", s.createProjectRoute)
	r.Post("/restore", s.restoreProject)
	return r
}

func (s *Server) listProjects(w http.ResponseWriter, r *http.Request) {
	projects, err := s.visibleProjects(r)
	if err != nil {
		failErr(w, r, err)
		return
	}
	out := make([]projectJSON, 0, len(projects))
	for i := range projects {
		out = append(out, s.toProjectJSON(&projects[i]))
	}
	// By name, as Semaphore answers: the cache's order is arbitrary, and
	// clients pick "the first project" from this list.
	sortByName(out, func(p projectJSON) string { return p.Name }, func(p projectJSON) int64 { return p.ID })
	respond(w, http.StatusOK, out)
}

// mayCreateProjects: admins and users with can_create_project (docs/features.md §6).
func mayCreateProjects(p *principal) bool {
	return p.admin() || p.user.Spec.CanCreateProject
}

func (s *Server) createProjectRoute(w http.ResponseWriter, r *http.Request) {
	if !mayCreateProjects(who(r)) {
		fail(w, http.StatusForbidden, "you may not create projects (can_create_project)")
		return
	}
	var req projectRequest
	if !decode(w, r, &req) {
		return
	}
	spec, err := req.spec(s.opts.TaskPods)
	if err != nil {
		failErr(w, r, err)
		return
	}
	project, err := s.createProject(r.Context(), who(r), spec)
	if err != nil {
		failErr(w, r, err)
		return
	}
	if req.Demo {
		if err := s.fillDemo(r.Context(), project); err != nil {
			// A half-filled demo is worse than none: take it all back.
			_ = s.opts.Client.Delete(context.WithoutCancel(r.Context()), project)
			failErr(w, r, err)
			return
		}
	}
	s.projectEvent(r, project, "Project %s created")
	respond(w, http.StatusCreated, s.toProjectJSON(project))
}

// createProject makes a Project with p as its owner and numbers it, then
// waits until the Project controller has made it usable (its namespace and
// the manager's access to it), as it does for a Project applied with
// kubectl: the caller may fill the project at once.
func (s *Server) createProject(ctx context.Context, p *principal, spec bastionv1.ProjectSpec) (*bastionv1.Project, error) {
	spec.Members = []bastionv1.ProjectMember{{User: p.user.Name, Role: bastionv1.RoleOwner}}
	id, err := s.opts.IDs.Next(ctx, s.opts.ManagerNamespace, ids.CounterProject)
	if err != nil {
		return nil, err
	}
	project := &bastionv1.Project{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: objname.GenerateName(spec.DisplayName, "project"),
			Labels:       map[string]string{bastionv1.LabelID: ids.Format(id)},
		},
		Spec: spec,
	}
	if err := s.opts.Client.Create(ctx, project); err != nil {
		return nil, err
	}
	if err := s.waitProjectReady(ctx, project); err != nil {
		// The Project controller deletes what it made with the project.
		_ = s.opts.Client.Delete(context.WithoutCancel(ctx), project)
		return nil, err
	}
	return project, nil
}

// projectReadyWait bounds how long creating a project waits for its
// controller.
const projectReadyWait = 30 * time.Second

// waitProjectReady returns once the cache shows the project Ready with its
// namespace, and leaves that copy in project.
func (s *Server) waitProjectReady(ctx context.Context, project *bastionv1.Project) error {
	probe := &bastionv1.Project{}
	var ready *metav1.Condition
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, projectReadyWait, true, func(ctx context.Context) (bool, error) {
		if err := s.opts.Client.Get(ctx, clientKey(project), probe); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		ready = meta.FindStatusCondition(probe.Status.Conditions, bastionv1.ConditionReady)
		return probe.Status.Namespace != "" && ready != nil && ready.Status == metav1.ConditionTrue, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		why := "its controller did not answer"
		if ready != nil {
			why = ready.Message
		}
		return fmt.Errorf("project %s is not ready after %s: %s", project.Name, projectReadyWait, why)
	}
	if err != nil {
		return err
	}
	*project = *probe
	return nil
}

func (s *Server) projectEvent(r *http.Request, project *bastionv1.Project, format string) {
	id, _ := ids.FromLabels(project)
	s.event(r, store.Event{ProjectID: id, ProjectName: project.Spec.DisplayName, ObjectType: "project",
		ObjectID: id, ObjectName: project.Spec.DisplayName, Description: fmt.Sprintf(format, project.Spec.DisplayName)})
}

func (s *Server) getProject(w http.ResponseWriter, r *http.Request) {
	respond(w, http.StatusOK, s.toProjectJSON(projectOf(r).project))
}

func (s *Server) updateProject(w http.ResponseWriter, r *http.Request) {
	var req projectRequest
	if !decode(w, r, &req) {
		return
	}
	a := projectOf(r)
	if req.ID != 0 && req.ID != a.id {
		fail(w, http.StatusBadRequest, fmt.Sprintf("the body's id %d is not the URL's id %d", req.ID, a.id))
		return
	}
	spec, err := req.spec(s.opts.TaskPods)
	if err != nil {
		failErr(w, r, err)
		return
	}
	updated, err := s.updateProjectSpec(r.Context(), a.project, func(p *bastionv1.ProjectSpec) error {
		members, pods := p.Members, p.TaskPods
		*p = spec
		p.Members = members // the team has its own routes
		if req.TaskPods == nil {
			p.TaskPods = pods // a client that does not know task_pods keeps them
		}
		return nil
	})
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.projectEvent(r, updated, "Project %s updated")
	w.WriteHeader(http.StatusNoContent)
}

// updateProjectSpec applies change to the latest version of the project,
// retrying on conflicts, and waits until the cache has the result. change
// may refuse by returning an error, which is returned as is.
func (s *Server) updateProjectSpec(ctx context.Context, project *bastionv1.Project, change func(*bastionv1.ProjectSpec) error) (*bastionv1.Project, error) {
	latest := project.DeepCopy()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := s.opts.Reader.Get(ctx, clientKey(project), latest); err != nil {
			return err
		}
		// Settings and team alike: a managed project's spec is its Git's.
		if err := s.refuseManaged("project", latest); err != nil {
			return err
		}
		if err := change(&latest.Spec); err != nil {
			return err
		}
		return s.opts.Client.Update(ctx, latest)
	})
	if err != nil {
		return nil, err
	}
	return latest, s.waitCached(ctx, latest)
}

// deleteProject deletes the Project; its controller deletes the namespace
// and everything in it.
func (s *Server) deleteProject(w http.ResponseWriter, r *http.Request) {
	project := projectOf(r).project
	if err := s.refuseManaged("project", project); err != nil {
		failErr(w, r, err)
		return
	}
	if err := s.opts.Client.Delete(r.Context(), project); err != nil {
		failErr(w, r, err)
		return
	}
	if err := s.waitGone(r.Context(), project); err != nil {
		failErr(w, r, err)
		return
	}
	s.projectEvent(r, project, "Project %s deleted")
	w.WriteHeader(http.StatusNoContent)
}

type roleJSON struct {
	Role        bastionv1.ProjectRole `json:"role"`
	Permissions int                   `json:"permissions"`
}

// projectRole answers the user's role and bits; an admin who is not a
// member gets "" and 0 and passes every check anyway (api-contract.md).
func (s *Server) projectRole(w http.ResponseWriter, r *http.Request) {
	a := projectOf(r)
	respond(w, http.StatusOK, roleJSON{Role: a.role, Permissions: a.permissions})
}

func memberIndex(members []bastionv1.ProjectMember, userName string) int {
	for i, m := range members {
		if m.User == userName {
			return i
		}
	}
	return -1
}
