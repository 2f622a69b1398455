package apiserver_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

func TestTasks_outputPagesStreamsAndDownloadsByteForByte(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	tpl := p.createTemplate(t, "Chatty", nil)
	task := p.startTask(t, map[string]any{"template_id": tpl.ID})
	key := store.TaskKey{ProjectID: p.pid, TaskID: task.ID}

	const n = 2500 // more than one page of the store's stream and of ?offset=
	base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	lines := make([]store.Line, n)
	for i := range lines {
		lines[i] = store.Line{Seq: int64(i + 1), Time: base.Add(time.Duration(i) * time.Millisecond), Output: fmt.Sprintf("line %d: ok \t→ done", i+1),
			Stderr: i%7 == 3}
	}
	lines[7].Output = "not utf-8: \xff\xfe"
	lines[8].Output = ""
	lines[9].Output = `quotes " and \ backslash <b>`
	if err := e.Store.AppendLines(t.Context(), key, lines); err != nil {
		t.Fatal(err)
	}

	type record struct {
		TaskID int64     `json:"task_id"`
		Task   string    `json:"task"`
		Time   time.Time `json:"time"`
		Output string    `json:"output"`
		Stream string    `json:"stream"`
	}
	read := func(query string) []record {
		var out []record
		p.b.must("GET", p.path("/tasks/%d/output%s", task.ID, query), nil, http.StatusOK, &out)
		return out
	}
	check := func(what string, got []record, from, count int) {
		t.Helper()
		if len(got) != count {
			t.Fatalf("%s: %d lines, want %d", what, len(got), count)
		}
		for i, r := range got {
			l := lines[from+i]
			want := string([]rune(l.Output)) // JSON carries each invalid byte as U+FFFD
			if r.TaskID != task.ID || r.Output != want || !r.Time.Equal(l.Time) || r.Task != "" || r.Stream != l.Stream() {
				t.Fatalf("%s: line %d = %+v, want %q at %v", what, i, r, want, l.Time)
			}
		}
	}
	check("whole log", read(""), 0, n)
	check("a page", read("?offset=5&limit=3"), 5, 3)
	check("from an offset", read("?offset=1200"), 1200, n-1200)
	check("past the end", read("?offset=5000&limit=10"), 0, 0)
	check("the last lines", read("?offset=2490&limit=100"), 2490, 10)
	// A stdout line keeps Semaphore's exact shape; only a stderr line
	// gains "stream".
	for offset, want := range map[int]string{0: `"output":"line 1: ok \t→ done"}]`, 3: `"output":"line 4: ok \t→ done","stream":"stderr"}]`} {
		if code, data := p.b.call("GET", p.path("/tasks/%d/output?offset=%d&limit=1", task.ID, offset), nil); code != http.StatusOK || !strings.HasSuffix(strings.TrimSpace(string(data)), want) {
			t.Errorf("line %d as JSON = %d %s, want it to end %s", offset+1, code, data, want)
		}
	}
	// The stderr line numbers, all of them, in order: 4, 11, 18, …
	var stderr []int64
	p.b.must("GET", p.path("/tasks/%d/stderr", task.ID), nil, http.StatusOK, &stderr)
	if len(stderr) != (n+3)/7 {
		t.Fatalf("stderr lines: %d, want %d", len(stderr), (n+3)/7)
	}
	for i, seq := range stderr {
		if seq != int64(7*i+4) {
			t.Fatalf("stderr line %d is %d, want %d", i, seq, 7*i+4)
		}
	}
	for _, bad := range []string{"?limit=0", "?limit=10001", "?offset=-1", "?offset=x"} {
		if code, data := p.b.call("GET", p.path("/tasks/%d/output%s", task.ID, bad), nil); code != http.StatusBadRequest {
			t.Errorf("output%s = %d %s, want 400", bad, code, data)
		}
	}

	// The raw download is every line, byte for byte, newline-ended.
	req, _ := http.NewRequestWithContext(t.Context(), "GET", e.URL+p.path("/tasks/%d/raw", task.ID), nil)
	resp, err := p.b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var want strings.Builder
	for _, l := range lines {
		want.WriteString(l.Output + "\n")
	}
	if resp.StatusCode != http.StatusOK || body == nil || string(body) != want.String() {
		t.Fatalf("raw = %d, %d bytes; want %d bytes exactly", resp.StatusCode, len(body), want.Len())
	}
	if ct, cd := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"); ct != "text/plain; charset=utf-8" ||
		cd != fmt.Sprintf(`attachment; filename="task-%d.log"`, task.ID) {
		t.Errorf("raw headers: Content-Type %q, Content-Disposition %q", ct, cd)
	}

	// A task without output has an empty log.
	quiet := p.startTask(t, map[string]any{"template_id": tpl.ID})
	var none []record
	p.b.must("GET", p.path("/tasks/%d/output", quiet.ID), nil, http.StatusOK, &none)
	if none == nil || len(none) != 0 {
		t.Errorf("output of a quiet task = %v, want []", none)
	}
	if code, _ := p.b.call("GET", p.path("/tasks/%d/output", 999999), nil); code != http.StatusNotFound {
		t.Errorf("output of a task that never was = %d, want 404", code)
	}
}

func TestTasks_aPrunedTaskIsServedFromItsSummary(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	// Made in the cluster, so that the summary is in the store before the
	// API first reads the project's history.
	tpl := p.makeTemplate(t, "old", "Old")
	start, end := time.Now().Add(-2*time.Hour).UTC().Truncate(time.Microsecond), time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	id := p.putSummary(t, store.TaskSummary{TemplateID: tpl.ID, Status: "error", Message: "exited with code 2", Version: "",
		CommitHash: "abc123", CommitMessage: "fix", UserName: p.owner.Name, Start: &start, End: &end,
		TplAlias: "Old", TplPlaybook: "site.yml"})
	if err := e.Store.AppendLines(t.Context(), store.TaskKey{ProjectID: p.pid, TaskID: id},
		[]store.Line{{Seq: 1, Time: start, Output: "PLAY [all]"}, {Seq: 2, Time: end, Output: "failed"}}); err != nil {
		t.Fatal(err)
	}

	var got apiTask
	p.b.must("GET", p.path("/tasks/%d", id), nil, http.StatusOK, &got)
	if got.ID != id || got.TemplateID != tpl.ID || got.Status != "error" || got.Message != "exited with code 2" ||
		got.CommitHash != "abc123" || got.Start == nil || !got.Start.Equal(start) || got.End == nil || !got.End.Equal(end) ||
		got.UserID == nil || *got.UserID != userIDOf(t, p.owner) || got.Environment != "{}" || got.Arguments != "[]" {
		t.Errorf("pruned task = %+v", got)
	}
	var output []struct {
		Output string `json:"output"`
	}
	p.b.must("GET", p.path("/tasks/%d/output", id), nil, http.StatusOK, &output)
	if len(output) != 2 || output[0].Output != "PLAY [all]" || output[1].Output != "failed" {
		t.Errorf("pruned task's output = %+v", output)
	}
	items := p.tasks(t, "/tasks/last")
	if len(items) != 1 || items[0].ID != id || items[0].TplAlias != "Old" || items[0].UserName == nil || *items[0].UserName != p.owner.Spec.Name {
		t.Errorf("list = %+v", items)
	}
	code, data := p.b.call("POST", p.path("/tasks/%d/stop", id), map[string]any{"force": true})
	if code != http.StatusConflict || errorOf(t, data) != fmt.Sprintf("task %d has already finished (error)", id) {
		t.Errorf("stopping a pruned task = %d %s", code, data)
	}
	p.b.must("DELETE", p.path("/tasks/%d", id), nil, http.StatusNoContent, nil)
	if code, _ := p.b.call("GET", p.path("/tasks/%d", id), nil); code != http.StatusNotFound {
		t.Errorf("GET after delete = %d", code)
	}
	if items := p.tasks(t, "/tasks"); len(items) != 0 {
		t.Errorf("list after delete = %+v", items)
	}
}
