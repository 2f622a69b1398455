package alert

import (
	"slices"
	"testing"
)

func TestDecide_followsTheProjectTemplateAndUserSwitches(t *testing.T) {
	team := []Member{
		{Login: "alice", Email: "alice@example.com", Alert: true},
		{Login: "bob", Email: "bob@example.com", Alert: false},
		{Login: "carol", Email: "", Alert: true},
		{Login: "alice2", Email: " alice@example.com ", Alert: true},
		{Login: "dave", Email: "dave@example.com", Alert: true},
	}
	everyone := []string{"alice@example.com", "dave@example.com"}
	task := func(mutate func(*Task)) Task {
		t := Task{ProjectAlert: true, AlertChat: "-100", Status: StatusError, Members: team}
		mutate(&t)
		return t
	}
	cases := []struct {
		name      string
		task      Task
		rules     Rules
		emails    []string
		chat      string
		wantEmpty bool
	}{
		{name: "error goes to every member with alert on, once each", task: task(func(*Task) {}), emails: everyone, chat: "-100"},
		{name: "a project with alert off sends nothing", task: task(func(t *Task) { t.ProjectAlert = false }), wantEmpty: true},
		{name: "success is sent", task: task(func(t *Task) { t.Status = StatusSuccess }), emails: everyone, chat: "-100"},
		{name: "success with suppress_success_alerts sends nothing", task: task(func(t *Task) { t.Status = StatusSuccess; t.SuppressSuccess = true }), wantEmpty: true},
		{name: "error with suppress_success_alerts is still sent", task: task(func(t *Task) { t.SuppressSuccess = true }), emails: everyone, chat: "-100"},
		{name: "stopped sends nothing by default", task: task(func(t *Task) { t.Status = StatusStopped }), wantEmpty: true},
		{name: "stopped is sent when the flag says so", task: task(func(t *Task) { t.Status = StatusStopped }), rules: Rules{OnStopped: true}, emails: everyone, chat: "-100"},
		{name: "a task that has not finished sends nothing", task: task(func(t *Task) { t.Status = "running" }), wantEmpty: true},
		{name: "a task waiting for approval is sent, whatever the result switches say", task: task(func(t *Task) { t.Status = StatusWaitingApproval; t.SuppressSuccess = true }), emails: everyone, chat: "-100"},
		{name: "a task waiting for approval in a project with alert off sends nothing", task: task(func(t *Task) { t.Status = StatusWaitingApproval; t.ProjectAlert = false }), wantEmpty: true},
		{name: "no chat id, no chat message", task: task(func(t *Task) { t.AlertChat = "  " }), emails: everyone},
		{name: "nobody with alert on: chat only", task: task(func(t *Task) { t.Members = team[1:3] }), chat: "-100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := Decide(c.task, c.rules)
			if plan.Empty() != c.wantEmpty {
				t.Fatalf("Empty() = %v, want %v (plan %+v)", plan.Empty(), c.wantEmpty, plan)
			}
			if !slices.Equal(plan.Emails, c.emails) || plan.Chat != c.chat {
				t.Fatalf("plan = %+v, want emails %v chat %q", plan, c.emails, c.chat)
			}
		})
	}
}
