package controllers

import (
	"cmp"
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/alert"
	"github.com/bastion-dev/bastion/internal/ids"
)

// Alerter sends the alerts of finished tasks (an *alert.Dispatcher). Both
// calls return at once; sending happens elsewhere.
type Alerter interface {
	// Wants reports whether a finished task calls for any alert.
	Wants(t alert.Task) bool
	// Notify queues a finished task's alerts.
	Notify(t alert.Task)
}

// alert hands a finished task's alerts to the Alerter, once per task.
//
// The task is marked first (the Alerted condition, written with an
// optimistic lock) and the alerts are queued only if the mark was
// written: a finish repeated after a failed step, a stale cache, or a
// restarted manager finds the mark and sends nothing again. A crash between
// the mark and the send loses that task's alerts rather than sending them
// twice, as schedules lose a run rather than run it twice.
func (r *TaskReconciler) alert(ctx context.Context, task *bastionv1.Task) error {
	_, err := r.alertOnce(ctx, task, bastionv1.ConditionAlerted, "the task's alerts were queued", anyMember)
	return err
}

// alertOnce queues the alerts of task, to the members to picks, once: the
// mark (a condition of type mark, written with an optimistic lock) comes
// first. It returns the marked copy of the task, or nil if nothing was
// queued.
func (r *TaskReconciler) alertOnce(ctx context.Context, task *bastionv1.Task, mark, markMessage string, to func(bastionv1.ProjectMember) bool) (*bastionv1.Task, error) {
	if r.Alerts == nil || meta.FindStatusCondition(task.Status.Conditions, mark) != nil {
		return nil, nil
	}
	facts, ok, err := r.alertFacts(ctx, task, to)
	if err != nil || !ok || !r.Alerts.Wants(facts) {
		return nil, err
	}
	marked := task.DeepCopy()
	setTaskCondition(marked, mark, metav1.ConditionTrue, bastionv1.ReasonAlertsQueued, markMessage)
	if err := r.Status().Patch(ctx, marked, client.MergeFromWithOptions(task, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, fmt.Errorf("marking task %s alerted: %w", task.Name, err)
	}
	// Only the version moves on: the reconcile's own status patch compares
	// the status it read with the one it holds, and has nothing to add.
	task.ResourceVersion = marked.ResourceVersion
	r.Alerts.Notify(facts)
	return marked, nil
}

// anyMember: a finished task's alerts go to the whole team.
func anyMember(bastionv1.ProjectMember) bool { return true }

// alertFacts gathers what an alert says of a task: its project and the
// project's switches, the template, who started it, and the team with each
// user's switch, of the members to picks. ok is false for a task outside
// any project.
func (r *TaskReconciler) alertFacts(ctx context.Context, task *bastionv1.Task, to func(bastionv1.ProjectMember) bool) (alert.Task, bool, error) {
	project := &bastionv1.Project{}
	if err := r.Get(ctx, client.ObjectKey{Name: bastionv1.ProjectOfNamespace(task.Namespace)}, project); err != nil {
		return alert.Task{}, false, client.IgnoreNotFound(err)
	}
	projectID, _ := ids.FromLabels(project)
	taskID, _ := ids.FromLabels(task)
	t := alert.Task{
		ProjectID: projectID, ProjectName: project.Spec.DisplayName,
		ProjectAlert: project.Spec.Alert, AlertChat: project.Spec.AlertChat,
		TemplateName: task.Spec.TemplateRef.Name,
		TaskID:       taskID, Status: string(task.Status.Status), Version: task.Status.Version,
		Message: task.Spec.Message, Reason: task.Status.Message,
	}
	if !project.Spec.Alert {
		return t, true, nil // nobody gets anything: skip the reads below
	}
	if task.Status.Start != nil {
		t.Start = task.Status.Start.Time
	}
	if task.Status.End != nil {
		t.End = task.Status.End.Time
	}
	template := &bastionv1.Template{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: task.Spec.TemplateRef.Name}, template); err == nil {
		t.TemplateName = cmp.Or(template.Spec.DisplayName, template.Name)
		t.SuppressSuccess = template.Spec.SuppressSuccessAlerts
	} else if client.IgnoreNotFound(err) != nil {
		return t, false, err
	}
	t.StartedBy = r.startedBy(ctx, task)
	for _, m := range project.Spec.Members {
		if !to(m) {
			continue
		}
		user := &bastionv1.User{}
		if err := r.Get(ctx, client.ObjectKey{Name: m.User}, user); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return t, false, err
			}
			continue // a member whose user is gone gets nothing
		}
		t.Members = append(t.Members, alert.Member{Login: user.Spec.Username, Email: user.Spec.Email, Alert: user.Spec.Alert})
	}
	return t, true, nil
}

// startedBy names who or what started a task, as the history screen does.
func (r *TaskReconciler) startedBy(ctx context.Context, task *bastionv1.Task) string {
	switch {
	case task.Spec.User != "":
		return r.userLabel(ctx, task.Spec.User)
	case task.Spec.ScheduleRef != nil:
		return "schedule " + task.Spec.ScheduleRef.Name
	case task.Spec.IntegrationRef != nil:
		return "integration " + task.Spec.IntegrationRef.Name
	case task.Labels[bastionv1.LabelAutorunOf] != "":
		return "autorun after task " + task.Labels[bastionv1.LabelAutorunOf]
	}
	return ""
}

// userLabel names a User as people read it: "Anna (anna)", or the login
// alone, or the object's name if the User is gone.
func (r *TaskReconciler) userLabel(ctx context.Context, name string) string {
	user := &bastionv1.User{}
	if err := r.Get(ctx, client.ObjectKey{Name: name}, user); err != nil {
		return name
	}
	if user.Spec.Name == "" || user.Spec.Name == user.Spec.Username {
		return user.Spec.Username
	}
	return fmt.Sprintf("%s (%s)", user.Spec.Name, user.Spec.Username)
}
