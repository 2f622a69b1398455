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

// TestRunnerEvents_commitAndExitMessagesMeetTheLineCap: runproto's
// MaxLineBytes bounds a line "and a commit or exit message", and the
// manager answers 413 over it. A runner's token is readable by the task's
// own playbook, so a playbook could otherwise post a 1 MiB commit or exit
// message onto the Task (etcd, every replica's cache, every task list).
func TestRunnerEvents_commitAndExitMessagesMeetTheLineCap(t *testing.T) {
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

// TestRunnerEvents_messagesAtTheCapAreTaken: what the runner sends after
// clipping (exactly MaxLineBytes) is still taken, so the cap never costs
// an honest runner its batch.
func TestRunnerEvents_messagesAtTheCapAreTaken(t *testing.T) {
	full := strings.Repeat("x", runproto.MaxLineBytes)
	body, err := json.Marshal(runproto.Batch{
		Commit: &runproto.Commit{Hash: "abc", Message: full},
		Exit:   &runproto.Exit{Code: 1, Message: full},
	})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/tasks/ns/t/events", bytes.NewReader(body))
	if b, ok := readBatch(w, r); !ok || b.Exit == nil || b.Exit.Message != full {
		t.Fatalf("a batch with messages of exactly %d bytes: accepted %v, status %d", runproto.MaxLineBytes, ok, w.Code)
	}
}
