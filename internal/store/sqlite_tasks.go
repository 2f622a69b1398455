package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

var sqliteSummaryUpsert = summaryUpsertSQL(func(int) string { return "?" })

func (s *sqliteStore) PutTaskSummary(ctx context.Context, sum TaskSummary) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := checkSummary(sum); err != nil {
		return err
	}
	sum = cleanSummary(sum)
	args := summaryValues(sum, func(t time.Time) any { return micros(t) }, microsPtr)
	if _, err := s.w.ExecContext(ctx, sqliteSummaryUpsert, args...); err != nil {
		return s.failTask("put summary", TaskKey{sum.ProjectID, sum.TaskID}, err)
	}
	return nil
}

const sqliteSummarySelect = "SELECT project_id, task_id, template_id, status, message, version, commit_hash, commit_message, user_name, " +
	"tpl_type, tpl_app, tpl_alias, tpl_playbook, user_id, build_task_id, schedule_id, integration_id, " +
	"created, start_time, end_time FROM task_summaries "

// scanSQLiteSummary turns the stored microseconds back into times.
func scanSQLiteSummary(scan func(...any) error) (TaskSummary, error) {
	var sum TaskSummary
	var created int64
	var start, end sql.NullInt64
	if err := scan(summaryDest(&sum, &created, &start, &end)...); err != nil {
		return sum, err
	}
	sum.Created = fromMicros(created)
	for _, p := range []struct {
		v   sql.NullInt64
		dst **time.Time
	}{{start, &sum.Start}, {end, &sum.End}} {
		if p.v.Valid {
			t := fromMicros(p.v.Int64)
			*p.dst = &t
		}
	}
	return sum, nil
}

func (s *sqliteStore) TaskSummary(ctx context.Context, task TaskKey) (TaskSummary, error) {
	if err := s.check(); err != nil {
		return TaskSummary{}, err
	}
	row := s.r.QueryRowContext(ctx, sqliteSummarySelect+"WHERE project_id = ? AND task_id = ?", task.ProjectID, task.TaskID)
	sum, err := scanSQLiteSummary(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return TaskSummary{}, s.failTask("read summary", task, ErrNotFound)
	}
	if err != nil {
		return TaskSummary{}, s.failTask("read summary", task, err)
	}
	return sum, nil
}

func (s *sqliteStore) ListTaskSummaries(ctx context.Context, projectID int64, f SummaryFilter, offset, limit int) ([]TaskSummary, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := checkPage(offset, limit); err != nil {
		return nil, err
	}
	q := sqliteSummarySelect + "WHERE project_id = ?"
	args := []any{projectID}
	if f.TemplateID != 0 {
		q += " AND template_id = ?"
		args = append(args, f.TemplateID)
	}
	if f.Status != "" {
		q += " AND status = ?"
		args = append(args, f.Status)
	}
	if f.Before != 0 {
		q += " AND task_id < ?"
		args = append(args, f.Before)
	}
	q += " ORDER BY task_id DESC LIMIT ? OFFSET ?"
	rows, err := s.r.QueryContext(ctx, q, append(args, limit, offset)...)
	if err != nil {
		return nil, s.fail("list summaries", err)
	}
	defer rows.Close()
	out := []TaskSummary{}
	for rows.Next() {
		sum, err := scanSQLiteSummary(rows.Scan)
		if err != nil {
			return nil, s.fail("list summaries", err)
		}
		out = append(out, sum)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("list summaries", err)
	}
	return out, nil
}

func (s *sqliteStore) TaskCountsByDay(ctx context.Context, projectID int64, since time.Time, offset time.Duration) ([]DayCount, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := checkDayOffset(offset); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, "SELECT (created + ?) / ? AS day, status, COUNT(*) FROM task_summaries "+
		"WHERE project_id = ? AND created >= ? GROUP BY day, status ORDER BY day, status",
		offset.Microseconds(), microsPerDay, projectID, micros(since))
	if err != nil {
		return nil, s.fail("count tasks by day", err)
	}
	defer rows.Close()
	out, err := scanDayCounts(rows)
	if err != nil {
		return nil, s.fail("count tasks by day", err)
	}
	return out, nil
}

func (s *sqliteStore) DeleteTask(ctx context.Context, task TaskKey) error {
	if err := s.check(); err != nil {
		return err
	}
	defer s.tail.deleted(task) // once the lines are gone, not before
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.failTask("delete", task, err)
	}
	defer tx.Rollback()
	for _, table := range []string{"task_chunks", "task_output", "task_summaries"} {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE project_id = ? AND task_id = ?", task.ProjectID, task.TaskID); err != nil {
			return s.failTask("delete from "+table, task, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.failTask("delete", task, err)
	}
	return nil
}

func (s *sqliteStore) AddEvent(ctx context.Context, e Event) (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	e = cleanEvent(e)
	var id int64
	err := s.w.QueryRowContext(ctx, "INSERT INTO events ("+eventColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
		eventValues(e, micros(e.Created))...).Scan(&id)
	if err != nil {
		return 0, s.fail("add event", err)
	}
	return id, nil
}

func (s *sqliteStore) Events(ctx context.Context, projectIDs []int64, limit int) ([]Event, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := checkPage(0, limit); err != nil {
		return nil, err
	}
	if projectIDs != nil && len(projectIDs) == 0 {
		return []Event{}, nil
	}
	q := "SELECT id, " + eventColumns + " FROM events"
	var args []any
	if projectIDs != nil {
		// One JSON parameter instead of one per id: no limit on how many
		// projects a user may see.
		ids, _ := json.Marshal(projectIDs)
		q += " WHERE project_id IN (SELECT value FROM json_each(?))"
		args = append(args, string(ids))
	}
	rows, err := s.r.QueryContext(ctx, q+" ORDER BY created DESC, id DESC LIMIT ?", append(args, limit)...)
	if err != nil {
		return nil, s.fail("list events", err)
	}
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		var e Event
		var created int64
		if err := rows.Scan(eventDest(&e, &created)...); err != nil {
			return nil, s.fail("list events", err)
		}
		e.Created = fromMicros(created)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("list events", err)
	}
	return out, nil
}
