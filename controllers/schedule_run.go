package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/gitremote"
)

// Event actions of a Schedule's runs.
const (
	actionRun         = "Run"
	actionCheckCommit = "CheckCommit"
)

// fire is the run of the minute run, already claimed: it creates a Task,
// unless runOnlyOnNewCommit finds the branch head where it was. The Ready
// condition and an Event tell what happened. Nothing is retried, since the
// run is claimed; the next run tries afresh (and asks the remote once per
// run, however long it is down).
func (r *ScheduleReconciler) fire(ctx context.Context, schedule *bastionv1.Schedule, run time.Time) {
	template := &bastionv1.Template{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: schedule.Namespace, Name: schedule.Spec.TemplateRef.Name}, template); err != nil {
		r.runFailed(schedule, actionRun, run, describeGetError("template", schedule.Spec.TemplateRef.Name, err))
		return
	}

	commit, proceed := r.checkCommit(ctx, schedule, template, run)
	if !proceed {
		return
	}

	task, err := r.createTask(ctx, schedule, template)
	if err != nil {
		r.runFailed(schedule, actionRun, run, "creating a task: "+err.Error())
		return
	}
	schedule.Status.LastTask = task.Name
	if commit != "" {
		schedule.Status.LastCommit = commit
	}
	r.record(schedule, task, corev1.EventTypeNormal, metav1.ConditionTrue, bastionv1.ReasonTaskCreated, actionRun,
		fmt.Sprintf("started task %s for the run of %s", task.Name, scheduleTime(run)))
}

// checkCommit decides whether a runOnlyOnNewCommit schedule runs: only when
// the branch head is not the commit of its last task. It answers the head
// to remember, and false when the run is skipped (recorded as such).
func (r *ScheduleReconciler) checkCommit(ctx context.Context, schedule *bastionv1.Schedule, template *bastionv1.Template, run time.Time) (commit string, proceed bool) {
	if !schedule.Spec.RunOnlyOnNewCommit {
		return "", true
	}
	repo, err := r.repository(ctx, schedule, template)
	if err != nil {
		r.runFailed(schedule, actionCheckCommit, run, err.Error())
		return "", false
	}
	branch := checkoutBranch(repo, template)
	// No credentials yet: the repository's key joins with issue #4.
	head, err := gitremote.Head(ctx, repo.Spec.GitURL, branch, gitremote.Options{AllowLocal: r.AllowLocalRepositories})
	if err != nil {
		// The status and the event say only "cannot reach the repository"
		// (or which branch is missing); git's words go to the manager's
		// log, for its operator.
		var unreachable *gitremote.UnreachableError
		if errors.As(err, &unreachable) {
			log.FromContext(ctx).Info("checking a schedule's repository", "schedule", schedule.Name, "namespace", schedule.Namespace, "detail", unreachable.Detail)
		}
		r.record(schedule, nil, corev1.EventTypeWarning, metav1.ConditionFalse, bastionv1.ReasonGitError, actionCheckCommit,
			fmt.Sprintf("skipped the run of %s: %v", scheduleTime(run), err))
		return "", false
	}
	if head == schedule.Status.LastCommit {
		r.record(schedule, nil, corev1.EventTypeNormal, metav1.ConditionTrue, bastionv1.ReasonNoNewCommit, actionCheckCommit,
			fmt.Sprintf("skipped the run of %s: no new commit on %s since %s", scheduleTime(run), branchName(branch), shortCommit(head)))
		return "", false
	}
	return head, true
}

// createTask starts a run of the template, named after it and labelled
// with it. The Task has no owner: it is history, and outlives the schedule.
// Its status is the Task reconciler's.
func (r *ScheduleReconciler) createTask(ctx context.Context, schedule *bastionv1.Schedule, template *bastionv1.Template) (*bastionv1.Task, error) {
	task := &bastionv1.Task{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    schedule.Namespace,
			GenerateName: template.Name + "-",
			Labels:       map[string]string{bastionv1.LabelTemplate: template.Name},
		},
		Spec: bastionv1.TaskSpec{
			TemplateRef: bastionv1.ObjectRef{Name: template.Name},
			ScheduleRef: &bastionv1.ObjectRef{Name: schedule.Name},
		},
	}
	return task, r.Create(ctx, task)
}

// repository is the one whose head decides a runOnlyOnNewCommit run: the
// schedule's, else the template's.
func (r *ScheduleReconciler) repository(ctx context.Context, schedule *bastionv1.Schedule, template *bastionv1.Template) (*bastionv1.Repository, error) {
	name := template.Spec.RepositoryRef.Name
	if schedule.Spec.RepositoryRef != nil {
		name = schedule.Spec.RepositoryRef.Name
	}
	repo := &bastionv1.Repository{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: schedule.Namespace, Name: name}, repo); err != nil {
		return nil, errors.New(describeGetError("repository", name, err))
	}
	return repo, nil
}

// checkoutBranch is the branch a task of the template checks out: the
// template's, else the repository's. Empty means the remote's default
// branch (a local-path repository may name none).
func checkoutBranch(repo *bastionv1.Repository, template *bastionv1.Template) string {
	if template.Spec.GitBranch != "" {
		return template.Spec.GitBranch
	}
	return repo.Spec.GitBranch
}

// runFailed records a run that created no task.
func (r *ScheduleReconciler) runFailed(schedule *bastionv1.Schedule, action string, run time.Time, why string) {
	r.record(schedule, nil, corev1.EventTypeWarning, metav1.ConditionFalse, bastionv1.ReasonRunFailed, action,
		fmt.Sprintf("the run of %s created no task: %s", scheduleTime(run), why))
}

// record tells the outcome of a run twice: in the Ready condition, which
// keeps the latest, and in an Event, which keeps the history.
func (r *ScheduleReconciler) record(schedule *bastionv1.Schedule, related runtime.Object, eventType string,
	status metav1.ConditionStatus, reason, action, message string) {
	setReady(schedule, status, reason, message)
	if r.Recorder != nil {
		r.Recorder.Eventf(schedule, related, eventType, reason, action, "%s", message)
	}
}

func describeGetError(kind, name string, err error) string {
	if apierrors.IsNotFound(err) {
		return fmt.Sprintf("%s %q not found", kind, name)
	}
	return fmt.Sprintf("reading %s %q: %v", kind, name, err)
}

// branchName names a branch in messages; empty is the remote's HEAD.
func branchName(branch string) string {
	if branch == "" {
		return "HEAD"
	}
	return branch
}

// scheduleTime formats a run's minute for messages.
func scheduleTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// shortCommit abbreviates a commit id as git does in messages.
func shortCommit(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
