package controllers

import (
	"testing"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// How a run ended, by its runner's exit, the task's state and whether a
// stop was asked. The runner ends the program as soon as its stream's
// reply carries the stop, so its exit may be recorded before this
// reconciler saw the stop (the task still running): that run was stopped,
// not failed (Playwright's "a long bash task stops with Stop" met it). A
// success stays a success, however late a stop came.
func TestEndOf_aRunEndedByItsStopIsStoppedEvenBeforeTheTaskWasStopping(t *testing.T) {
	killed := &bastionv1.TaskRunExit{Code: 143}
	failed := &bastionv1.TaskRunExit{Code: 1, Message: "clone failed"}
	clean := &bastionv1.TaskRunExit{Code: 0}
	for _, c := range []struct {
		name   string
		status bastionv1.TaskStatusValue
		stop   bastionv1.StopRequest
		exit   *bastionv1.TaskRunExit
		want   bastionv1.TaskStatusValue
	}{
		{"killed by a stop the reconciler has not seen yet", bastionv1.TaskRunning, bastionv1.StopGraceful, killed, bastionv1.TaskStopped},
		{"killed while stopping", bastionv1.TaskStopping, bastionv1.StopGraceful, killed, bastionv1.TaskStopped},
		{"a failure with no stop asked", bastionv1.TaskRunning, "", failed, bastionv1.TaskError},
		{"a success with a stop asked after it", bastionv1.TaskRunning, bastionv1.StopGraceful, clean, bastionv1.TaskSuccess},
		{"a success with no stop", bastionv1.TaskRunning, "", clean, bastionv1.TaskSuccess},
	} {
		task := &bastionv1.Task{Spec: bastionv1.TaskSpec{Stop: c.stop}, Status: bastionv1.TaskStatus{Status: c.status}}
		if got, _ := endOf(task, c.exit); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
