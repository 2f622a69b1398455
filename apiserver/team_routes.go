package apiserver

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/go-chi/chi/v5"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/store"
)

// memberJSON is a team member (api-contract.md, "team").
type memberJSON struct {
	ID       int64                 `json:"id"`
	Username string                `json:"username"`
	Name     string                `json:"name"`
	Email    string                `json:"email"`
	Role     bastionv1.ProjectRole `json:"role"`
}

// teamRoutes serves /project/{id}/users. Members read; managing the team
// needs manageProjectUsers.
func (s *Server) teamRoutes() chi.Router {
	r := chi.NewRouter()
	r.Get("/", s.listTeam)
	r.With(require(permManageProjectUsers)).Post("/", s.addMember)
	r.With(require(permManageProjectUsers)).Put("/{user_id}", s.changeRole)
	r.With(require(permManageProjectUsers)).Delete("/{user_id}", s.removeMember)
	return r
}

var teamSorts = map[string]func(a, b memberJSON) bool{
	"name":     func(a, b memberJSON) bool { return strings.ToLower(a.Name) < strings.ToLower(b.Name) },
	"username": func(a, b memberJSON) bool { return a.Username < b.Username },
	"email":    func(a, b memberJSON) bool { return strings.ToLower(a.Email) < strings.ToLower(b.Email) },
	"role":     func(a, b memberJSON) bool { return a.Role < b.Role },
}

func (s *Server) listTeam(w http.ResponseWriter, r *http.Request) {
	sortBy, order := r.URL.Query().Get("sort"), r.URL.Query().Get("order")
	if sortBy == "" {
		sortBy = "name"
	}
	less, ok := teamSorts[sortBy]
	if !ok {
		fail(w, http.StatusBadRequest, fmt.Sprintf("sort must be name, username, email or role, not %q", sortBy))
		return
	}
	if order != "" && order != "asc" && order != "desc" {
		fail(w, http.StatusBadRequest, fmt.Sprintf("order must be asc or desc, not %q", order))
		return
	}
	all, err := s.opts.Users.List(r.Context())
	if err != nil {
		failErr(w, r, err)
		return
	}
	byName := map[string]*bastionv1.User{}
	for i := range all {
		byName[all[i].Name] = &all[i]
	}
	out := []memberJSON{}
	for _, m := range projectOf(r).project.Spec.Members {
		if u := byName[m.User]; u != nil {
			out = append(out, memberJSON{ID: userID(u), Username: u.Spec.Username, Name: u.Spec.Name, Email: u.Spec.Email, Role: m.Role})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if order == "desc" {
			return less(out[j], out[i])
		}
		return less(out[i], out[j])
	})
	respond(w, http.StatusOK, out)
}

type memberRequest struct {
	UserID int64                 `json:"user_id"`
	Role   bastionv1.ProjectRole `json:"role"`
}

// checkRole refuses an empty or unknown role. An empty one answers the
// user-required message, as the team form does (docs/features.md §5).
func checkRole(role bastionv1.ProjectRole) error {
	if role == "" {
		return badRequest("User is required")
	}
	if _, ok := rolePermissions[role]; !ok {
		return invalidf("role must be owner, manager, task_runner or guest, not %q", role)
	}
	return nil
}

func (s *Server) addMember(w http.ResponseWriter, r *http.Request) {
	var req memberRequest
	if !decode(w, r, &req) {
		return
	}
	if req.UserID == 0 {
		fail(w, http.StatusBadRequest, "User is required")
		return
	}
	if err := checkRole(req.Role); err != nil {
		failErr(w, r, err)
		return
	}
	user, err := s.opts.Users.FindByID(r.Context(), req.UserID)
	if err != nil {
		fail(w, http.StatusBadRequest, fmt.Sprintf("user %d does not exist", req.UserID))
		return
	}
	a := projectOf(r)
	_, err = s.updateProjectSpec(r.Context(), a.project, func(p *bastionv1.ProjectSpec) error {
		if memberIndex(p.Members, user.Name) >= 0 {
			return conflict(fmt.Sprintf("%s is already a member of this project", user.Spec.Username))
		}
		p.Members = append(p.Members, bastionv1.ProjectMember{User: user.Name, Role: req.Role})
		return nil
	})
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.memberEvent(r, user, fmt.Sprintf("User %s joined the project as %s", user.Spec.Username, req.Role))
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) memberEvent(r *http.Request, user *bastionv1.User, description string) {
	s.event(r, store.Event{ObjectType: "user", ObjectID: userID(user), ObjectName: user.Spec.Username, Description: description})
}

// memberOf resolves /users/{user_id} of the team; 404 if not a member.
func (s *Server) memberOf(w http.ResponseWriter, r *http.Request) (*bastionv1.User, bool) {
	id, ok := pathID(w, r, "user_id")
	if !ok {
		return nil, false
	}
	user, err := s.opts.Users.FindByID(r.Context(), id)
	if err != nil || memberIndex(projectOf(r).project.Spec.Members, user.Name) < 0 {
		fail(w, http.StatusNotFound, "not a member of this project")
		return nil, false
	}
	return user, true
}

// lastOwner refuses a change that leaves the project without an owner.
func lastOwner(members []bastionv1.ProjectMember, userName string, newRole bastionv1.ProjectRole) error {
	if newRole == bastionv1.RoleOwner {
		return nil
	}
	owners := 0
	for _, m := range members {
		if m.Role == bastionv1.RoleOwner && m.User != userName {
			owners++
		}
	}
	i := memberIndex(members, userName)
	if i >= 0 && members[i].Role == bastionv1.RoleOwner && owners == 0 {
		return badRequest("the last owner of a project cannot be removed or demoted; make another member owner first")
	}
	return nil
}

func (s *Server) changeRole(w http.ResponseWriter, r *http.Request) {
	user, ok := s.memberOf(w, r)
	if !ok {
		return
	}
	var req memberRequest
	if !decode(w, r, &req) {
		return
	}
	if err := checkRole(req.Role); err != nil {
		failErr(w, r, err)
		return
	}
	_, err := s.updateProjectSpec(r.Context(), projectOf(r).project, func(p *bastionv1.ProjectSpec) error {
		i := memberIndex(p.Members, user.Name)
		if i < 0 {
			return notFound("member")
		}
		if err := lastOwner(p.Members, user.Name, req.Role); err != nil {
			return err
		}
		p.Members[i].Role = req.Role
		return nil
	})
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.memberEvent(r, user, fmt.Sprintf("Role of user %s changed to %s", user.Spec.Username, req.Role))
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) removeMember(w http.ResponseWriter, r *http.Request) {
	user, ok := s.memberOf(w, r)
	if !ok {
		return
	}
	if err := s.dropMember(r, user); err != nil {
		failErr(w, r, err)
		return
	}
	s.memberEvent(r, user, fmt.Sprintf("User %s was removed from the project", user.Spec.Username))
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) dropMember(r *http.Request, user *bastionv1.User) error {
	_, err := s.updateProjectSpec(r.Context(), projectOf(r).project, func(p *bastionv1.ProjectSpec) error {
		i := memberIndex(p.Members, user.Name)
		if i < 0 {
			return notFound("member")
		}
		if err := lastOwner(p.Members, user.Name, ""); err != nil {
			return err
		}
		p.Members = append(p.Members[:i], p.Members[i+1:]...)
		return nil
	})
	return err
}

// leaveProject serves DELETE /project/{id}/me. An owner cannot leave
// (docs/features.md §6): they hand the project over first.
func (s *Server) leaveProject(w http.ResponseWriter, r *http.Request) {
	a, p := projectOf(r), who(r)
	if a.role == "" {
		fail(w, http.StatusBadRequest, "you are not a member of this project")
		return
	}
	if a.role == bastionv1.RoleOwner {
		fail(w, http.StatusForbidden, "the owner cannot leave the project")
		return
	}
	if err := s.dropMember(r, p.user); err != nil {
		failErr(w, r, err)
		return
	}
	s.memberEvent(r, p.user, fmt.Sprintf("User %s left the project", p.user.Spec.Username))
	w.WriteHeader(http.StatusNoContent)
}
