package apiserver

import (
	"testing"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// A running task's checkout is what its runner reported (status.run),
// before the controller copies it into status.commitHash (two seconds after
// the run started; controllers: commitShowsAfter).
func TestTaskJSON_theCheckoutIsTheRunnersReportBeforeItIsCopied(t *testing.T) {
	task := &bastionv1.Task{Status: bastionv1.TaskStatus{Status: bastionv1.TaskRunning,
		Run: &bastionv1.TaskRun{Commit: &bastionv1.TaskRunCommit{Hash: "feedf00d", Message: "Later"}}}}
	v := &taskView{templates: map[string]*bastionv1.Template{}, users: map[string]*bastionv1.User{}, refs: map[string]map[string]int64{}}
	got := v.task(&taskEntry{id: 1, task: task})
	if got.CommitHash != "feedf00d" || got.CommitMessage != "Later" {
		t.Fatalf("commit %q %q, want the runner's report", got.CommitHash, got.CommitMessage)
	}
}
