package apiserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bastion-dev/bastion/internal/runproto"
)

// Review of issue #19 (runner endpoint): runproto says MaxLineBytes
// bounds a line "and a commit or exit message", and that the manager
// answers 413 over it; readBatch checks only the lines. A runner's token is
// readable by the task's own playbook (its input), so a playbook can post
// a 1 MiB commit message or exit message: it goes onto the Task's status or
// annotations (etcd, the informer cache of every replica, every task list
// answer) instead of a 413.
func TestRunnerEvents_review_commitAndExitMessagesMeetTheLineCap(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	for name, batch := range map[string]runproto.Batch{
		"commit message": {Commit: &runproto.Commit{Hash: "abc", Message: big}},
		"commit hash":    {Commit: &runproto.Commit{Hash: big}},
		"exit message":   {Exit: &runproto.Exit{Code: 1, Message: big}},
	} {
		body, err := json.Marshal(batch)
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/tasks/ns/t/events", bytes.NewReader(body))
		if _, ok := readBatch(w, r); ok || w.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("a batch with a 1 MiB %s: accepted %v, status %d; want 413 as for a line over %d bytes", name, ok, w.Code, runproto.MaxLineBytes)
		}
	}
}
