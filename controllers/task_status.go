package controllers

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// commitShowsAfter is when a running task's checkout, which its runner
// reports once it has cloned, is copied into status.commitHash: this long
// after the run started (whose time is kept to the second), or with its
// end if that comes first. Copied at once, it was a write of its own in
// every short run, which mostly met the runner's report of the end (a
// conflict, and a reconcile again); a short run's end now carries it
// (docs/benchmarks.md, "Seventh round").
// The API shows the runner's report (status.run.commit) at once.
const commitShowsAfter = 2 * time.Second

// deriveReported sets what a task's status reports of itself: the
// generation it was derived from, the checkout the runner reported (see
// commitShowsAfter, for which it may ask result to come back), and the
// Ready condition that sums the state up.
func deriveReported(task *bastionv1.Task, now time.Time, result *ctrl.Result, err *error) {
	if task.Status.Status == "" {
		return // not initialized: nothing was derived yet
	}
	task.Status.ObservedGeneration = task.Generation
	if waitCondition(task) != nil {
		// While the task waits for its template or inputs, Ready says
		// which one, and its transition time starts the grace period
		// (awaitInputs, task_wait.go).
		return
	}
	if run := task.Status.Run; run != nil && run.Commit != nil &&
		(task.Status.CommitHash != run.Commit.Hash || task.Status.CommitMessage != run.Commit.Message) {
		wait := time.Duration(0)
		if !task.Status.Status.Finished() && task.Status.Start != nil {
			wait = commitShowsAfter - now.Sub(task.Status.Start.Time)
		}
		if wait <= 0 {
			task.Status.CommitHash, task.Status.CommitMessage = run.Commit.Hash, run.Commit.Message
		} else if *err == nil && (result.RequeueAfter == 0 || wait < result.RequeueAfter) {
			result.RequeueAfter = wait
		}
	}
	status, reason := readiness(task.Status.Status)
	message := ""
	if task.Status.Status.Finished() {
		message = task.Status.Message
	}
	setTaskCondition(task, bastionv1.ConditionReady, status, reason, message)
}

// readiness is a task's Ready condition: True once it succeeded, False
// once it failed or was stopped, Unknown while it waits or runs, with
// the state as the reason (kubectl wait --for=condition=Ready waits for a
// successful end, and fails at once on any other).
func readiness(s bastionv1.TaskStatusValue) (metav1.ConditionStatus, string) {
	switch s {
	case bastionv1.TaskSuccess:
		return metav1.ConditionTrue, "Succeeded"
	case bastionv1.TaskError:
		return metav1.ConditionFalse, "Failed"
	case bastionv1.TaskStopped:
		return metav1.ConditionFalse, "Stopped"
	}
	return metav1.ConditionUnknown, taskStateReasons[s]
}

// taskStateReasons are the unfinished states as condition reasons.
var taskStateReasons = map[bastionv1.TaskStatusValue]string{
	bastionv1.TaskWaiting:             "Waiting",
	bastionv1.TaskStarting:            "Starting",
	bastionv1.TaskWaitingConfirmation: "WaitingConfirmation",
	bastionv1.TaskConfirmed:           "Confirmed",
	bastionv1.TaskRunning:             "Running",
	bastionv1.TaskStopping:            "Stopping",
}
