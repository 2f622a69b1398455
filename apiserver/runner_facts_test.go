package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/runproto"
)

// The runner endpoint writes the facts of the run into status.run, under
// its own field manager, and nothing else of the status; the reconciler
// alone derives the task's state from them: the plan's wait, the user's
// confirmation (which the next reply carries), and the runner's exit with
// its message, with no pod status at all (the test's Jobs never run).
func TestRunnerFacts_theEndpointRecordsFactsAndTheReconcilerDerivesTheStatus(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	tpl := p.createTemplate(t, "Plan", nil)
	lt := startLiveTask(t, p, tpl.ID)

	post := func(b runproto.Batch) runproto.Reply {
		t.Helper()
		body, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		code, answer := postBatch(t, e, lt, lt.token, body)
		if code != http.StatusOK {
			t.Fatalf("batch %+v = %d %s", b, code, answer)
		}
		var reply runproto.Reply
		if err := json.Unmarshal([]byte(answer), &reply); err != nil {
			t.Fatal(err)
		}
		return reply
	}

	post(runproto.Batch{Lines: []runproto.Line{lineAt(1, "planning")}, Phase: runproto.PhaseWaitingConfirmation,
		Commit: &runproto.Commit{Hash: "0123abcd", Message: "Fix"}})
	task := p.waitStatus(t, lt.id, bastionv1.TaskWaitingConfirmation)
	if run := task.Status.Run; run == nil || run.Phase != runproto.PhaseWaitingConfirmation || run.Commit == nil || run.Commit.Hash != "0123abcd" {
		t.Errorf("status.run = %+v", task.Status.Run)
	}
	owners := map[string]string{}
	for _, m := range task.ManagedFields {
		if m.Subresource == "status" && m.FieldsV1 != nil {
			owners[m.Manager] += string(m.FieldsV1.Raw)
		}
	}
	if fields := owners[bastionv1.RunFieldManager]; !strings.Contains(fields, `"f:run"`) || strings.Contains(fields, `"f:status":{}`) ||
		strings.Contains(fields, `"f:conditions"`) || strings.Contains(fields, `"f:end"`) {
		t.Errorf("the runner endpoint owns %s, want status.run alone", fields)
	}

	if reply := post(runproto.Batch{}); reply.Confirm {
		t.Error("a reply confirms before the user did")
	}
	p.b.must("POST", p.path("/tasks/%d/confirm", lt.id), nil, http.StatusNoContent, nil)
	if reply := post(runproto.Batch{}); !reply.Confirm {
		t.Error("the reply after the user's confirmation does not carry it")
	}
	p.waitStatus(t, lt.id, bastionv1.TaskConfirmed)
	post(runproto.Batch{Phase: runproto.PhaseRunning})
	p.waitStatus(t, lt.id, bastionv1.TaskRunning)

	post(runproto.Batch{Lines: []runproto.Line{lineAt(2, "applying"), lineAt(3, "failed")},
		Exit: &runproto.Exit{Code: 3, Message: "terraform exited with code 3"}})
	var got apiTask
	eventually(t, 20*time.Second, func() (bool, string) {
		p.b.must("GET", p.path("/tasks/%d", lt.id), nil, http.StatusOK, &got)
		return got.Status == "error" && got.Message == "terraform exited with code 3",
			fmt.Sprintf("task %d is %q (%s), want error with the runner's message", lt.id, got.Status, got.Message)
	})
	task = p.taskObject(t, lt.id)
	if exit := task.Status.Run.Exit; exit == nil || exit.Code != 3 || exit.Lines != 3 {
		t.Errorf("status.run.exit = %+v, want code 3 after 3 lines", exit)
	}
	if task.Status.CommitHash != "0123abcd" || task.Status.End == nil {
		t.Errorf("the derived status = %+v", task.Status)
	}
}

// The checkout a runner reports shows in the API at once, from status.run;
// the reconciler copies it into status.commitHash two seconds after the run
// started (or with its end, sooner), so that a short run's end carries it
// instead of a write of its own that met the runner's next report.
func TestRunnerFacts_theReportedCommitShowsAtOnceAndIsCopiedLater(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	tpl := p.createTemplate(t, "Checkout", nil)
	lt := startLiveTask(t, p, tpl.ID)
	body, err := json.Marshal(runproto.Batch{Phase: runproto.PhaseRunning, Commit: &runproto.Commit{Hash: "feedf00d", Message: "Later"}})
	if err != nil {
		t.Fatal(err)
	}
	if code, answer := postBatch(t, e, lt, lt.token, body); code != http.StatusOK {
		t.Fatalf("batch = %d %s", code, answer)
	}
	// Not copied yet while the run is under a second old; ask the
	// object after the API, which may lag it, never the other way round.
	copiedEarly := func(task *bastionv1.Task) bool {
		young := task.Status.Start == nil || time.Since(task.Status.Start.Time) < 500*time.Millisecond
		return young && task.Status.CommitHash != ""
	}
	var got apiTask
	eventually(t, 5*time.Second, func() (bool, string) {
		p.b.must("GET", p.path("/tasks/%d", lt.id), nil, http.StatusOK, &got)
		return got.CommitHash == "feedf00d" && got.CommitMessage == "Later",
			fmt.Sprintf("the API shows commit %q %q", got.CommitHash, got.CommitMessage)
	})
	if task := p.taskObject(t, lt.id); copiedEarly(task) {
		t.Errorf("the API showed the commit only once status.commitHash had it: %+v", task.Status)
	}
	if task := p.waitStatus(t, lt.id, bastionv1.TaskRunning); copiedEarly(task) {
		t.Errorf("status.commitHash is %q as the run starts, want it copied seconds later", task.Status.CommitHash)
	}
	eventually(t, 5*time.Second, func() (bool, string) {
		task := p.taskObject(t, lt.id)
		return task.Status.CommitHash == "feedf00d" && task.Status.CommitMessage == "Later",
			fmt.Sprintf("status.commitHash is %q %q", task.Status.CommitHash, task.Status.CommitMessage)
	})
}
