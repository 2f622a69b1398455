package apiserver

import (
	"net/http"
	"time"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

// eventLimit is how many events /events/last answers (api-contract.md).
const eventLimit = 200

// eventJSON is an event as /events/last shows it.
type eventJSON struct {
	UserID        *int64    `json:"user_id"`
	ProjectID     *int64    `json:"project_id"`
	IntegrationID *int64    `json:"integration_id"`
	ObjectID      *int64    `json:"object_id"`
	ObjectType    string    `json:"object_type"`
	ObjectName    string    `json:"object_name"`
	Description   string    `json:"description"`
	Created       time.Time `json:"created"`
	ProjectName   string    `json:"project_name"`
	Username      string    `json:"username"`
}

// nullable turns the store's 0 ("none") into JSON null, as Semaphore does.
func nullable(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

func toEventJSON(e store.Event) eventJSON {
	return eventJSON{
		UserID: nullable(e.UserID), ProjectID: nullable(e.ProjectID), IntegrationID: nullable(e.IntegrationID),
		ObjectID: nullable(e.ObjectID), ObjectType: e.ObjectType, ObjectName: e.ObjectName,
		Description: e.Description, Created: e.Created, ProjectName: e.ProjectName, Username: e.Username,
	}
}

// event records what the request did. The request context carries the
// user and, on project routes, the project. A failure to record is logged,
// not answered: the change itself has happened.
func (s *Server) event(r *http.Request, e store.Event) {
	if p := who(r); p != nil {
		e.UserID, e.Username = p.id, p.user.Spec.Username
	}
	if a := projectOf(r); a != nil && e.ProjectID == 0 {
		e.ProjectID, e.ProjectName = a.id, a.project.Spec.DisplayName
	}
	if _, err := s.opts.Store.AddEvent(r.Context(), e); err != nil {
		logAPI().Error(err, "recording an event", "type", e.ObjectType, "id", e.ObjectID)
	}
}

// allEvents serves GET /events/last: the events of every project the user
// can see (admins: all of them, and events outside projects).
func (s *Server) allEvents(w http.ResponseWriter, r *http.Request) {
	if who(r).admin() {
		s.respondEvents(w, r, nil)
		return
	}
	s.userEvents(w, r)
}

// userEvents serves GET /events: the events of the projects the user is a
// member of, never another project's. An admin gets theirs too, not every
// project's, as Semaphore answers it (its GetUserEvents). Semaphore answers
// every such event; Bastion the newest eventLimit, so that one request stays
// bounded.
func (s *Server) userEvents(w http.ResponseWriter, r *http.Request) {
	projectIDs, err := s.memberProjectIDs(r)
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.respondEvents(w, r, projectIDs)
}

// memberProjectIDs are the ids of the projects the user is a member of
// (projects an admin sees without being a member are left out).
func (s *Server) memberProjectIDs(r *http.Request) ([]int64, error) {
	projects, err := s.visibleProjects(r)
	if err != nil {
		return nil, err
	}
	out := make([]int64, 0, len(projects))
	for i := range projects {
		if accessTo(&projects[i], who(r)).role == "" {
			continue
		}
		if id, ok := ids.FromLabels(&projects[i]); ok {
			out = append(out, id)
		}
	}
	return out, nil
}

// projectEvents serves GET /project/{id}/events/last.
func (s *Server) projectEvents(w http.ResponseWriter, r *http.Request) {
	s.respondEvents(w, r, []int64{projectOf(r).id})
}

func (s *Server) respondEvents(w http.ResponseWriter, r *http.Request, projectIDs []int64) {
	events, err := s.opts.Store.Events(r.Context(), projectIDs, eventLimit)
	if err != nil {
		failErr(w, r, err)
		return
	}
	out := make([]eventJSON, 0, len(events))
	for _, e := range events {
		out = append(out, toEventJSON(e))
	}
	respond(w, http.StatusOK, out)
}

// visibleProjects lists the projects the user may see: all for an admin,
// else those they are a member of.
func (s *Server) visibleProjects(r *http.Request) ([]bastionv1.Project, error) {
	list := &bastionv1.ProjectList{}
	if err := s.opts.Client.List(r.Context(), list); err != nil {
		return nil, err
	}
	p := who(r)
	out := make([]bastionv1.Project, 0, len(list.Items))
	for i := range list.Items {
		project := &list.Items[i]
		if !project.DeletionTimestamp.IsZero() {
			continue
		}
		if _, ok := ids.FromLabels(project); !ok {
			continue // not yet numbered: the API cannot address it
		}
		if accessTo(project, p) != nil {
			out = append(out, *project)
		}
	}
	return out, nil
}
