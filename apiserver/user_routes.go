package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"k8s.io/client-go/util/retry"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/users"
)

// userJSON is a user as /user and /users show it (api-contract.md).
type userJSON struct {
	ID               int64     `json:"id"`
	Created          time.Time `json:"created"`
	Username         string    `json:"username"`
	Name             string    `json:"name"`
	Email            string    `json:"email"`
	Admin            bool      `json:"admin"`
	External         bool      `json:"external"`
	Alert            bool      `json:"alert"`
	CanCreateProject bool      `json:"can_create_project"`
	managedJSON
}

// userBrief is all a non-admin sees of other users.
type userBrief struct {
	ID       int64  `json:"id"`
	Username string `json:"username"`
	Name     string `json:"name"`
}

func (s *Server) toUserJSON(u *bastionv1.User) userJSON {
	out := userJSON{
		ID: userID(u), Created: u.CreationTimestamp.UTC(), Username: u.Spec.Username, Name: u.Spec.Name,
		Email: u.Spec.Email, Admin: u.Spec.Admin, External: u.Spec.External, Alert: u.Spec.Alert,
		CanCreateProject: u.Spec.CanCreateProject,
	}
	s.markManaged(&out, u)
	return out
}

// userRequest is the body of POST /users and PUT /users/{id}.
type userRequest struct {
	userJSON
	Password string `json:"password"`
}

func (req userRequest) spec() bastionv1.UserSpec {
	return bastionv1.UserSpec{
		Username: req.Username, Name: req.Name, Email: req.Email, Admin: req.Admin,
		Alert: req.Alert, External: req.External, CanCreateProject: req.CanCreateProject,
	}
}

// userRoutes serves /users: admins manage everyone; a user reads and edits
// their own row and password.
func (s *Server) userRoutes() chi.Router {
	r := chi.NewRouter()
	r.Get("/", s.listUsers)
	r.With(requireAdmin).Post("/", s.createUser)
	r.Route("/{user_id}", func(r chi.Router) {
		r.Use(s.loadUser)
		r.Get("/", s.getUser)
		r.Put("/", s.updateUser)
		r.With(requireAdmin).Delete("/", s.deleteUser)
		r.Post("/password", s.changePassword)
	})
	return r
}

// currentUser serves GET /user: the signed-in user. can_create_project
// says what the user may do (admins may always), as Semaphore answers it,
// because clients show New Project by it; /users keeps the stored setting.
func (s *Server) currentUser(w http.ResponseWriter, r *http.Request) {
	p := who(r)
	me := s.toUserJSON(p.user)
	me.CanCreateProject = mayCreateProjects(p)
	respond(w, http.StatusOK, me)
}

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) {
	all, err := s.opts.Users.List(r.Context())
	if err != nil {
		failErr(w, r, err)
		return
	}
	if !who(r).admin() {
		out := make([]userBrief, 0, len(all))
		for i := range all {
			out = append(out, userBrief{ID: userID(&all[i]), Username: all[i].Spec.Username, Name: all[i].Spec.Name})
		}
		respond(w, http.StatusOK, out)
		return
	}
	out := make([]userJSON, 0, len(all))
	for i := range all {
		out = append(out, s.toUserJSON(&all[i]))
	}
	respond(w, http.StatusOK, out)
}

func (s *Server) createUser(w http.ResponseWriter, r *http.Request) {
	var req userRequest
	if !decode(w, r, &req) {
		return
	}
	spec := req.spec()
	// An external user signs in through a provider, which creates them;
	// one made here would have no way in.
	spec.External = false
	user, err := s.opts.Users.Create(r.Context(), spec, req.Password)
	if err != nil {
		failErr(w, r, err)
		return
	}
	if err := s.waitCached(r.Context(), user); err != nil {
		failErr(w, r, err)
		return
	}
	s.event(r, store.Event{ObjectType: "user", ObjectID: userID(user), ObjectName: user.Spec.Username,
		Description: fmt.Sprintf("User %s created", user.Spec.Username)})
	respond(w, http.StatusCreated, s.toUserJSON(user))
}

type userKey struct{}

func userOf(r *http.Request) *bastionv1.User {
	u, _ := r.Context().Value(userKey{}).(*bastionv1.User)
	return u
}

// loadUser resolves /users/{user_id}. A non-admin may reach only their own
// row; another user's answers 403.
func (s *Server) loadUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r, "user_id")
		if !ok {
			return
		}
		p := who(r)
		if !p.admin() && id != p.id {
			fail(w, http.StatusForbidden, "only an administrator may read or change other users")
			return
		}
		user, err := s.opts.Users.FindByID(r.Context(), id)
		if err != nil {
			failErr(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
	})
}

func (s *Server) getUser(w http.ResponseWriter, r *http.Request) {
	respond(w, http.StatusOK, s.toUserJSON(userOf(r)))
}

func (s *Server) updateUser(w http.ResponseWriter, r *http.Request) {
	var req userRequest
	if !decode(w, r, &req) {
		return
	}
	user := userOf(r)
	// A user declared in Git is its Git's (its password, a Secret of
	// Bastion's, is not: POST …/password stays open).
	if err := s.refuseManaged("user", user); err != nil {
		failErr(w, r, err)
		return
	}
	if req.ID != 0 && req.ID != userID(user) {
		fail(w, http.StatusBadRequest, fmt.Sprintf("the body's id %d is not the URL's id %d", req.ID, userID(user)))
		return
	}
	next := req.spec()
	next.External = user.Spec.External
	if err := s.checkUserChange(who(r), user, next); err != nil {
		failErr(w, r, err)
		return
	}
	if err := users.ValidateSpec(next); err != nil {
		failErr(w, r, err)
		return
	}
	if err := s.opts.Users.CheckUnique(r.Context(), next, user.Name); err != nil {
		failErr(w, r, err)
		return
	}
	updated, err := s.updateUserSpec(r.Context(), user, func(spec *bastionv1.UserSpec) { *spec = next })
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.event(r, store.Event{ObjectType: "user", ObjectID: userID(updated), ObjectName: updated.Spec.Username,
		Description: fmt.Sprintf("User %s updated", updated.Spec.Username)})
	w.WriteHeader(http.StatusNoContent)
}

// checkUserChange enforces who may change what: only admins grant admin or
// project creation, and an external user's identity belongs to their
// provider, so its fields stay as the provider set them.
func (s *Server) checkUserChange(p *principal, user *bastionv1.User, next bastionv1.UserSpec) error {
	if !p.admin() && (next.Admin != user.Spec.Admin || next.CanCreateProject != user.Spec.CanCreateProject) {
		return forbidden("only an administrator may change admin or can_create_project")
	}
	if user.Spec.External && (next.Username != user.Spec.Username || next.Name != user.Spec.Name || next.Email != user.Spec.Email) {
		return badRequest("the name, username and email of an external user come from their sign-in provider and cannot be changed")
	}
	if p.id == userID(user) && user.Spec.Admin && !next.Admin {
		return badRequest("you cannot remove your own admin rights; ask another administrator")
	}
	return nil
}

// updateUserSpec applies change to the latest version of user, retrying
// when someone else wrote in between, and waits until the cache has it.
func (s *Server) updateUserSpec(ctx context.Context, user *bastionv1.User, change func(*bastionv1.UserSpec)) (*bastionv1.User, error) {
	latest := user.DeepCopy()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := s.opts.Reader.Get(ctx, clientKey(user), latest); err != nil {
			return err
		}
		change(&latest.Spec)
		return s.opts.Client.Update(ctx, latest)
	})
	if err != nil {
		return nil, err
	}
	return latest, s.waitCached(ctx, latest)
}

func (s *Server) deleteUser(w http.ResponseWriter, r *http.Request) {
	user, p := userOf(r), who(r)
	if userID(user) == p.id {
		fail(w, http.StatusForbidden, "you cannot delete your own user")
		return
	}
	if err := s.refuseManaged("user", user); err != nil {
		failErr(w, r, err)
		return
	}
	// Its reconciler takes the user out of every team and ends its
	// sessions and tokens (controllers/user_cascade.go).
	if err := s.deleteObject(r.Context(), user); err != nil {
		failErr(w, r, err)
		return
	}
	s.creds.forget()
	s.event(r, store.Event{ObjectType: "user", ObjectID: userID(user), ObjectName: user.Spec.Username,
		Description: fmt.Sprintf("User %s deleted", user.Spec.Username)})
	w.WriteHeader(http.StatusNoContent)
}

type passwordRequest struct {
	Password string `json:"password"`
}

// changePassword sets a new password and ends the user's other sessions
// and all their API tokens: whoever else was signed in with the old
// password is signed out, and a token made with it (perhaps stolen with
// it) stops working, even the one this request came with. Only the
// browser session that made the change stays signed in, on a new session.
func (s *Server) changePassword(w http.ResponseWriter, r *http.Request) {
	var req passwordRequest
	if !decode(w, r, &req) {
		return
	}
	user, p := userOf(r), who(r)
	if user.Spec.External {
		fail(w, http.StatusBadRequest, "an external user signs in through their provider and has no password here")
		return
	}
	if req.Password == "" {
		fail(w, http.StatusBadRequest, "Password is required")
		return
	}
	if err := s.opts.Users.SetPassword(r.Context(), user, req.Password); err != nil {
		failErr(w, r, err)
		return
	}
	// The change ends every older session; the one that made it gets a new
	// session instead, so the user stays signed in here.
	keep := ""
	if p.id == userID(user) && p.kind == store.CredentialSession {
		fresh, err := s.startSession(w, r, user)
		if err != nil {
			failErr(w, r, err)
			return
		}
		keep = fresh
	}
	if err := s.endCredentials(r.Context(), userID(user), keep); err != nil {
		failErr(w, r, err)
		return
	}
	s.event(r, store.Event{ObjectType: "user", ObjectID: userID(user), ObjectName: user.Spec.Username,
		Description: fmt.Sprintf("Password of user %s changed", user.Spec.Username)})
	w.WriteHeader(http.StatusNoContent)
}

// endCredentials deletes every session and API token of a user but the
// session keep ("" for none), and forgets the cached ones at once.
func (s *Server) endCredentials(ctx context.Context, id int64, keep string) error {
	for _, kind := range []store.CredentialKind{store.CredentialSession, store.CredentialToken} {
		_, err := s.opts.Store.DeleteUserCredentials(ctx, id, kind, keep)
		s.creds.forget()
		if err != nil {
			return err
		}
	}
	return nil
}
