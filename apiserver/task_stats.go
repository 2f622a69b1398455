package apiserver

import (
	"math"
	"net/http"
	"strconv"
	"time"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/store"
)

// History's charts (issue #23, docs/features.md "API contract beyond the
// spec"): tasks per day by result, and a template's run durations. Both
// read the stored task summaries, which every finished task has (the
// controller writes one when it finishes, retention keeps it after the Task
// object goes), so they cover pruned history without the task index.
// Members read them, like the history itself.

const (
	// statsMaxDays bounds ?days= of the daily counts: three months.
	statsMaxDays = 90
	// statsDefaultDays is the chart's 30 days.
	statsDefaultDays = 30
	// durationsDefaultLimit is a trend's first page.
	durationsDefaultLimit = 50
)

// taskDayJSON is one day of GET stats/tasks: how many tasks created that
// day ended in each result.
type taskDayJSON struct {
	Date    string `json:"date"` // YYYY-MM-DD, in the asked time zone
	Success int64  `json:"success"`
	Failed  int64  `json:"failed"`
	Stopped int64  `json:"stopped"`
}

type taskStatsJSON struct {
	Days      int           `json:"days"`
	UTCOffset int           `json:"utc_offset"`
	Items     []taskDayJSON `json:"items"`
}

// queryInt reads an optional integer query parameter within [min, max].
func queryInt(r *http.Request, name string, min, max, def int) (int, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < min || n > max {
		return 0, invalidf("%s must be a whole number from %d to %d, not %q", name, min, max, raw)
	}
	return n, nil
}

// taskStats serves GET /project/{id}/stats/tasks?days=30&utc_offset=60:
// every one of the last days (today included, oldest first, zeros kept so
// a chart needs no gap filling), with its tasks counted by result.
// utc_offset is the reader's time zone in minutes east of UTC, so that a
// day starts at their midnight.
func (s *Server) taskStats(w http.ResponseWriter, r *http.Request) {
	days, err := queryInt(r, "days", 1, statsMaxDays, statsDefaultDays)
	if err != nil {
		failErr(w, r, err)
		return
	}
	offset, err := queryInt(r, "utc_offset", -14*60, 14*60, 0)
	if err != nil {
		failErr(w, r, err)
		return
	}
	s.respondTaskStats(w, r, days, offset)
}

func (s *Server) respondTaskStats(w http.ResponseWriter, r *http.Request, days, offsetMinutes int) {
	offset := time.Duration(offsetMinutes) * time.Minute
	local := time.Now().UTC().Add(offset)
	first := time.Date(local.Year(), local.Month(), local.Day()-days+1, 0, 0, 0, 0, time.UTC)
	counts, err := s.opts.Store.TaskCountsByDay(r.Context(), projectOf(r).id, first.Add(-offset), offset)
	if err != nil {
		failErr(w, r, err)
		return
	}
	out := taskStatsJSON{Days: days, UTCOffset: offsetMinutes, Items: make([]taskDayJSON, days)}
	for i := range out.Items {
		out.Items[i].Date = first.AddDate(0, 0, i).Format(time.DateOnly)
	}
	for _, c := range counts {
		i := int(c.Day.Sub(first) / (24 * time.Hour))
		if i < 0 || i >= days {
			continue // created in the reader's future: a clock ahead
		}
		switch bastionv1.TaskStatusValue(c.Status) {
		case bastionv1.TaskSuccess:
			out.Items[i].Success += c.Count
		case bastionv1.TaskError:
			out.Items[i].Failed += c.Count
		case bastionv1.TaskStopped:
			out.Items[i].Stopped += c.Count
		}
	}
	respond(w, http.StatusOK, out)
}

// taskDurationJSON is one run of GET templates/{id}/durations.
type taskDurationJSON struct {
	TaskID  int64      `json:"task_id"`
	Status  string     `json:"status"`
	Created time.Time  `json:"created"`
	Start   *time.Time `json:"start"`
	End     *time.Time `json:"end"`
	// Duration is end − start in seconds; null for a task stopped before
	// it started.
	Duration *float64 `json:"duration"`
}

type taskDurationsJSON struct {
	Items []taskDurationJSON `json:"items"`
	// NextBefore is ?before= of the next (older) page; 0 on the last page.
	NextBefore int64 `json:"next_before"`
}

// templateDurations serves GET /project/{id}/templates/{template_id}/
// durations?limit=50&before=: the template's finished runs, newest first,
// paged by task id (a page's next_before is the next one's before), so a
// page costs one index range however old it is.
func (s *Server) templateDurations(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", 1, taskListLimit, durationsDefaultLimit)
	if err != nil {
		failErr(w, r, err)
		return
	}
	before, err := queryInt(r, "before", 1, math.MaxInt, 0)
	if err != nil {
		failErr(w, r, err)
		return
	}
	f := store.SummaryFilter{TemplateID: idOf(templateOf(r)), Before: int64(before)}
	runs, err := s.opts.Store.ListTaskSummaries(r.Context(), projectOf(r).id, f, 0, limit)
	if err != nil {
		failErr(w, r, err)
		return
	}
	out := taskDurationsJSON{Items: make([]taskDurationJSON, 0, len(runs))}
	for _, run := range runs {
		out.Items = append(out.Items, durationOf(run))
	}
	if len(runs) == limit {
		out.NextBefore = runs[len(runs)-1].TaskID
	}
	respond(w, http.StatusOK, out)
}

func durationOf(s store.TaskSummary) taskDurationJSON {
	d := taskDurationJSON{TaskID: s.TaskID, Status: s.Status, Created: s.Created, Start: s.Start, End: s.End}
	if s.Start != nil && s.End != nil {
		sec := s.End.Sub(*s.Start).Seconds()
		d.Duration = &sec
	}
	return d
}
