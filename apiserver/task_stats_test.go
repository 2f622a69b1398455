package apiserver_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

type apiTaskDay struct {
	Date    string `json:"date"`
	Success int64  `json:"success"`
	Failed  int64  `json:"failed"`
	Stopped int64  `json:"stopped"`
}

type apiTaskStats struct {
	Days      int          `json:"days"`
	UTCOffset int          `json:"utc_offset"`
	Items     []apiTaskDay `json:"items"`
}

type apiDurations struct {
	Items []struct {
		TaskID   int64      `json:"task_id"`
		Status   string     `json:"status"`
		Start    *time.Time `json:"start"`
		End      *time.Time `json:"end"`
		Duration *float64   `json:"duration"`
	} `json:"items"`
	NextBefore int64 `json:"next_before"`
}

// History's chart: the stored summaries counted per day of the reader's
// time zone and result, every day present, oldest first; older tasks,
// other projects' and unfinished ones left out; bad input refused.
func TestTaskStats_countsTheLastDaysByResultInTheReadersTimeZone(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	other := newTplProject(t, e)
	tpl := p.makeTemplate(t, "stats", "Stats")
	mine := p.pid
	now := time.Now().UTC()
	east := time.FixedZone("UTC+3", 3*3600)
	// The counts each day should have, from the reader's dates of the
	// tasks (whenever the test runs, midnight included).
	want := map[string]*apiTaskDay{}
	put := func(p *tplProject, status string, created time.Time) {
		p.putSummary(t, store.TaskSummary{TemplateID: tpl.ID, Status: status, Created: created})
		if p.pid != mine {
			return
		}
		date := created.In(east).Format(time.DateOnly)
		if want[date] == nil {
			want[date] = &apiTaskDay{Date: date}
		}
		switch status {
		case "success":
			want[date].Success++
		case "error":
			want[date].Failed++
		case "stopped":
			want[date].Stopped++
		}
	}
	put(p, "success", now.Add(-time.Minute))
	put(p, "error", now.Add(-2*time.Minute))
	put(p, "stopped", now.Add(-3*time.Minute))
	put(p, "success", now.AddDate(0, 0, -2))
	put(p, "success", now.AddDate(0, 0, -40)) // outside 30 days
	put(p, "running", now.Add(-time.Minute))  // not a result
	put(other, "error", now.Add(-time.Minute))

	var got apiTaskStats
	p.b.must("GET", p.path("/stats/tasks?utc_offset=180"), nil, http.StatusOK, &got)
	if got.Days != 30 || got.UTCOffset != 180 || len(got.Items) != 30 {
		t.Fatalf("stats = %+v, want 30 days at +180", got)
	}
	today := now.In(east)
	total := 0
	for i, d := range got.Items {
		w := apiTaskDay{Date: today.AddDate(0, 0, i-29).Format(time.DateOnly)}
		if c := want[w.Date]; c != nil {
			w = *c
			total++
		}
		if d != w {
			t.Errorf("day %d = %+v, want %+v", i, d, w)
		}
	}
	if total < 2 || total > 3 {
		t.Errorf("%d days had tasks, want the 2 (or 3 across midnight) of the last 30", total)
	}

	p.b.must("GET", p.path("/stats/tasks?days=7"), nil, http.StatusOK, &got)
	if len(got.Items) != 7 || got.Items[6].Date != now.Format(time.DateOnly) {
		t.Errorf("7 days in UTC = %+v", got.Items)
	}
	for _, q := range []string{"days=0", "days=91", "days=x", "utc_offset=841", "utc_offset=-841"} {
		code, body := p.b.call("GET", p.path("/stats/tasks?%s", q), nil)
		if code != http.StatusBadRequest || errorOf(t, body) == "" {
			t.Errorf("?%s = %d %s, want 400 with a message", q, code, body)
		}
	}
}

// The duration trend: a template's runs newest first, paged by task id
// until next_before is 0; other templates' runs never show, and a run
// stopped before it started has no duration.
func TestTaskStats_pagesATemplatesRunDurations(t *testing.T) {
	e := startEnv(t)
	p := newTplProject(t, e)
	tpl, otherTpl := p.makeTemplate(t, "trend", "Trend"), p.makeTemplate(t, "other", "Other")
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	var want []int64
	for i := range 5 {
		start, end := base.Add(time.Duration(i)*time.Minute), base.Add(time.Duration(i)*time.Minute+time.Duration(10+i)*time.Second)
		want = append([]int64{p.putSummary(t, store.TaskSummary{TemplateID: tpl.ID, Status: "success", Start: &start, End: &end})}, want...)
		p.putSummary(t, store.TaskSummary{TemplateID: otherTpl.ID, Status: "success", Start: &start, End: &end})
	}
	stopped := p.putSummary(t, store.TaskSummary{TemplateID: tpl.ID, Status: "stopped"})
	want = append([]int64{stopped}, want...)

	var got []int64
	before := int64(0)
	for page := 0; ; page++ {
		var d apiDurations
		q := "limit=4"
		if before != 0 {
			q += fmt.Sprintf("&before=%d", before)
		}
		p.b.must("GET", p.path("/templates/%d/durations?%s", tpl.ID, q), nil, http.StatusOK, &d)
		for _, it := range d.Items {
			got = append(got, it.TaskID)
			switch {
			case it.TaskID == stopped && (it.Duration != nil || it.Status != "stopped"):
				t.Errorf("a run stopped before it started = %+v, want no duration", it)
			case it.TaskID != stopped && (it.Duration == nil || *it.Duration != it.End.Sub(*it.Start).Seconds()):
				t.Errorf("run %d: duration %v, want end − start", it.TaskID, it.Duration)
			}
		}
		if d.NextBefore == 0 {
			break
		}
		if page > 3 {
			t.Fatalf("paging does not end: %v", got)
		}
		before = d.NextBefore
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("runs = %v, want %v", got, want)
	}
	for _, q := range []string{"limit=0", "limit=201", "before=0", "before=x"} {
		code, body := p.b.call("GET", p.path("/templates/%d/durations?%s", tpl.ID, q), nil)
		if code != http.StatusBadRequest || errorOf(t, body) == "" {
			t.Errorf("?%s = %d %s, want 400 with a message", q, code, body)
		}
	}
}
