package apiserver

import (
	"context"
	"net/http"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// Permission bits of docs/features.md §6, as GET /project/{id}/role reports them.
const (
	permRunProjectTasks        = 1
	permUpdateProject          = 2
	permManageProjectResources = 4
	permManageProjectUsers     = 8
)

// rolePermissions maps a project role to its bits (api-contract.md, "Role
// bits"): owner 15, manager 5, task_runner 1, guest 0.
var rolePermissions = map[bastionv1.ProjectRole]int{
	bastionv1.RoleOwner:      permRunProjectTasks | permUpdateProject | permManageProjectResources | permManageProjectUsers,
	bastionv1.RoleManager:    permRunProjectTasks | permManageProjectResources,
	bastionv1.RoleTaskRunner: permRunProjectTasks,
	bastionv1.RoleGuest:      0,
}

// permissionNames name the bits in 403 answers.
var permissionNames = map[int]string{
	permRunProjectTasks:        "runProjectTasks",
	permUpdateProject:          "updateProject",
	permManageProjectResources: "manageProjectResources",
	permManageProjectUsers:     "manageProjectUsers",
}

// projectAccess is the project of a /project/{id} route and what the
// signed-in user may do in it.
type projectAccess struct {
	project *bastionv1.Project
	id      int64
	// role is "" for an admin who is not a member.
	role        bastionv1.ProjectRole
	permissions int
	admin       bool
}

// can reports whether the user holds every bit of perm. Admins pass every
// check (docs/features.md §6).
func (a *projectAccess) can(perm int) bool {
	return a.admin || a.permissions&perm == perm
}

// namespace is where the project's resources live.
func (a *projectAccess) namespace() string { return bastionv1.ProjectNamespace(a.project.Name) }

type projectKey struct{}

func projectOf(r *http.Request) *projectAccess {
	a, _ := r.Context().Value(projectKey{}).(*projectAccess)
	return a
}

// loadProject resolves /project/{id}: the project must exist and the user
// must be a member or an admin. Anyone else gets 404, not 403, so that
// project ids cannot be probed.
func (s *Server) loadProject(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r, "id")
		if !ok {
			return
		}
		project, err := s.projectByID(r.Context(), id)
		if err != nil {
			failErr(w, r, err)
			return
		}
		access := accessTo(project, who(r))
		if access == nil {
			fail(w, http.StatusNotFound, "project not found")
			return
		}
		access.id = id
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), projectKey{}, access)))
	})
}

// accessTo is p's view of project, or nil if p may not see it.
func accessTo(project *bastionv1.Project, p *principal) *projectAccess {
	a := &projectAccess{project: project, admin: p.admin()}
	for _, m := range project.Spec.Members {
		if m.User == p.user.Name {
			a.role, a.permissions = m.Role, rolePermissions[m.Role]
		}
	}
	if a.role == "" && !a.admin {
		return nil
	}
	return a
}

// require answers 403 unless the user holds perm in the route's project.
func require(perm int) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !projectOf(r).can(perm) {
				fail(w, http.StatusForbidden, "you need the "+permissionNames[perm]+" permission in this project")
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// requireAdmin answers 403 to users who are not admins.
func requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !who(r).admin() {
			fail(w, http.StatusForbidden, "only an administrator may do this")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// projectByID finds a project by its id in the cache. A project being
// deleted is already gone as far as the API is concerned.
func (s *Server) projectByID(ctx context.Context, id int64) (*bastionv1.Project, error) {
	list := &bastionv1.ProjectList{}
	if err := s.opts.Client.List(ctx, list, ids.MatchingID(id)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp.IsZero() {
			return &list.Items[i], nil
		}
	}
	return nil, notFound("project")
}
