package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/runproto"
	"github.com/bastion-dev/bastion/internal/runtoken"
	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/taskpods"
)

// TaskFinalizer keeps a Task until its run is released (a local process
// killed, its private files removed).
const TaskFinalizer = bastionv1.TaskRunFinalizer

// TaskHistoryFinalizer keeps a finished Task until its stored output and
// summary are deleted with it (unless retention pruned it: see
// bastionv1.AnnotationPruned). It takes TaskFinalizer's place at finish,
// so a user's delete takes a task's history along through either door.
// It needs the store only, never the namespace's RBAC: a project
// namespace being deleted may have lost the manager's RoleBinding.
const TaskHistoryFinalizer = "automation.bastion.dev/task-history"

// TaskReconciler moves Tasks through the states of docs/features.md §4 and runs them
// through a Launcher.
type TaskReconciler struct {
	client.Client
	// APIReader reads around the cache where a stale read would be wrong
	// (the version counter).
	APIReader client.Reader
	// Store keeps each finished task's summary (nil: none is kept).
	Store store.Store
	// IDs gives tasks created without one their /api id.
	IDs      *ids.Allocator
	Launcher launch.Launcher
	// KeepLast is the default number of finished tasks kept per template.
	KeepLast int
	// GlobalMaxParallel caps running tasks across all projects; 0 = none.
	GlobalMaxParallel int
	// ManagerURL is where runners stream their output.
	ManagerURL string
	// Now returns the current time (injectable for tests).
	Now func() time.Time
	// Alerts sends the alerts of finished tasks (nil: none are sent).
	Alerts Alerter
	// InputGrace is how long a new task waits for its template and inputs
	// before it fails (0 = DefaultInputGrace; see task_wait.go).
	InputGrace time.Duration
	// Secrets, when set, answers the checks of the keys and Secrets a task
	// refers to from the project namespaces' watches (nil: each is a read
	// of the apiserver; see getInput).
	Secrets *SecretWatches
	// Tokens, when set, hands each run's token to this process's runner
	// endpoint as the run starts (nil: the endpoint reads the input Secret).
	Tokens *runtoken.Book
	// TaskPods is what the cluster admin lets projects and templates
	// choose for their task pods (runner images, service accounts).
	TaskPods taskpods.Policy

	admission admission
	pruned    prunedSet // see task_retention.go
	// unreported holds when this process first saw a task's run ended
	// without its runner's report of the end (awaitReport).
	unreported sync.Map // types.UID -> time.Time
}

// +kubebuilder:rbac:groups=automation.bastion.dev,resources=tasks,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=tasks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=tasks/finalizers,verbs=update
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=templates;repositories;inventories;environments;projects,verbs=get;list;watch
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=templates/status,verbs=get;update;patch
// Cluster-wide only what the cache's watches need (a cluster-wide watch
// needs a cluster-wide list); creating and deleting Jobs and their pods
// is in the namespace role (internal/nsaccess), bound only where the
// manager runs tasks.
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

// Reconcile advances one Task by as many steps as it can take now.
func (r *TaskReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	task := &bastionv1.Task{}
	if err := r.Get(ctx, req.NamespacedName, task); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !task.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, task)
	}

	if !task.Status.Status.Finished() && !controllerutil.ContainsFinalizer(task, TaskFinalizer) {
		// Its own step, before anything else: a metadata write in the
		// middle of a reconcile would publish an object with half the
		// work done.
		if r.IDs != nil {
			if _, err := ids.Assign(ctx, r.Client, r.IDs, task, task.Namespace, ids.CounterTask); err != nil {
				return ctrl.Result{}, err
			}
		}
		if added, err := r.addRunFinalizer(ctx, task); !added || err != nil {
			return ctrl.Result{}, err
		}
	}
	if r.adoptsHistory(task) {
		// A task finished before the history finalizer existed: its own
		// step too.
		return ctrl.Result{}, r.patchFinalizers(ctx, task, TaskHistoryFinalizer)
	}

	before := task.DeepCopy()
	defer writeStatus(ctx, r.Client, before, task, &result, &err)
	// Runs first (deferred last): whatever this reconcile did, the status
	// it writes says what it was derived from.
	defer deriveReported(task, r.now(), &result, &err)

	if waiting, result, err := r.awaitInputs(ctx, task); waiting || err != nil {
		return result, err
	}
	switch task.Status.Status {
	case "":
		if err := r.initialize(ctx, task); err != nil {
			return ctrl.Result{}, err
		}
		if task.Status.Status != bastionv1.TaskWaiting {
			return ctrl.Result{}, nil
		}
		fallthrough
	case bastionv1.TaskWaiting:
		return r.reconcileWaiting(ctx, task)
	case bastionv1.TaskWaitingConfirmation:
		if task.AwaitingApproval() {
			return r.reconcileApproval(ctx, task)
		}
		return r.reconcileActive(ctx, task)
	case bastionv1.TaskStarting, bastionv1.TaskRunning, bastionv1.TaskConfirmed, bastionv1.TaskStopping:
		return r.reconcileActive(ctx, task)
	case bastionv1.TaskSuccess, bastionv1.TaskError, bastionv1.TaskStopped:
		return r.finish(ctx, task)
	default:
		// The schema forbids other values; one that slipped in (an older
		// schema, a bug) is an error, never a task left hanging.
		r.transition(task, bastionv1.TaskError, fmt.Sprintf("unknown task status %q", task.Status.Status))
		return ctrl.Result{}, nil
	}
}

// reconcileWaiting admits the task when its project (and the manager) has
// room, first in, first out.
func (r *TaskReconciler) reconcileWaiting(ctx context.Context, task *bastionv1.Task) (ctrl.Result, error) {
	if task.Spec.Stop != "" {
		// Nothing runs yet: stopping is immediate.
		r.transition(task, bastionv1.TaskStopped, "stopped before it started")
		return ctrl.Result{}, nil
	}
	decision, err := r.admit(ctx, task)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !decision.admitted {
		setTaskCondition(task, bastionv1.ConditionQueued, metav1.ConditionTrue, decision.reason, decision.message)
		return ctrl.Result{}, nil
	}
	meta.RemoveStatusCondition(&task.Status.Conditions, bastionv1.ConditionQueued)
	r.transition(task, bastionv1.TaskStarting, "")
	r.taskEvent(ctx, task, "started")
	return r.reconcileActive(ctx, task)
}

// reconcileActive starts the run if needed, applies stop and confirm, and
// maps the run's state onto the task.
func (r *TaskReconciler) reconcileActive(ctx context.Context, task *bastionv1.Task) (ctrl.Result, error) {
	run, err := r.runFor(ctx, task)
	if err != nil {
		return ctrl.Result{}, err
	}

	if reportedExit(task) != nil {
		// Over, by its runner's word, which came with its last line:
		// nothing to start, and no need to wait for the launcher's view.
		// It comes before a stop: a stop asked after the run ended does not
		// change how it ended.
		return r.applyRunState(ctx, task, launch.State{})
	}

	switch task.Spec.Stop {
	case bastionv1.StopForce:
		if err := r.Launcher.Stop(ctx, run, true); err != nil {
			return ctrl.Result{}, err
		}
		r.transition(task, bastionv1.TaskStopped, "force stopped")
		return ctrl.Result{}, nil
	case bastionv1.StopGraceful:
		if task.Status.Status != bastionv1.TaskStopping {
			if err := r.Launcher.Stop(ctx, run, false); err != nil {
				return ctrl.Result{}, err
			}
			r.transition(task, bastionv1.TaskStopping, "")
		}
	}

	if task.Status.Status == bastionv1.TaskStarting {
		run, err = r.prepareRun(ctx, task, run)
		if err != nil {
			r.transition(task, bastionv1.TaskError, err.Error())
			return ctrl.Result{}, nil
		}
		task.Status.RunName = run.Name
		if err := r.Launcher.Start(ctx, run); err != nil {
			return ctrl.Result{}, err
		}
		if task.Status.Run == nil {
			// The runner's report starts empty, in the write that records
			// the launch: the runner endpoint adds even the first facts to
			// it with a JSON patch that tests the task's uid, instead of
			// reading the Task first (apiserver/runner_events.go, record).
			task.Status.Run = &bastionv1.TaskRun{}
		}
	}
	state, err := r.Launcher.Observe(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.applyRunState(ctx, task, state)
}

// applyRunState derives the task's state from the runner's report
// (status.run) and what the launcher sees of the run. The runner's exit
// comes first: it is recorded with the run's last line, while the
// process or pod may take a while yet to end (finish waits for that).
func (r *TaskReconciler) applyRunState(ctx context.Context, task *bastionv1.Task, state launch.State) (ctrl.Result, error) {
	stopping := task.Status.Status == bastionv1.TaskStopping
	if exit := reportedExit(task); exit != nil {
		to, message := endOf(task, exit)
		r.transition(task, to, message)
		return ctrl.Result{}, nil
	}
	switch state.Phase {
	case launch.PhasePending, launch.PhaseRunning:
		// A runner that reported a phase runs, whatever the pod's status
		// (which may lag behind) says yet.
		running := state.Phase == launch.PhaseRunning || task.Status.Run != nil && task.Status.Run.Phase != ""
		if running && !stopping {
			if to := runningState(task); to != task.Status.Status {
				r.transition(task, to, "")
			}
		}
		return ctrl.Result{}, nil
	case launch.PhaseNotFound:
		switch {
		case stopping:
			r.transition(task, bastionv1.TaskStopped, "stopped")
		case task.Status.Status == bastionv1.TaskStarting:
			// Just created; the watch brings it back when the run shows.
			return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
		default:
			r.transition(task, bastionv1.TaskError, "the run disappeared (its Job or its local run directory was deleted)")
		}
	case launch.PhaseSucceeded, launch.PhaseFailed:
		if wait := r.awaitReport(task, stopping); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
		switch {
		case stopping:
			r.transition(task, bastionv1.TaskStopped, "stopped")
		case state.Phase == launch.PhaseSucceeded:
			// Ended without a report (a runner without a manager to
			// report to, or one that gave up reporting): the launcher's
			// word holds.
			r.transition(task, bastionv1.TaskSuccess, "")
		default:
			r.transition(task, bastionv1.TaskError, failureMessage(state))
		}
	}
	// The finished state is stored first; the update it causes brings the
	// task back for finish, so nothing is released before it is recorded.
	return ctrl.Result{}, nil
}

// reportGrace is how long a run seen ended may wait for its runner's
// report of the end. A runner that reports sends the end with its last
// lines and exits once they are acknowledged, so a run seen ended without
// it is nearly always this reconciler's cache behind that report (the
// local launcher tells of the process's exit at once). Concluding from
// the launcher then wrote the task's end over a status that had changed:
// a conflict, and a reconcile again, for most short runs
// (docs/benchmarks.md, "Seventh round").
const reportGrace = time.Second

// awaitReport is how long yet to wait for the runner's report of the end
// of a run seen ended: 0 when the launcher's word holds now (the runner
// never reported, the task is being stopped, or the grace is over).
func (r *TaskReconciler) awaitReport(task *bastionv1.Task, stopping bool) time.Duration {
	if stopping || task.Status.Run == nil || task.Status.Run.Phase == "" {
		r.unreported.Delete(task.UID)
		return 0
	}
	// Real time, not r.now(): what is waited for is the cache, not a
	// deadline of the task's.
	now := time.Now()
	first, _ := r.unreported.LoadOrStore(task.UID, now)
	if wait := reportGrace - now.Sub(first.(time.Time)); wait > 0 {
		return wait
	}
	r.unreported.Delete(task.UID)
	return 0
}

// forgetRun drops what this process holds in memory about a task's run:
// the task finished or goes. The runner endpoint forgets its token too,
// when its cache sees that; this covers a token put by a reconcile that
// worked from a copy older than the end.
func (r *TaskReconciler) forgetRun(task *bastionv1.Task) {
	r.unreported.Delete(task.UID)
	r.Tokens.Forget(task.UID)
}

// endOf is how a run ended, by its runner's exit: stopped when the task
// was stopping, or when a stop was asked and the run did not succeed. The
// runner hears a stop in its stream's reply and ends the program, so its
// exit can be recorded before this reconciler has seen the stop (the
// runner endpoint reads it from its cache, the reconcile may wait in the
// queue): that exit is the stop's doing, not a failure. A run that
// succeeded keeps its success, whenever a stop came.
func endOf(task *bastionv1.Task, exit *bastionv1.TaskRunExit) (bastionv1.TaskStatusValue, string) {
	succeeded := exit.Code == 0 && exit.Message == ""
	switch {
	case task.Status.Status == bastionv1.TaskStopping, task.Spec.Stop != "" && !succeeded:
		return bastionv1.TaskStopped, "stopped"
	case succeeded:
		return bastionv1.TaskSuccess, ""
	}
	return bastionv1.TaskError, exitMessage(exit)
}

// reportedExit is the runner's report of how the run ended, if any.
func reportedExit(task *bastionv1.Task) *bastionv1.TaskRunExit {
	if task.Status.Run == nil {
		return nil
	}
	return task.Status.Run.Exit
}

// runningState is the state of a task whose run is running: the phase
// its runner reported, answered by the user's confirmation.
func runningState(task *bastionv1.Task) bastionv1.TaskStatusValue {
	if task.Status.Run == nil || task.Status.Run.Phase != runproto.PhaseWaitingConfirmation {
		return bastionv1.TaskRunning
	}
	if task.Spec.Confirmed {
		return bastionv1.TaskConfirmed
	}
	return bastionv1.TaskWaitingConfirmation
}

// exitMessage is the task's message for a failed run: the runner's
// account (a failed clone, a path outside the checkout) says more than an
// exit code; without one, the exit code as the local launcher names it.
func exitMessage(exit *bastionv1.TaskRunExit) string {
	if exit.Message != "" {
		return exit.Message
	}
	return failureMessage(launch.State{Reason: "RunnerFailed", Message: fmt.Sprintf("the runner exited with code %d", exit.Code)})
}

func failureMessage(s launch.State) string {
	switch {
	case s.Message != "" && s.Reason != "":
		return s.Reason + ": " + s.Message
	case s.Message != "":
		return s.Message
	}
	return s.Reason
}

// transition moves the task to a new state and records when.
func (r *TaskReconciler) transition(task *bastionv1.Task, to bastionv1.TaskStatusValue, message string) {
	now := metav1.NewTime(r.now())
	task.Status.Status = to
	if message != "" || to.Finished() {
		task.Status.Message = message
	}
	if to.Active() && to != bastionv1.TaskStarting && !task.AwaitingApproval() && task.Status.Start == nil {
		task.Status.Start = &now
	}
	if to.Finished() {
		if task.Status.Start == nil && to != bastionv1.TaskStopped {
			task.Status.Start = &now
		}
		task.Status.End = &now
		meta.RemoveStatusCondition(&task.Status.Conditions, bastionv1.ConditionQueued)
	}
}

func (r *TaskReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// reconcileDelete releases the run of a deleted task and, unless
// retention pruned it, deletes its stored output and summary: a user's
// delete, through kubectl or the API, takes the task's history along.
func (r *TaskReconciler) reconcileDelete(ctx context.Context, task *bastionv1.Task) error {
	r.forgetRun(task)
	running := controllerutil.ContainsFinalizer(task, TaskFinalizer)
	if !running && !controllerutil.ContainsFinalizer(task, TaskHistoryFinalizer) {
		return nil
	}
	if running {
		if err := r.releaseDeleted(ctx, task); err != nil {
			return err
		}
	}
	if task.Annotations[bastionv1.AnnotationPruned] != "true" {
		if err := r.deleteStoredOutput(ctx, task); err != nil {
			return err
		}
	}
	return r.patchFinalizers(ctx, task, "")
}

// releaseDeleted ends and releases the run of a task deleted before its
// finish was done.
func (r *TaskReconciler) releaseDeleted(ctx context.Context, task *bastionv1.Task) error {
	run := launch.Run{Task: task, Name: bastionv1.TaskRunName(task), InputSecret: bastionv1.TaskInputSecretName(task)}
	if !task.Status.Status.Finished() {
		if err := r.Launcher.Stop(ctx, run, true); err != nil {
			return err
		}
		// A finished task's were deleted when it was released (finish).
		if err := r.deleteRunSecrets(ctx, task, run); err != nil {
			return err
		}
	}
	return r.Launcher.Release(ctx, run)
}

// adoptsHistory: task finished before TaskHistoryFinalizer existed (or
// while there was no store), so it has neither finalizer, and it is not
// on its way out.
func (r *TaskReconciler) adoptsHistory(task *bastionv1.Task) bool {
	return r.Store != nil && task.Status.Status.Finished() &&
		!controllerutil.ContainsFinalizer(task, TaskFinalizer) &&
		!controllerutil.ContainsFinalizer(task, TaskHistoryFinalizer) &&
		task.Annotations[bastionv1.AnnotationPruned] != "true"
}

// addRunFinalizer gives a new task TaskFinalizer, and the task becomes the
// object the patch returned: the reconcile goes on from it (its
// resourceVersion is the one the status write is checked against) rather
// than end here and wait for the watch to bring the task back, a trip
// through the queue that a burst of new tasks made seconds long (issue
// #22). added is false when the task is gone.
func (r *TaskReconciler) addRunFinalizer(ctx context.Context, task *bastionv1.Task) (added bool, err error) {
	cp := task.DeepCopy()
	controllerutil.AddFinalizer(cp, TaskFinalizer)
	controllerutil.RemoveFinalizer(cp, TaskHistoryFinalizer)
	if err := r.Patch(ctx, cp, client.MergeFrom(task)); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	cp.DeepCopyInto(task)
	return true, nil
}

// patchFinalizers leaves the task with want ("": neither) of this
// reconciler's two finalizers, in one patch of a copy, so the status
// changes held in task are not overwritten by the answer. Others' are
// kept.
func (r *TaskReconciler) patchFinalizers(ctx context.Context, task *bastionv1.Task, want string) error {
	cp := task.DeepCopy()
	changed := false
	for _, f := range []string{TaskFinalizer, TaskHistoryFinalizer} {
		if f == want {
			changed = controllerutil.AddFinalizer(cp, f) || changed
		} else {
			changed = controllerutil.RemoveFinalizer(cp, f) || changed
		}
	}
	if !changed {
		return nil
	}
	if err := r.Patch(ctx, cp, client.MergeFrom(task)); err != nil {
		return client.IgnoreNotFound(err)
	}
	task.Finalizers = cp.Finalizers
	return nil
}

func setTaskCondition(task *bastionv1.Task, condType string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&task.Status.Conditions, metav1.Condition{
		Type: condType, Status: status, Reason: reason, Message: message, ObservedGeneration: task.Generation,
	})
}

// Notifier is a launcher that reports run changes itself (a local process
// exiting has no Kubernetes event).
type Notifier interface {
	Notifications() source.Source
}

// SetupWithManager watches Tasks, their Jobs and Pods, and frees queued
// tasks when a task of the same project finishes.
func (r *TaskReconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &bastionv1.Task{}, waitingForInputsField, indexWaitingForInputs); err != nil {
		return fmt.Errorf("indexing tasks that wait for inputs: %w", err)
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&bastionv1.Task{}).
		Owns(&batchv1.Job{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(taskOfPod)).
		Watches(&bastionv1.Task{}, r.queueWaker()).
		Watches(&bastionv1.Task{}, runReports()).
		Watches(&bastionv1.Project{}, r.queueWaker()).
		Watches(&bastionv1.Template{}, r.inputWaker()).
		Watches(&bastionv1.Repository{}, r.inputWaker()).
		Watches(&bastionv1.Inventory{}, r.inputWaker()).
		Watches(&bastionv1.Environment{}, r.inputWaker()).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Named("task")
	if n, ok := r.Launcher.(Notifier); ok {
		b = b.WatchesRawSource(n.Notifications())
	}
	return b.Complete(r)
}

func taskOfPod(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[launch.LabelTask]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}}}
}

// runReportPriority is the queue priority of a task whose runner reported
// something new: a run's end is waited for by its user, while a burst of
// new tasks can keep every worker busy starting runs.
const runReportPriority = 10

// runReports reconciles a task ahead of the rest of the queue when its
// runner's report (status.run) changed, so that its final state follows
// its last line within moments, however many tasks wait to start.
func runReports() handler.Funcs {
	return handler.Funcs{
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			prev, ok1 := e.ObjectOld.(*bastionv1.Task)
			next, ok2 := e.ObjectNew.(*bastionv1.Task)
			if !ok1 || !ok2 || equality.Semantic.DeepEqual(prev.Status.Run, next.Status.Run) {
				return
			}
			req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(next)}
			if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
				pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(runReportPriority)}, req)
				return
			}
			q.Add(req)
		},
	}
}

// queueWaker wakes a project's queue when a slot may have opened: one of
// its tasks finishes, an unfinished one is deleted, or the project's
// max_parallel_tasks changes. It fires on those transitions only, not on
// every later write to a finished task (summaries, finalizers, retention).
func (r *TaskReconciler) queueWaker() handler.Funcs {
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			switch next := e.ObjectNew.(type) {
			case *bastionv1.Task:
				if prev, ok := e.ObjectOld.(*bastionv1.Task); ok && !prev.Status.Status.Finished() && next.Status.Status.Finished() {
					r.wakeQueueHeads(ctx, next.Namespace, q)
				}
			case *bastionv1.Project:
				if prev, ok := e.ObjectOld.(*bastionv1.Project); ok && prev.Spec.MaxParallelTasks != next.Spec.MaxParallelTasks {
					r.wakeQueueHeads(ctx, bastionv1.ProjectNamespace(next.Name), q)
				}
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if task, ok := e.Object.(*bastionv1.Task); ok && !task.Status.Status.Finished() {
				r.wakeQueueHeads(ctx, task.Namespace, q)
			}
		},
	}
}

// wakeQueueHeads reconciles the oldest waiting tasks of namespace (of
// every namespace under a global limit): only they can take a freed slot,
// at most the limit of them. Waking every waiting task instead made each
// finished task cost O(waiting × tasks) (each admission lists the
// project), and a project with thousands queued drained a few tasks a
// minute (issue #11, soak of the load test).
func (r *TaskReconciler) wakeQueueHeads(ctx context.Context, namespace string, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	opts := []client.ListOption{client.UnsafeDisableDeepCopy}
	if r.GlobalMaxParallel == 0 {
		opts = append(opts, client.InNamespace(namespace))
	}
	list := &bastionv1.TaskList{}
	if err := r.List(ctx, list, opts...); err != nil {
		log.FromContext(ctx).Error(err, "listing queued tasks")
		return
	}
	waiting := map[string][]*bastionv1.Task{}
	for i := range list.Items {
		if t := &list.Items[i]; t.Status.Status == bastionv1.TaskWaiting {
			waiting[t.Namespace] = append(waiting[t.Namespace], t)
		}
	}
	for ns, queue := range waiting {
		heads := r.GlobalMaxParallel
		limit, err := r.projectLimit(ctx, ns)
		if err != nil {
			log.FromContext(ctx).Error(err, "reading the project's limit", "namespace", ns)
			continue
		}
		if limit > 0 && (heads == 0 || limit < heads) {
			heads = limit
		}
		if heads == 0 {
			continue // no limit: nothing waits for a slot
		}
		sortFIFO(queue)
		for _, t := range queue[:min(heads, len(queue))] {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(t)})
		}
	}
}
