package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/controllers/launch"
	"github.com/bastion-dev/bastion/internal/metrics"
	"github.com/bastion-dev/bastion/internal/taskvars"
	"github.com/bastion-dev/bastion/internal/versions"
)

// initialize gives a new task its version and puts it in the queue.
func (r *TaskReconciler) initialize(ctx context.Context, task *bastionv1.Task) error {
	template := &bastionv1.Template{}
	if err := r.getRef(ctx, task.Namespace, "template", task.Spec.TemplateRef.Name, template); err != nil {
		r.transition(task, bastionv1.TaskError, err.Error())
		return nil
	}
	if problem, err := r.taskRulesProblem(ctx, task, template); err != nil || problem != "" {
		if problem != "" {
			r.transition(task, bastionv1.TaskError, problem)
		}
		return err
	}
	switch template.Spec.Type {
	case bastionv1.TemplateBuild:
		version, err := r.nextBuildVersion(ctx, template, task)
		if err != nil {
			return err
		}
		task.Status.Version = version
	case bastionv1.TemplateDeploy:
		version, problem, err := r.deployVersion(ctx, task, template)
		if err != nil {
			return err
		}
		if problem != "" {
			r.transition(task, bastionv1.TaskError, problem)
			return nil
		}
		task.Status.Version = version
	}
	if template.Spec.RequireApproval && meta.FindStatusCondition(task.Status.Conditions, bastionv1.ConditionApproved) == nil {
		// Once: a task approved, then back in initialization (an input
		// went missing before it started), is not asked again.
		r.holdForApproval(task)
		return nil
	}
	r.transition(task, bastionv1.TaskWaiting, "")
	return nil
}

// nextBuildVersion takes the next version of a build template. The
// template's status.lastVersion is the counter, updated with optimistic
// concurrency so two tasks never get the same version. The counter also
// names the task that took it, so a task whose reconcile is repeated
// before it recorded its version gets the same one again.
func (r *TaskReconciler) nextBuildVersion(ctx context.Context, template *bastionv1.Template, task *bastionv1.Task) (string, error) {
	var version string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh := &bastionv1.Template{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(template), fresh); err != nil {
			return err
		}
		if fresh.Status.LastVersionTask == task.Name && fresh.Status.LastVersion != "" {
			version = fresh.Status.LastVersion
			return nil
		}
		var err error
		if fresh.Status.LastVersion == "" {
			version, err = versions.First(fresh.Spec.StartVersion)
		} else {
			version, err = versions.Next(fresh.Status.LastVersion)
		}
		if err != nil {
			return err
		}
		fresh.Status.LastVersion = version
		fresh.Status.LastVersionTask = task.Name
		return r.Status().Update(ctx, fresh)
	})
	if err != nil {
		return "", fmt.Errorf("taking the next version of template %s: %w", template.Name, err)
	}
	return version, nil
}

// deployVersion is the version of the deploy task's build task, which must
// be a successful task of the template's build template. problem is what
// the user reads when it is not.
func (r *TaskReconciler) deployVersion(ctx context.Context, task *bastionv1.Task, template *bastionv1.Template) (version, problem string, err error) {
	if task.Spec.BuildTaskRef == nil {
		return "", "Build version is required", nil
	}
	build := &bastionv1.Task{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: task.Spec.BuildTaskRef.Name}, build); err != nil {
		if apierrors.IsNotFound(err) {
			return "", fmt.Sprintf("build task %q not found", task.Spec.BuildTaskRef.Name), nil
		}
		return "", "", err
	}
	if template.Spec.BuildTemplateRef == nil || build.Spec.TemplateRef.Name != template.Spec.BuildTemplateRef.Name {
		return "", fmt.Sprintf("task %q is not a task of this template's build template", build.Name), nil
	}
	if build.Status.Status != bastionv1.TaskSuccess {
		return "", fmt.Sprintf("build task %q did not succeed (it is %s)", build.Name, nonEmptyStatus(build.Status.Status)), nil
	}
	return build.Status.Version, "", nil
}

func nonEmptyStatus(s bastionv1.TaskStatusValue) string {
	if s == "" {
		return "new"
	}
	return string(s)
}

// finish releases what a finished task held, queues autorun deploys and
// the task's alerts.
// It runs until TaskFinalizer is gone, so every step is idempotent.
func (r *TaskReconciler) finish(ctx context.Context, task *bastionv1.Task) (ctrl.Result, error) {
	r.forgetRun(task)
	if !controllerutil.ContainsFinalizer(task, TaskFinalizer) {
		return ctrl.Result{}, nil
	}
	run, err := r.runFor(ctx, task)
	if err != nil {
		return ctrl.Result{}, err
	}
	if wait, err := r.runEnding(ctx, task, run); err != nil || wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, err
	}
	return ctrl.Result{}, r.release(ctx, task, run)
}

// endGrace is how long a finished task's run may take to end by itself
// (its runner reported the end, then exits; its pod terminates) before
// it is released anyway, which kills what is left of it.
const endGrace = 30 * time.Second

// runEnding is how long to wait yet for the run of a finished task to
// end by itself: a task is finished as soon as its runner reports the
// end, with its last line, and the runner exits just after. Its end
// brings the task back (the local launcher's notification, the Job's
// watch); the wait is only a fallback. 0 when there is nothing to wait
// for.
func (r *TaskReconciler) runEnding(ctx context.Context, task *bastionv1.Task, run launch.Run) (time.Duration, error) {
	if reportedExit(task) == nil || task.Status.End == nil {
		return 0, nil
	}
	state, err := r.Launcher.Observe(ctx, run)
	if err != nil || state.Phase != launch.PhaseRunning {
		return 0, err
	}
	return max(0, endGrace-r.now().Sub(task.Status.End.Time)), nil
}

// deleteRunSecrets deletes the task's input Secret (its runner's token
// and runspec) and the Secret it owns: the run is over, or will never
// be, and they are of no further use. Deleted here, not left to the
// owner references: `bastion dev` runs no garbage collector.
func (r *TaskReconciler) deleteRunSecrets(ctx context.Context, task *bastionv1.Task, run launch.Run) error {
	// The watch's copy when it has this task's (its uid is all the delete
	// needs), else the apiserver's: a Secret the watch has not seen yet
	// must go all the same.
	input := secretMetadata()
	var err error
	if cached, _ := r.watchedInput(task, run.InputSecret); cached != nil {
		cached.ObjectMeta.DeepCopyInto(&input.ObjectMeta)
	} else {
		err = r.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: run.InputSecret}, input)
	}
	if client.IgnoreNotFound(err) != nil {
		return err
	}
	// Only this task's: a Secret that merely has the name is not.
	if err == nil && metav1.IsControlledBy(input, task) {
		uid := input.GetUID()
		if err := r.Delete(ctx, input, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return r.deleteOwnSecret(ctx, task)
}

// release does the finish steps once the run is over.
func (r *TaskReconciler) release(ctx context.Context, task *bastionv1.Task, run launch.Run) error {
	if err := r.Launcher.Release(ctx, run); err != nil {
		return err
	}
	if err := r.deleteRunSecrets(ctx, task, run); err != nil {
		return err
	}
	if task.Status.Status == bastionv1.TaskSuccess {
		if err := r.queueAutorun(ctx, task); err != nil {
			return err
		}
	}
	if err := r.saveSummary(ctx, task); err != nil {
		return err
	}
	r.taskEvent(ctx, task, "finished: "+displayStatus(task.Status.Status))
	if err := r.alert(ctx, task); err != nil {
		return err
	}
	prunedSelf, err := r.pruneFinished(ctx, task)
	if err != nil {
		return err
	}
	// The history finalizer takes the run's place, in the same patch: from
	// now on, a user's delete of the task takes its history along.
	keep := TaskHistoryFinalizer
	if r.Store == nil || prunedSelf {
		keep = "" // nothing to delete, or retention's delete keeps it
	}
	if err := r.patchFinalizers(ctx, task, keep); err != nil {
		return err
	}
	// Observed once the finalizer is gone, so a retried finish never
	// counts a task twice.
	if task.Status.Start != nil && task.Status.End != nil {
		metrics.ObserveTask(string(task.Status.Status), task.Status.Start.Time, task.Status.End.Time)
	}
	return nil
}

// queueAutorun starts the autorun deploy templates of a successful build.
// Each gets a task named after the build task, so a repeated finish never
// queues twice.
func (r *TaskReconciler) queueAutorun(ctx context.Context, build *bastionv1.Task) error {
	templates := &bastionv1.TemplateList{}
	if err := r.List(ctx, templates, client.InNamespace(build.Namespace)); err != nil {
		return err
	}
	for _, t := range templates.Items {
		if !t.Spec.Autorun || t.Spec.BuildTemplateRef == nil || t.Spec.BuildTemplateRef.Name != build.Spec.TemplateRef.Name {
			continue
		}
		deploy := &bastionv1.Task{
			ObjectMeta: metav1.ObjectMeta{
				Name:      autorunTaskName(t.Name, build.Name),
				Namespace: build.Namespace,
				Labels:    map[string]string{bastionv1.LabelAutorunOf: build.Name},
			},
			Spec: bastionv1.TaskSpec{
				TemplateRef:  bastionv1.ObjectRef{Name: t.Name},
				BuildTaskRef: &bastionv1.ObjectRef{Name: build.Name},
				Message:      "autorun after build " + build.Status.Version,
			},
		}
		if err := r.Create(ctx, deploy); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("queueing autorun of %s: %w", t.Name, err)
		}
	}
	return nil
}

func autorunTaskName(template, build string) string {
	name := template + "-after-" + build
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:56] + "-" + hex.EncodeToString(sum[:])[:6]
}

func rawOf(j *apiextensionsv1.JSON) *[]byte {
	if j == nil {
		return nil
	}
	return &j.Raw
}

// displayStatus is a status as the console names it (error shows as Failed).
func displayStatus(s bastionv1.TaskStatusValue) string {
	if s == bastionv1.TaskError {
		return "failed"
	}
	return string(s)
}

// deleteOwnSecret deletes the Secret of the task's secret answers, which
// the API wrote for this run alone and this Task owns (by UID; see
// claimTaskSecret). A Secret the task merely names stays.
func (r *TaskReconciler) deleteOwnSecret(ctx context.Context, task *bastionv1.Task) error {
	ref := task.Spec.SecretRef
	if ref == nil || ref.Name == "" {
		return nil
	}
	secret := secretMetadata()
	if err := r.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: ref.Name}, secret); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !taskvars.OwnsSecret(task, secret.GetOwnerReferences()) {
		return nil
	}
	if err := r.Delete(ctx, secret, client.Preconditions{UID: &secret.UID}); client.IgnoreNotFound(err) != nil {
		return err
	}
	return nil
}
