package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/store"
)

// taskRoutes serves /project/{id}/tasks. Members read; starting, stopping
// and confirming need runProjectTasks, deleting manageProjectResources.
// Approving (confirm of a task waiting for approval) and rejecting need
// updateProject, from someone other than the task's starter.
func (s *Server) taskRoutes() chi.Router {
	r := chi.NewRouter()
	r.Get("/", s.listTasks)
	r.Get("/last", s.listTasks)
	r.With(require(permRunProjectTasks)).Post("/", s.startTask)
	r.Route("/{task_id}", func(r chi.Router) {
		r.Use(s.loadTask)
		r.Get("/", s.getTask)
		r.Get("/output", s.taskOutput)
		r.Get("/raw", s.taskRaw)
		r.Get("/stderr", s.taskStderr)
		r.With(require(permRunProjectTasks)).Post("/confirm", s.confirmTask)
		r.With(require(permRunProjectTasks)).Post("/stop", s.stopTask)
		r.With(require(permUpdateProject)).Post("/reject", s.rejectTask)
		r.With(require(permManageProjectResources)).Delete("/", s.deleteTask)
	})
	return r
}

// pathTask is the task of a /tasks/{task_id} route: its Task object while
// etcd keeps it, else the summary the store kept when retention pruned it.
type pathTask struct {
	id      int64
	object  *bastionv1.Task
	summary *store.TaskSummary
}

type pathTaskKey struct{}

func taskOf(r *http.Request) *pathTask {
	t, _ := r.Context().Value(pathTaskKey{}).(*pathTask)
	return t
}

// loadTask resolves {task_id} in the route's project; 404 if the project
// has no such task, live or pruned.
func (s *Server) loadTask(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r, "task_id")
		if !ok {
			return
		}
		t, err := s.findTask(r.Context(), projectOf(r), id)
		if err != nil {
			failErr(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), pathTaskKey{}, t)))
	})
}

func (s *Server) findTask(ctx context.Context, a *projectAccess, id int64) (*pathTask, error) {
	obj, err := s.objectByID(ctx, a.namespace(), id, &bastionv1.TaskList{}, "task")
	if err == nil {
		return &pathTask{id: id, object: obj.(*bastionv1.Task)}, nil
	}
	if _, missing := err.(*statusError); !missing {
		return nil, err
	}
	summary, err := s.opts.Store.TaskSummary(ctx, store.TaskKey{ProjectID: a.id, TaskID: id})
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("task")
	}
	if err != nil {
		return nil, err
	}
	return &pathTask{id: id, summary: &summary}, nil
}

// entry is the path's task as the renderer takes it.
func (t *pathTask) entry() *taskEntry {
	e := &taskEntry{id: t.id, task: t.object, summary: t.summary, live: t.object != nil}
	if t.object != nil {
		e.template = t.object.Spec.TemplateRef.Name
	}
	return e
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) {
	v, err := s.newTaskView(r.Context(), projectOf(r))
	if err != nil {
		failErr(w, r, err)
		return
	}
	// The list shape (api-contract.md), a superset of the task's: the log
	// shows the author's name and the template's, which the task alone
	// names only by id.
	respond(w, http.StatusOK, v.item(taskOf(r).entry()))
}

// liveTask is the path's Task object, or a conflict naming the status of
// a task that only lives on as a summary (it finished long ago).
func liveTask(t *pathTask) (*bastionv1.Task, error) {
	if t.object == nil {
		return nil, conflict(fmt.Sprintf("task %d has already finished (%s)", t.id, t.summary.Status))
	}
	return t.object, nil
}

type stopRequest struct {
	Force bool `json:"force"`
}

// stopTask asks the task's reconciler to stop it (spec.stop): graceful
// goes through stopping, force is stopped at once. A force stop is never
// turned back into a graceful one.
func (s *Server) stopTask(w http.ResponseWriter, r *http.Request) {
	var req stopRequest
	if !decodeOptional(w, r, &req) {
		return
	}
	s.changeTask(w, r, func(task *bastionv1.Task) (string, error) {
		if task.Status.Status.Finished() {
			return "", conflict(fmt.Sprintf("task %d has already finished (%s)", taskOf(r).id, task.Status.Status))
		}
		if req.Force {
			task.Spec.Stop = bastionv1.StopForce
			return "force stop requested", nil
		}
		if task.Spec.Stop == "" {
			task.Spec.Stop = bastionv1.StopGraceful
		}
		return "stop requested", nil
	})
}

// confirmTask lets a task waiting for confirmation (a Terraform plan)
// go on (spec.confirmed), or approves a task waiting for approval
// (spec.approval), so that existing clients' Confirm button approves.
func (s *Server) confirmTask(w http.ResponseWriter, r *http.Request) {
	s.changeTask(w, r, func(task *bastionv1.Task) (string, error) {
		if task.AwaitingApproval() {
			// The reconciler records the approval in the event list.
			return "", s.decide(r, task, &bastionv1.TaskApproval{ApprovedBy: who(r).user.Name})
		}
		if task.Status.Status != bastionv1.TaskWaitingConfirmation {
			return "", conflict(fmt.Sprintf("task %d is not waiting for confirmation (it is %s)", taskOf(r).id, statusOf(task.Status.Status)))
		}
		task.Spec.Confirmed = true
		return "confirmed", nil
	})
}

// changeTask applies change to the latest Task, records the event it
// names (none for "": the reconciler records its own) and answers 204 once the lists show the change.
func (s *Server) changeTask(w http.ResponseWriter, r *http.Request, change func(*bastionv1.Task) (string, error)) {
	task, err := liveTask(taskOf(r))
	if err != nil {
		failErr(w, r, err)
		return
	}
	var verb string
	err = s.updateObject(r.Context(), task, func() (err error) {
		verb, err = change(task)
		return err
	})
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.waitTaskIndexed(r.Context(), task)
	if verb != "" {
		s.taskEvent(r, taskOf(r).id, task.Spec.TemplateRef.Name, verb)
	}
	w.WriteHeader(http.StatusNoContent)
}

// deleteTask deletes the Task object and waits until it is gone: its
// reconciler deletes its stored output and summary first (as for a
// kubectl delete). A task that only the store has (retention pruned its
// object) has its rows deleted here: no object, no reconciler.
func (s *Server) deleteTask(w http.ResponseWriter, r *http.Request) {
	a, t := projectOf(r), taskOf(r)
	template := ""
	var err error
	if t.object != nil {
		template = t.object.Spec.TemplateRef.Name
		err = s.deleteTaskObject(r.Context(), t.object)
	} else {
		err = s.deletePrunedTask(r.Context(), store.TaskKey{ProjectID: a.id, TaskID: t.id})
	}
	if err != nil {
		failErr(w, r, err)
		return
	}
	if s.tasks != nil {
		s.tasks.forget(a.namespace(), t.id)
	}
	s.taskEvent(r, t.id, template, "deleted")
	w.WriteHeader(http.StatusNoContent)
}

// deletePrunedTask deletes a task that only the store has, then raises
// the project's history version: no Task object's deletion tells the other
// replicas, whose task indexes read the history again within historyCheck.
func (s *Server) deletePrunedTask(ctx context.Context, key store.TaskKey) error {
	if err := s.opts.Store.DeleteTask(ctx, key); err != nil {
		return err
	}
	return s.opts.Store.TouchTaskHistory(ctx, key.ProjectID)
}

// deleteTaskObject deletes a Task and waits until it is gone for good.
func (s *Server) deleteTaskObject(ctx context.Context, task *bastionv1.Task) error {
	if err := s.opts.Client.Delete(ctx, task); client.IgnoreNotFound(err) != nil {
		return err
	}
	return s.waitDeleted(ctx, task)
}

// waitDeleted returns once the cache no longer has obj at all. A Task
// keeps its finalizers until its reconciler has released the run and
// deleted its stored rows.
func (s *Server) waitDeleted(ctx context.Context, obj client.Object) error {
	probe := obj.DeepCopyObject().(client.Object)
	return s.poll(ctx, func(ctx context.Context) (bool, error) {
		err := s.opts.Client.Get(ctx, clientKey(obj), probe)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// taskEvent records a change to a task in the project's activity log,
// worded as the task reconciler words its own ("Task 7 of Deploy ...").
func (s *Server) taskEvent(r *http.Request, id int64, templateName, verb string) {
	name := templateName
	t := &bastionv1.Template{}
	if templateName != "" && s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: projectOf(r).namespace(), Name: templateName}, t) == nil {
		name = t.Spec.DisplayName
	}
	s.event(r, store.Event{ObjectType: "task", ObjectID: id, ObjectName: name,
		Description: fmt.Sprintf("Task %d of %s %s", id, name, verb)})
}

// waitTaskIndexed returns once the task lists show task at its written
// resourceVersion (or the wait gave up: the write stands).
func (s *Server) waitTaskIndexed(ctx context.Context, task *bastionv1.Task) {
	if s.tasks == nil {
		return
	}
	id, _ := ids.FromLabels(task)
	rv := task.ResourceVersion
	_ = s.poll(ctx, func(context.Context) (bool, error) {
		e := s.tasks.lookup(task.Namespace, id)
		return e != nil && e.task != nil && atLeast(e.task.ResourceVersion, rv), nil
	})
}

// atLeast compares resourceVersions as numbers, as waitCached does; one
// that is not a number counts as reached.
func atLeast(have, want string) bool {
	h, err1 := strconv.ParseUint(have, 10, 64)
	w, err2 := strconv.ParseUint(want, 10, 64)
	return err1 != nil || err2 != nil || h >= w
}

// decodeOptional is decode for a body that may be empty (stop's force).
func decodeOptional(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		fail(w, http.StatusBadRequest, describeJSONError(err))
		return false
	}
	if len(body) == 0 {
		return true
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return decode(w, r, v)
}
