package controllers

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/kinds"
)

// A task may arrive before its template and inputs: `kubectl apply -k` and
// GitOps tools create a directory's objects in no useful order, and even in
// file order the reconciler's cache may not have the template yet. So a
// new task whose template or inputs are missing waits (status waiting,
// Ready=False with reason WaitingForTemplate or WaitingForInputs) and fails
// only once they are still missing after a grace period.

// DefaultInputGrace is how long a task waits for its template and inputs.
const DefaultInputGrace = 2 * time.Minute

// inputRecheck bounds how long a waiting task goes without looking again.
// Templates, repositories, inventories and environments wake it when they
// are created (inputWaker); Secrets are not cached, so keys are polled.
const inputRecheck = 5 * time.Second

// refBuildTask is a deploy task's build task, one of its inputs.
var refBuildTask = kinds.Target{Noun: "build task", Object: &bastionv1.Task{}}

// awaitInputs holds a task that has not started while its template or an
// input is missing. waiting says the reconcile ends here, with result.
// A task that waited was never initialized: once its inputs are there it
// goes back to the empty status and starts from the beginning.
func (r *TaskReconciler) awaitInputs(ctx context.Context, task *bastionv1.Task) (waiting bool, result ctrl.Result, err error) {
	if task.Status.Status != "" && task.Status.Status != bastionv1.TaskWaiting {
		return false, ctrl.Result{}, nil
	}
	reason, missing, err := r.missingInput(ctx, task)
	if err != nil {
		return true, ctrl.Result{}, err
	}
	cond := waitCondition(task)
	if missing == "" {
		if cond != nil {
			meta.RemoveStatusCondition(&task.Status.Conditions, bastionv1.ConditionReady)
			task.Status.Status = ""
		}
		return false, ctrl.Result{}, nil
	}
	now := r.now()
	if cond == nil {
		// The condition's transition time is when the wait began, on the
		// reconciler's clock (which tests step).
		meta.SetStatusCondition(&task.Status.Conditions, metav1.Condition{
			Type: bastionv1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason,
			ObservedGeneration: task.Generation, LastTransitionTime: metav1.NewTime(now),
		})
		cond = waitCondition(task)
	}
	grace := r.inputGrace()
	left := grace - now.Sub(cond.LastTransitionTime.Time)
	switch {
	case task.Spec.Stop != "":
		meta.RemoveStatusCondition(&task.Status.Conditions, bastionv1.ConditionReady)
		r.transition(task, bastionv1.TaskStopped, "stopped before it started")
		return true, ctrl.Result{}, nil
	case left <= 0:
		meta.RemoveStatusCondition(&task.Status.Conditions, bastionv1.ConditionReady)
		r.transition(task, bastionv1.TaskError, fmt.Sprintf("%s not found (waited %s for it)", missing, grace))
		return true, ctrl.Result{}, nil
	}
	cond.Reason = reason
	cond.Message = fmt.Sprintf("waiting for %s, which does not exist yet; the task fails if it is still missing %s after it was created",
		missing, grace)
	task.Status.Status = bastionv1.TaskWaiting
	return true, ctrl.Result{RequeueAfter: min(left, inputRecheck)}, nil
}

// waitCondition is the task's Ready condition if it says the task waits
// for inputs, else nil.
func waitCondition(task *bastionv1.Task) *metav1.Condition {
	cond := meta.FindStatusCondition(task.Status.Conditions, bastionv1.ConditionReady)
	if cond == nil || cond.Status != metav1.ConditionFalse ||
		(cond.Reason != bastionv1.ReasonWaitingForTemplate && cond.Reason != bastionv1.ReasonWaitingForInputs) {
		return nil
	}
	return cond
}

func (r *TaskReconciler) inputGrace() time.Duration {
	if r.InputGrace > 0 {
		return r.InputGrace
	}
	return DefaultInputGrace
}

// taskInput is one object a task needs; obj, when set, receives it so
// that what it refers to can be checked next.
type taskInput struct {
	kind kinds.Target
	ref  *bastionv1.ObjectRef
	obj  client.Object
}

// missingInput names the first object the task needs that does not exist
// ("template \"ping\""), with the reason to wait for it; "" when all do.
// Only existence is checked here: an input that exists but is wrong (a
// Secret that is not a key) is the run's error, as before.
func (r *TaskReconciler) missingInput(ctx context.Context, task *bastionv1.Task) (reason, missing string, err error) {
	template := &bastionv1.Template{}
	missing, err = r.firstMissing(ctx, task.Namespace, []taskInput{{kinds.RefTemplate, &task.Spec.TemplateRef, template}})
	if missing != "" || err != nil {
		return bastionv1.ReasonWaitingForTemplate, missing, err
	}
	if problem, err := r.taskRulesProblem(ctx, task, template); err != nil || problem != "" {
		// A task its template refuses fails at once (initialize says
		// why): no input that may still come would change that.
		return "", "", err
	}
	repo, env, inv := &bastionv1.Repository{}, &bastionv1.Environment{}, &bastionv1.Inventory{}
	inventory := task.Spec.InventoryRef
	if inventory == nil {
		inventory = template.Spec.InventoryRef
	}
	direct := []taskInput{
		{kinds.RefRepository, &template.Spec.RepositoryRef, repo}, {kinds.RefEnvironment, &template.Spec.EnvironmentRef, env},
		{kinds.RefInventory, inventory, inv}, {kinds.RefSecret, task.Spec.SecretRef, nil}, {refBuildTask, task.Spec.BuildTaskRef, nil},
	}
	for i := range template.Spec.Vaults {
		direct = append(direct, taskInput{kinds.RefKey, &template.Spec.Vaults[i].KeyRef, nil})
	}
	if missing, err = r.firstMissing(ctx, task.Namespace, direct); missing != "" || err != nil {
		return bastionv1.ReasonWaitingForInputs, missing, err
	}
	// What the inputs themselves refer to; an unset inventory is empty.
	indirect := []taskInput{
		{kinds.RefKey, &repo.Spec.SSHKeyRef, nil}, {kinds.RefSecret, env.Spec.SecretRef, nil},
		{kinds.RefKey, &inv.Spec.SSHKeyRef, nil}, {kinds.RefKey, inv.Spec.BecomeKeyRef, nil},
	}
	missing, err = r.firstMissing(ctx, task.Namespace, indirect)
	return bastionv1.ReasonWaitingForInputs, missing, err
}

// firstMissing reads each input that is named and returns the first that
// does not exist, as "<noun> \"<name>\"".
func (r *TaskReconciler) firstMissing(ctx context.Context, ns string, inputs []taskInput) (string, error) {
	for _, in := range inputs {
		if in.ref == nil || in.ref.Name == "" {
			continue
		}
		obj := in.obj
		if obj == nil {
			obj = newTarget(in.kind)
		}
		err := r.getInput(ctx, client.ObjectKey{Namespace: ns, Name: in.ref.Name}, obj)
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("%s %q", in.kind.Noun, in.ref.Name), nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", nil
}

// waitingForInputsField indexes the Tasks that wait for their template or
// inputs. A created object wakes only those: the manager's start "creates"
// every object of the cluster once, and listing every task of the
// namespace for each would make the start quadratic.
const waitingForInputsField = ".status.waitingForInputs"

func indexWaitingForInputs(o client.Object) []string {
	if t, ok := o.(*bastionv1.Task); ok && t.Status.Status == bastionv1.TaskWaiting && waitCondition(t) != nil {
		return []string{"true"}
	}
	return nil
}

// inputWaker wakes the tasks of a namespace that wait for inputs when an
// object that may be one of them is created.
func (r *TaskReconciler) inputWaker() handler.Funcs {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			list := &bastionv1.TaskList{}
			if err := r.List(ctx, list, client.InNamespace(e.Object.GetNamespace()),
				client.MatchingFields{waitingForInputsField: "true"}, client.UnsafeDisableDeepCopy); err != nil {
				log.FromContext(ctx).Error(err, "listing tasks that wait for inputs")
				return
			}
			for i := range list.Items {
				q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
		},
	}
}
