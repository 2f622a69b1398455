// Package alert sends the alerts of finished tasks: an email to every
// project member who wants alerts, and a chat message (Telegram or an
// incoming webhook) to the project's chat. Deciding who gets what is a
// pure function (Decide); sending is asynchronous, through bounded queues
// with retries (Dispatcher), so a slow or dead mail server never delays
// the task engine.
package alert

import (
	"slices"
	"strings"
	"time"
)

// The task results an alert can be about (the Task's status values).
const (
	StatusSuccess = "success"
	StatusError   = "error"
	StatusStopped = "stopped"
	// StatusWaitingApproval is a task that waits for an approver (the
	// Task's waiting_confirmation before any run): its alert goes to the
	// approvers only, whatever the rules say of results.
	StatusWaitingApproval = "waiting_confirmation"
)

// Task is what an alert needs to know of a finished task. The task
// reconciler fills it from the Task, its Project, Template and the Users
// of the team.
type Task struct {
	ProjectID   int64
	ProjectName string
	// ProjectAlert is the project's "allow alerts" switch.
	ProjectAlert bool
	// AlertChat is the project's chat id ("" sends no chat message).
	AlertChat string

	TemplateName string
	// SuppressSuccess is the template's suppress_success_alerts.
	SuppressSuccess bool

	TaskID  int64
	Status  string // success, error, stopped or waiting_confirmation
	Version string
	// Message is the note the task was started with; Reason why it ended
	// as it did (the task's status message).
	Message, Reason string
	// StartedBy names who or what started the task.
	StartedBy  string
	Start, End time.Time

	// Members is the project's team; for a task waiting for approval, the
	// members who may approve it.
	Members []Member
}

// Member is a member of the project's team, with their user's settings.
type Member struct {
	Login, Email string
	// Alert is the user's "send alerts" switch.
	Alert bool
}

// Rules are the manager-wide settings of the decision.
type Rules struct {
	// OnStopped sends alerts for stopped tasks too (off by default: a
	// person stopped it, so nobody needs telling).
	OnStopped bool
}

// Plan is who gets an alert about one task.
type Plan struct {
	// Emails are the addresses that get an email, sorted, each once.
	Emails []string
	// Chat is the chat id that gets a message ("" for none).
	Chat string
}

// Empty reports whether nobody gets anything.
func (p Plan) Empty() bool { return len(p.Emails) == 0 && p.Chat == "" }

// Decide is who gets an alert about a finished task, whatever senders the
// manager has configured:
//   - nobody, if the project does not allow alerts;
//   - on error, always;
//   - on success, unless the template suppresses success alerts;
//   - on stop, only if the rules say so;
//   - when a task waits for approval, always (Members are its approvers);
//   - email to every member whose user has alerts on and an address;
//   - the chat message when the project has a chat id.
func Decide(t Task, r Rules) Plan {
	if !t.ProjectAlert || !wanted(t, r) {
		return Plan{}
	}
	var emails []string
	for _, m := range t.Members {
		if email := strings.TrimSpace(m.Email); m.Alert && email != "" {
			emails = append(emails, email)
		}
	}
	slices.Sort(emails)
	return Plan{Emails: slices.Compact(emails), Chat: strings.TrimSpace(t.AlertChat)}
}

func wanted(t Task, r Rules) bool {
	switch t.Status {
	case StatusError:
		return true
	case StatusSuccess:
		return !t.SuppressSuccess
	case StatusStopped:
		return r.OnStopped
	case StatusWaitingApproval:
		return true
	}
	return false
}
