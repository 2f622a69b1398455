package apiserver

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/bastion-dev/bastion/internal/hub"
)

// apiRoutes is the /api route tree. It reads like docs/features.md §7: one Routes() per
// resource, mounted here, with who may call it beside each group.
func (s *Server) apiRoutes() chi.Router {
	r := chi.NewRouter()

	// Anyone.
	r.Get("/ping", s.ping)
	r.Get("/info", s.info)
	// The OpenAPI document of this tree (openapi.go), walked at first call.
	r.Method(http.MethodGet, "/openapi.json", &openAPIHandler{routes: r, version: s.opts.Version})

	if s.opts.Client != nil && s.opts.Reader != nil && s.opts.Store != nil {
		// Runners authenticate with their task's token, not a session:
		// this route stays outside sign-in. It sends no Origin, so the
		// cross-origin check lets it through as any script.
		r.Mount("/runner", newRunnerEvents(s.opts).routes())
	}

	if s.signInEnabled() {
		// Session (anyone may try).
		r.Get("/auth/login", s.loginOptions)
		r.Post("/auth/login", s.login)
		r.Post("/auth/logout", s.logout)
		r.Get("/auth/oidc/{provider}/login", s.oidcLogin)
		r.Get("/auth/oidc/{provider}/redirect", s.oidcCallback)

		// Incoming webhooks authenticate with the integration's own secret,
		// not a session.
		r.Mount("/integrations", s.webhookRoutes())

		// Signed in.
		r.Group(func(r chi.Router) {
			r.Use(s.authenticate)
			// Semaphore's API document names /user/ too; both answer.
			r.Get("/user", s.currentUser)
			r.Get("/user/", s.currentUser)
			r.Get("/auth/oidc/{provider}/link", s.oidcLink)
			r.Mount("/user/tokens", s.tokenRoutes())
			r.Mount("/users", s.userRoutes())
			r.Mount("/projects", s.projectListRoutes())
			r.Get("/events", s.userEvents)
			r.Get("/events/last", s.allEvents)
			r.Get("/apps", s.apps)
			r.Get("/task_pods/options", s.taskPodOptions)
			if s.opts.Hub != nil {
				r.Method(http.MethodGet, "/ws", newWSHandler(s.opts.Hub, s.wsFilter, s.wsRecheck, s.origins, s.opts.WS))
			}

			// Members of the project (admins pass every check).
			r.Route("/project/{id}", func(r chi.Router) {
				r.Use(s.loadProject)
				r.Get("/", s.getProject)
				r.Get("/role", s.projectRole)
				r.Get("/backup", s.backupProject)
				r.Get("/events/last", s.projectEvents)
				r.Delete("/me", s.leaveProject)
				r.Mount("/users", s.teamRoutes())

				// Project resources (issue #6): members read; writes need
				// manageProjectResources, tasks runProjectTasks and
				// integrations updateProject, checked in each Routes().
				for _, res := range projectResources() {
					r.Mount(res.mountPath(), res.routes(s))
				}
				r.Mount("/tasks", s.taskRoutes())
				r.Get("/stats/tasks", s.taskStats)

				// updateProject.
				r.With(require(permUpdateProject)).Put("/", s.updateProject)
				r.With(require(permUpdateProject)).Delete("/", s.deleteProject)
			})
		})
	} else if s.opts.Hub != nil && s.opts.WSAuth != nil {
		r.Method(http.MethodGet, "/ws", newWSHandler(s.opts.Hub, s.opts.WSAuth, nil, s.origins, s.opts.WS))
	}

	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, "not found: "+r.Method+" "+r.URL.Path)
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path)
	})
	return r
}

// signInEnabled: the signed-in API needs users, the cluster, the store and
// an id allocator.
func (s *Server) signInEnabled() bool {
	return s.opts.Users != nil && s.opts.Client != nil && s.opts.Reader != nil && s.opts.Store != nil && s.opts.IDs != nil
}

// wsFilter lets /api/ws through for a signed-in user (authenticate already
// ran) and sends them the events of the projects they may see.
func (s *Server) wsFilter(r *http.Request) (func(projectID int64) bool, bool) {
	p := who(r)
	if p == nil {
		return nil, false
	}
	if p.admin() {
		return hub.All, true
	}
	return s.membershipFilter(r.Context(), p), true
}

// wsRecheck keeps a socket only while the credential that opened it still
// signs in the same user, with admin rights if it had them (an admin's
// socket sees every project). The check reads the credential afresh, so
// signing out, a password change and deleting the user all end it; it
// runs on its own context, since the handshake's ends with the socket.
func (s *Server) wsRecheck(r *http.Request) func() string {
	first := who(r)
	return func() string {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ctx = context.WithValue(ctx, uncachedCredential{}, true) // revoked elsewhere: ≤ 2 s
		p, msg := s.principalOf(r.WithContext(ctx))
		switch {
		case p == nil:
			return msg
		case p.id != first.id:
			return "signed in as someone else"
		case first.admin() && !p.admin():
			return "administrator rights were removed; reconnect"
		}
		return ""
	}
}

// membershipRecheck is how long a membership answer is reused. The filter
// runs for every message (hundreds of thousands of lines a second), so it
// cannot read the cache each time; a user removed from a project stops
// receiving its output within this delay.
const membershipRecheck = 2 * time.Second

func (s *Server) membershipFilter(ctx context.Context, p *principal) func(int64) bool {
	type answer struct {
		ok bool
		at time.Time
	}
	var mu sync.Mutex
	known := map[int64]answer{}
	return func(projectID int64) bool {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if a, ok := known[projectID]; ok && now.Sub(a.at) < membershipRecheck {
			return a.ok
		}
		project, err := s.projectByID(ctx, projectID)
		ok := err == nil && accessTo(project, p) != nil
		known[projectID] = answer{ok, now}
		return ok
	}
}
