package controllers

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/cron"
	"github.com/bastion-dev/bastion/internal/ids"
)

// ScheduleWorkers is how many Schedules are reconciled at once. A run with
// runOnlyOnNewCommit waits for `git ls-remote` (up to gitremote.Timeout),
// and one slow remote must not hold back every other schedule.
const ScheduleWorkers = 4

// ScheduleReconciler starts Tasks of a Template at the minutes a cron
// expression names.
//
// A run is claimed before it happens: status.lastRunTime is written with
// the resourceVersion the reconcile read, and only if that write succeeds
// is a Task created. Two reconciles of one minute (a stale cache, a
// repeated event, a second replica) cannot both win the write, so a
// schedule fires at most once a minute. The price is that a crash between
// the claim and the create loses that run, which is the same at-most-once
// promise made for runs missed while the manager was down.
type ScheduleReconciler struct {
	client.Client
	// Clock tells the time. Tests inject a fake one; nil is the wall clock.
	Clock clock.PassiveClock
	// Recorder records an Event for every run, created or skipped.
	Recorder events.EventRecorder
	// IDs allocates the schedules' integer ids.
	IDs *ids.Allocator
	// AllowLocalRepositories lets "run only on new commit" read a
	// repository given as a path or file:// URL of the manager's host
	// (--allow-local-repositories); off, such a run is skipped with
	// "cannot reach the repository".
	AllowLocalRepositories bool
}

// +kubebuilder:rbac:groups=automation.bastion.dev,resources=schedules,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=schedules/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=tasks,verbs=create
// +kubebuilder:rbac:groups=automation.bastion.dev,resources=templates;repositories,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile fires the schedule if its minute has come, and requeues for the
// next one.
func (r *ScheduleReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	schedule := &bastionv1.Schedule{}
	if err := r.Get(ctx, req.NamespacedName, schedule); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !schedule.DeletionTimestamp.IsZero() {
		// Tasks a schedule started are history and outlive it: nothing to
		// clean up.
		return ctrl.Result{}, nil
	}
	if err := r.assignID(ctx, schedule); err != nil {
		return ctrl.Result{}, err
	}

	// The status is written as every kind's is (writeStatus), against the
	// version this reconcile read. A claimed run's outcome is the
	// exception: see writeOutcome.
	before := schedule.DeepCopy()
	defer func() { writeStatus(ctx, r.Client, before, schedule, &result, &err) }()

	cronSchedule, parseErr := cron.Parse(schedule.Spec.CronFormat)
	if parseErr != nil {
		schedule.Status.NextRunTime = nil
		setReady(schedule, metav1.ConditionFalse, bastionv1.ReasonInvalidCron, parseErr.Error())
		return ctrl.Result{}, nil
	}
	if !schedule.Spec.Active {
		schedule.Status.NextRunTime = nil
		setReady(schedule, metav1.ConditionTrue, bastionv1.ReasonInactive, "the schedule is inactive and does not fire")
		return ctrl.Result{}, nil
	}

	// Cron expressions without CRON_TZ= are read in UTC, whatever the
	// manager's local zone.
	now := r.Clock.Now().UTC()
	due := nextRunTime(schedule, cronSchedule, now)
	if now.Before(due) {
		r.markScheduled(schedule, due)
		return ctrl.Result{RequeueAfter: due.Sub(now)}, nil
	}

	// Runs missed while the manager was down fire once, now, and the
	// schedule goes on from this minute.
	run := now.Truncate(time.Minute)
	next := cronSchedule.Next(run)
	claimed, err := r.claimRun(ctx, schedule, run, next)
	if err != nil || !claimed {
		return ctrl.Result{}, err
	}
	before = schedule.DeepCopy()
	r.fire(ctx, schedule, run)
	if err := r.writeOutcome(ctx, before, schedule); err != nil {
		return ctrl.Result{}, err
	}
	before = schedule.DeepCopy()
	return ctrl.Result{RequeueAfter: next.Sub(now)}, nil
}

// writeOutcome records how a claimed run went (lastTask, lastCommit,
// Ready) without the optimistic lock. The claim already decided that this
// reconcile owns the run, and only this reconciler writes a Schedule's
// status, so nothing newer can be overwritten. With the lock, any write to
// the object between the claim and now (an annotation from kubectl or a
// GitOps tool, a spec change) dropped the outcome for good: the run is
// never repeated, so no later reconcile would record it, and Ready kept
// saying "Scheduled". Should the spec have changed, the outcome carries
// the older observedGeneration and the next reconcile decides afresh.
func (r *ScheduleReconciler) writeOutcome(ctx context.Context, claimed, schedule *bastionv1.Schedule) error {
	if equality.Semantic.DeepEqual(claimed.Status, schedule.Status) {
		return nil
	}
	return client.IgnoreNotFound(r.Status().Patch(ctx, schedule, client.MergeFrom(claimed)))
}

// nextRunTime is when the schedule fires next. Once a reconcile has seen the
// current spec, that is status.nextRunTime, written by it or by the last
// run. A new schedule counts from its creation, so a minute that passed
// before its first reconcile still fires. A changed spec (another cron, or
// active again) counts from now: minutes that passed under the old spec are
// not runs the new one missed.
func nextRunTime(schedule *bastionv1.Schedule, cronSchedule cron.Schedule, now time.Time) time.Time {
	ready := meta.FindStatusCondition(schedule.Status.Conditions, bastionv1.ConditionReady)
	if ready != nil && ready.ObservedGeneration == schedule.Generation && schedule.Status.NextRunTime != nil {
		return schedule.Status.NextRunTime.Time
	}
	from := schedule.CreationTimestamp.Time
	if ready != nil {
		from = now
	}
	// Never the minute of the last run again.
	if last := schedule.Status.LastRunTime; last != nil && last.After(from) {
		from = last.Time
	}
	return cronSchedule.Next(from.UTC())
}

// markScheduled records when the schedule fires next. The Ready condition
// is left alone when it already describes this spec: it then tells how the
// last run went.
func (r *ScheduleReconciler) markScheduled(schedule *bastionv1.Schedule, due time.Time) {
	schedule.Status.NextRunTime = &metav1.Time{Time: due}
	ready := meta.FindStatusCondition(schedule.Status.Conditions, bastionv1.ConditionReady)
	if ready == nil || ready.ObservedGeneration != schedule.Generation {
		setReady(schedule, metav1.ConditionTrue, bastionv1.ReasonScheduled,
			"the next run is at "+scheduleTime(due))
	}
}

// claimRun records run as the schedule's last run, on the condition that
// the schedule is still the version this reconcile read. It answers false
// (and no error) when another writer got there first: the newer version
// brings a new reconcile, which decides afresh.
func (r *ScheduleReconciler) claimRun(ctx context.Context, schedule *bastionv1.Schedule, run, next time.Time) (bool, error) {
	claimed := schedule.DeepCopy()
	claimed.Status.LastRunTime = &metav1.Time{Time: run}
	claimed.Status.NextRunTime = &metav1.Time{Time: next}
	err := r.Status().Patch(ctx, claimed, client.MergeFromWithOptions(schedule, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsConflict(err):
		log.FromContext(ctx).V(1).Info("schedule changed before its run was claimed; waiting for the newer version", "run", run)
		return false, nil
	case err != nil:
		return false, client.IgnoreNotFound(err)
	}
	*schedule = *claimed
	return true, nil
}

// assignID gives the schedule its integer id of the /api contract.
func (r *ScheduleReconciler) assignID(ctx context.Context, schedule *bastionv1.Schedule) error {
	if r.IDs == nil {
		return nil
	}
	_, err := ids.Assign(ctx, r.Client, r.IDs, schedule, schedule.Namespace, ids.CounterSchedule)
	return err
}

// SetupWithManager registers the reconciler. It watches only Schedules:
// templates and repositories are read when a run fires, and Tasks, once
// created, belong to the Task reconciler.
func (r *ScheduleReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&bastionv1.Schedule{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: ScheduleWorkers}).
		Named("schedule").
		Complete(r)
}
