package hub

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestLog_encodesTheContractFrameLikeEncodingJSON(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890, time.FixedZone("x", 3600))
	for _, output := range []string{
		"", "PLAY [all] ****", `quote " and \ backslash`, "tab\tnewline\n",
		"<script>&</script>", "ünïcödé ✓", "bad utf-8 \xff\xfe", "\x00\x1f",
	} {
		m := Log(3, 42, at, output)
		want, _ := json.Marshal(map[string]any{
			"type": "log", "task_id": 42, "project_id": 3, "time": at, "output": output,
		})
		var got, exp map[string]any
		if err := json.Unmarshal(m.Frame, &got); err != nil {
			t.Fatalf("%q: invalid JSON %s: %v", output, m.Frame, err)
		}
		_ = json.Unmarshal(want, &exp)
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("%q:\n got %s\nwant %s", output, m.Frame, want)
		}
		if m.Type != "log" || m.ProjectID != 3 || m.TaskID != 42 {
			t.Errorf("message header %+v", m)
		}
	}
}

// A stderr line's frame gains "stream":"stderr"; a stdout line's is
// byte for byte Log's, so Semaphore's web UI sees no new key.
func TestLogLine_addsTheStreamOnlyToAStderrLine(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	if out, plain := LogLine(3, 42, at, "ok", false), Log(3, 42, at, "ok"); string(out.Frame) != string(plain.Frame) {
		t.Errorf("stdout frame %s, want %s", out.Frame, plain.Frame)
	}
	want := `{"type":"log","task_id":42,"project_id":3,"time":"2026-03-04T05:06:07Z","output":"boom \"x\"","stream":"stderr"}`
	if m := LogLine(3, 42, at, `boom "x"`, true); string(m.Frame) != want {
		t.Errorf("stderr frame\n got %s\nwant %s", m.Frame, want)
	}
}

func TestUpdate_encodesTheContractFrameWithNulls(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	v := "1.0.3"
	m := Update(TaskUpdate{TaskID: 9, ProjectID: 2, TemplateID: 5, Status: "running", Start: &start, Version: &v})
	want := `{"type":"update","task_id":9,"project_id":2,"template_id":5,"status":"running",` +
		`"start":"2026-01-02T03:04:05Z","end":null,"version":"1.0.3"}`
	if string(m.Frame) != want {
		t.Errorf("frame\n got %s\nwant %s", m.Frame, want)
	}
	if m.Type != "update" || m.ProjectID != 2 || m.TaskID != 9 {
		t.Errorf("message header %+v", m)
	}
}
