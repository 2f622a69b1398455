package controllers

import (
	"testing"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/runproto"
	"github.com/bastion-dev/bastion/internal/runtoken"
)

// What a run's wait for its runner's report of the end keeps in memory
// goes whichever way the task leaves the wait: stopped, finished, deleted.
func TestAwaitReport_leavesNothingBehind(t *testing.T) {
	r := &TaskReconciler{Tokens: &runtoken.Book{}}
	task := &bastionv1.Task{}
	task.UID = "waiting"
	task.Status.Run = &bastionv1.TaskRun{Phase: runproto.PhaseRunning}
	held := func() bool { _, ok := r.unreported.Load(task.UID); return ok }

	if wait := r.awaitReport(task, false); wait <= 0 || !held() {
		t.Fatalf("a reporting run seen ended: wait %s, held %v; want a wait", wait, held())
	}
	if wait := r.awaitReport(task, true); wait != 0 || held() {
		t.Fatalf("stopping: wait %s, held %v; want none and nothing held", wait, held())
	}
	r.awaitReport(task, false)
	r.Tokens.Put(task.UID, "token")
	r.forgetRun(task)
	if _, ok := r.Tokens.Take(task.UID); ok || held() {
		t.Fatal("forgetRun left the run's wait or token behind")
	}
}
