package hub

import (
	"encoding/json"
	"strconv"
	"time"
)

// Message is one live event. Frame is the JSON text frame of
// api-contract.md ("Websocket /api/ws"), encoded once by Update or Log and
// shared by every subscriber, so it must never be modified after Publish.
type Message struct {
	Type      string // "update" or "log"
	ProjectID int64
	TaskID    int64
	Frame     []byte
}

// TaskUpdate is what an "update" message says about a task. Start, End
// and Version are null until the task has them, as in the task resource.
type TaskUpdate struct {
	TaskID     int64
	ProjectID  int64
	TemplateID int64
	Status     string
	Start      *time.Time
	End        *time.Time
	Version    *string
}

// updateFrame fixes the field names and order of the contract's frame.
type updateFrame struct {
	Type       string     `json:"type"`
	TaskID     int64      `json:"task_id"`
	ProjectID  int64      `json:"project_id"`
	TemplateID int64      `json:"template_id"`
	Status     string     `json:"status"`
	Start      *time.Time `json:"start"`
	End        *time.Time `json:"end"`
	Version    *string    `json:"version"`
}

// Update encodes an "update" message: the console merges its fields into
// the task.
func Update(u TaskUpdate) Message {
	frame, err := json.Marshal(updateFrame{
		Type: "update", TaskID: u.TaskID, ProjectID: u.ProjectID, TemplateID: u.TemplateID,
		Status: u.Status, Start: u.Start, End: u.End, Version: u.Version,
	})
	if err != nil {
		// Only a time outside years 0..9999 fails to encode; send the
		// update without times rather than nothing.
		frame, _ = json.Marshal(updateFrame{Type: "update", TaskID: u.TaskID, ProjectID: u.ProjectID,
			TemplateID: u.TemplateID, Status: u.Status, Version: u.Version})
	}
	return Message{Type: "update", ProjectID: u.ProjectID, TaskID: u.TaskID, Frame: frame}
}

// Log encodes a "log" message: one output line. It is on the hot path (one
// per line of every running task), so it appends the frame by hand instead
// of going through reflection; the result is what encoding/json produces.
func Log(projectID, taskID int64, at time.Time, output string) Message {
	return LogLine(projectID, taskID, at, output, false)
}

// LogLine is Log for a line that may be from the program's stderr: its
// frame then says "stream":"stderr". A stdout line's frame is exactly
// Log's (Semaphore's web UI reads these frames).
func LogLine(projectID, taskID int64, at time.Time, output string, stderr bool) Message {
	b := make([]byte, 0, 96+len(output))
	b = append(b, `{"type":"log","task_id":`...)
	b = strconv.AppendInt(b, taskID, 10)
	b = append(b, `,"project_id":`...)
	b = strconv.AppendInt(b, projectID, 10)
	b = append(b, `,"time":"`...)
	b = at.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","output":`...)
	b = appendString(b, output)
	if stderr {
		b = append(b, `,"stream":"stderr"`...)
	}
	b = append(b, '}')
	return Message{Type: "log", ProjectID: projectID, TaskID: taskID, Frame: b}
}

// appendString appends s as a JSON string. Printable ASCII without quotes
// or backslashes (most output lines) is copied as is; anything else goes
// through encoding/json, so escapes and invalid UTF-8 are handled exactly
// as it does. Unlike encoding/json the fast path leaves <, > and & alone
// (ansible prints "=>" on every item): the frame is parsed as JSON, never
// embedded in HTML, so HTML escaping buys nothing.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			quoted, _ := json.Marshal(s) // a string always encodes
			return append(b, quoted...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
