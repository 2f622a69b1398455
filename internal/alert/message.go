package alert

import (
	"fmt"
	"strings"
	"time"
)

// TailLines is how many of the last output lines an email carries.
const TailLines = 20

// resultWord is a status as a person reads it in a subject.
func resultWord(status string) string {
	switch status {
	case StatusSuccess:
		return "succeeded"
	case StatusError:
		return "failed"
	case StatusStopped:
		return "was stopped"
	case StatusWaitingApproval:
		return "waits for approval"
	}
	return status
}

// Subject names the project, the template, the result and the version:
// "[Ops] Deploy failed (task #12, version 1.2.0)".
func Subject(t Task) string {
	detail := fmt.Sprintf("task #%d", t.TaskID)
	if t.Version != "" {
		detail += ", version " + t.Version
	}
	return fmt.Sprintf("[%s] %s %s (%s)", t.ProjectName, t.TemplateName, resultWord(t.Status), detail)
}

// TaskURL is the task in the console's history.
func TaskURL(publicURL string, t Task) string {
	return fmt.Sprintf("%s/project/%d/history?t=%d", strings.TrimRight(publicURL, "/"), t.ProjectID, t.TaskID)
}

// EmailBody is the text of the email: who started the task, when, how
// long it ran, its message, the last lines of its output and the link.
func EmailBody(t Task, tail []string, publicURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task #%d of %s in project %s %s.\n\n", t.TaskID, t.TemplateName, t.ProjectName, resultWord(t.Status))
	field := func(name, value string) {
		if value != "" {
			fmt.Fprintf(&b, "%-12s%s\n", name+":", value)
		}
	}
	field("Started by", t.StartedBy)
	if !t.Start.IsZero() {
		field("Started", t.Start.UTC().Format("2006-01-02 15:04:05 MST"))
	}
	field("Ran for", duration(t.Start, t.End))
	field("Version", t.Version)
	field("Message", t.Message)
	field("Result", t.Reason)
	switch {
	case t.Status == StatusWaitingApproval:
		b.WriteString("\nNothing runs until a project owner other than the one who started it approves it.\n")
	case len(tail) > 0:
		fmt.Fprintf(&b, "\nLast %d lines of output:\n\n", len(tail))
		for _, line := range tail {
			b.WriteString("    " + line + "\n")
		}
	default:
		b.WriteString("\nThe task printed no output.\n")
	}
	fmt.Fprintf(&b, "\nOpen the task: %s\n", TaskURL(publicURL, t))
	return b.String()
}

// ChatText is the short message for a chat: the subject, the message and
// the link. The output stays in the email and the console: chats limit a
// message's length and show it to everyone in the room.
func ChatText(t Task, publicURL string) string {
	lines := []string{Subject(t)}
	if t.StartedBy != "" {
		lines = append(lines, "Started by "+t.StartedBy)
	}
	if t.Message != "" {
		lines = append(lines, "Message: "+t.Message)
	}
	if t.Reason != "" {
		lines = append(lines, "Result: "+t.Reason)
	}
	return strings.Join(append(lines, TaskURL(publicURL, t)), "\n")
}

func duration(start, end time.Time) string {
	if start.IsZero() || end.IsZero() || end.Before(start) {
		return ""
	}
	return end.Sub(start).Round(time.Second).String()
}
