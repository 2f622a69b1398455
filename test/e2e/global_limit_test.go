package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/gitremote/gittest"
)

// The manager's global limit (--global-max-parallel-tasks) holds across
// projects: with a limit of 1, a task of a second project waits while a
// task of the first runs, starts only after it ended, and both succeed.
func TestDev_globalLimitRunsOneTaskAtATimeAcrossProjects(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t)
	repo.WriteFile("slow.sh", "#!/bin/bash\necho begin\nsleep 4\necho end\n", true)
	repo.Commit("slow")

	dev := startDev(t, t.TempDir(), "--global-max-parallel-tasks", "1")
	dev.waitReady()
	api := signedIn(t, dev.url, "admin", dev.bannerValue("password"))

	// One project with one bash template, as a user would make it.
	project := func(name string) (string, int64) {
		created := api.newLocalProject(name, repo.Path, "localhost\n")
		p := created.Path
		var template struct {
			ID int64 `json:"id"`
		}
		api.must("POST", p+"/templates", map[string]any{"name": "Slow", "app": "bash", "playbook": "slow.sh",
			"repository_id": created.Repository, "environment_id": created.Environment},
			http.StatusCreated, &template)
		return p, template.ID
	}
	firstPath, firstTemplate := project("First")
	secondPath, secondTemplate := project("Second")

	type task struct {
		ID     int64      `json:"id"`
		Status string     `json:"status"`
		Start  *time.Time `json:"start"`
		End    *time.Time `json:"end"`
	}
	var first, second task
	api.must("POST", firstPath+"/tasks", map[string]any{"template_id": firstTemplate}, http.StatusCreated, &first)
	api.must("POST", secondPath+"/tasks", map[string]any{"template_id": secondTemplate}, http.StatusCreated, &second)

	active := func(status string) bool {
		switch status {
		case "starting", "running", "stopping", "waiting_confirmation", "confirmed":
			return true
		}
		return false
	}
	sawSecondWait := false
	for deadline := time.Now().Add(2 * time.Minute); ; {
		api.must("GET", firstPath+"/tasks/"+itoa(first.ID), nil, http.StatusOK, &first)
		api.must("GET", secondPath+"/tasks/"+itoa(second.ID), nil, http.StatusOK, &second)
		if active(first.Status) && active(second.Status) {
			t.Fatalf("both tasks are active at once (%s, %s) under a global limit of 1", first.Status, second.Status)
		}
		if second.Status == "waiting" && active(first.Status) {
			sawSecondWait = true
		}
		if first.Status == "success" && second.Status == "success" {
			break
		}
		if first.Status == "error" || second.Status == "error" || time.Now().After(deadline) {
			t.Fatalf("tasks ended %s and %s", first.Status, second.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !sawSecondWait {
		t.Error("the second project's task never waited while the first ran")
	}
	if first.End == nil || second.Start == nil || second.Start.Before(*first.End) {
		t.Errorf("the second task started at %v, before the first ended at %v", second.Start, first.End)
	}
}
