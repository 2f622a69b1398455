package apiserver

import (
	"fmt"
	"net/http"
	"slices"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// taskListLimit is the most tasks a list answers, and its default
// (api-contract.md: tasks/last?limit= 1–200, default 200).
const taskListLimit = 200

var taskStatuses = []bastionv1.TaskStatusValue{
	bastionv1.TaskWaiting, bastionv1.TaskStarting, bastionv1.TaskWaitingConfirmation, bastionv1.TaskConfirmed,
	bastionv1.TaskRunning, bastionv1.TaskSuccess, bastionv1.TaskError, bastionv1.TaskStopping, bastionv1.TaskStopped,
}

// listQuery reads ?limit= and ?status= of a task list.
func listQuery(r *http.Request) (limit int, keep func(*taskEntry) bool, err error) {
	if limit, err = queryInt(r, "limit", 1, taskListLimit, taskListLimit); err != nil {
		return 0, nil, err
	}
	if raw := r.URL.Query().Get("status"); raw != "" {
		status := bastionv1.TaskStatusValue(raw)
		if !slices.Contains(taskStatuses, status) {
			return 0, nil, invalidf("status %q is not a task status", raw)
		}
		keep = func(e *taskEntry) bool { return e.status() == status }
	}
	return limit, keep, nil
}

// status is the entry's task status as clients see it.
func (e *taskEntry) status() bastionv1.TaskStatusValue {
	if e.task != nil {
		return bastionv1.TaskStatusValue(statusOf(e.task.Status.Status))
	}
	return bastionv1.TaskStatusValue(e.summary.Status)
}

// listTasks serves GET /tasks and /tasks/last: the project's newest tasks,
// live and pruned, newest first.
func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) {
	s.respondTasks(w, r, "", true)
}

// templateTasks serves GET templates/{id}/tasks; ?status=success lists the
// builds a deploy can deploy.
func (s *Server) templateTasks(w http.ResponseWriter, r *http.Request) {
	s.respondTasks(w, r, templateOf(r).Name, false)
}

// templateLastTasks serves GET templates/{id}/tasks/last.
func (s *Server) templateLastTasks(w http.ResponseWriter, r *http.Request) {
	s.respondTasks(w, r, templateOf(r).Name, false)
}

func (s *Server) respondTasks(w http.ResponseWriter, r *http.Request, template string, all bool) {
	limit, keep, err := listQuery(r)
	if err != nil {
		failErr(w, r, err)
		return
	}
	key := fmt.Sprintf("tasks|%t|%s|%d|%s", all, template, limit, r.URL.Query().Get("status"))
	s.respondList(w, r, key, func() (any, error) {
		v, err := s.newTaskView(r.Context(), projectOf(r))
		if err != nil {
			return nil, err
		}
		return v.items(s.tasks.newest(v.tasks, template, all, limit, keep)), nil
	})
}
