package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

var postgresSummaryUpsert = summaryUpsertSQL(func(i int) string { return fmt.Sprintf("$%d", i) })

func (s *postgresStore) PutTaskSummary(ctx context.Context, sum TaskSummary) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := checkSummary(sum); err != nil {
		return err
	}
	sum = cleanSummary(sum)
	args := summaryValues(sum,
		func(t time.Time) any { return t.Truncate(time.Microsecond) },
		func(t *time.Time) any { return timePtr(t) })
	if _, err := s.pool.Exec(ctx, postgresSummaryUpsert, args...); err != nil {
		return s.failTask("put summary", TaskKey{sum.ProjectID, sum.TaskID}, err)
	}
	return nil
}

const postgresSummarySelect = "SELECT project_id, task_id, template_id, status, message, version, commit_hash, commit_message, user_name, " +
	"tpl_type, tpl_app, tpl_alias, tpl_playbook, user_id, build_task_id, schedule_id, integration_id, " +
	"created, start_time, end_time FROM task_summaries "

// scanPostgresSummary reads a row and puts its times in UTC, as SQLite's
// come back, whatever the session's time zone.
func scanPostgresSummary(row pgx.Row) (TaskSummary, error) {
	var sum TaskSummary
	if err := row.Scan(summaryDest(&sum, &sum.Created, &sum.Start, &sum.End)...); err != nil {
		return sum, err
	}
	sum.Created = sum.Created.UTC()
	sum.Start, sum.End = timePtr(sum.Start), timePtr(sum.End)
	return sum, nil
}

func (s *postgresStore) TaskSummary(ctx context.Context, task TaskKey) (TaskSummary, error) {
	if err := s.check(); err != nil {
		return TaskSummary{}, err
	}
	row := s.pool.QueryRow(ctx, postgresSummarySelect+"WHERE project_id = $1 AND task_id = $2", task.ProjectID, task.TaskID)
	sum, err := scanPostgresSummary(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return TaskSummary{}, s.failTask("read summary", task, ErrNotFound)
	}
	if err != nil {
		return TaskSummary{}, s.failTask("read summary", task, err)
	}
	return sum, nil
}

func (s *postgresStore) ListTaskSummaries(ctx context.Context, projectID int64, f SummaryFilter, offset, limit int) ([]TaskSummary, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := checkPage(offset, limit); err != nil {
		return nil, err
	}
	q := postgresSummarySelect + "WHERE project_id = $1"
	args := []any{projectID}
	if f.TemplateID != 0 {
		args = append(args, f.TemplateID)
		q += fmt.Sprintf(" AND template_id = $%d", len(args))
	}
	if f.Status != "" {
		args = append(args, f.Status)
		q += fmt.Sprintf(" AND status = $%d", len(args))
	}
	if f.Before != 0 {
		args = append(args, f.Before)
		q += fmt.Sprintf(" AND task_id < $%d", len(args))
	}
	q += fmt.Sprintf(" ORDER BY task_id DESC LIMIT $%d OFFSET $%d", len(args)+1, len(args)+2)
	rows, err := s.pool.Query(ctx, q, append(args, limit, offset)...)
	if err != nil {
		return nil, s.fail("list summaries", err)
	}
	defer rows.Close()
	out := []TaskSummary{}
	for rows.Next() {
		sum, err := scanPostgresSummary(rows)
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

// postgresDayCounts groups by the same day number as SQLite's: whole
// microseconds since the epoch, shifted by the offset, divided by a day.
const postgresDayCounts = "SELECT ((extract(epoch FROM created) * 1000000)::bigint + $1) / $2 AS day, status, COUNT(*) " +
	"FROM task_summaries WHERE project_id = $3 AND created >= $4 GROUP BY day, status ORDER BY day, status"

func (s *postgresStore) TaskCountsByDay(ctx context.Context, projectID int64, since time.Time, offset time.Duration) ([]DayCount, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := checkDayOffset(offset); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, postgresDayCounts, offset.Microseconds(), microsPerDay, projectID, since.Truncate(time.Microsecond))
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

func (s *postgresStore) DeleteTask(ctx context.Context, task TaskKey) error {
	if err := s.check(); err != nil {
		return err
	}
	defer s.tail.deleted(task) // once the lines are gone, not before
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, table := range []string{"task_output", "task_chunks", "task_summaries"} {
			if _, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE project_id = $1 AND task_id = $2", task.ProjectID, task.TaskID); err != nil {
				return fmt.Errorf("delete from %s: %w", table, err)
			}
		}
		// Delivered once the delete commits: the other replicas forget
		// the lines they keep of the task.
		if _, err := tx.Exec(ctx, "SELECT pg_notify('"+deleteChannel+"', $1)", deletePayload(s.origin, task)); err != nil {
			return fmt.Errorf("notify the delete: %w", err)
		}
		return nil
	})
	if err != nil {
		return s.failTask("delete", task, err)
	}
	return nil
}

func (s *postgresStore) AddEvent(ctx context.Context, e Event) (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	e = cleanEvent(e)
	var id int64
	err := s.pool.QueryRow(ctx, "INSERT INTO events ("+eventColumns+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
		eventValues(e, e.Created)...).Scan(&id)
	if err != nil {
		return 0, s.fail("add event", err)
	}
	return id, nil
}

func (s *postgresStore) Events(ctx context.Context, projectIDs []int64, limit int) ([]Event, error) {
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
	args := []any{limit}
	if projectIDs != nil {
		q += " WHERE project_id = ANY($2)"
		args = append(args, projectIDs)
	}
	rows, err := s.pool.Query(ctx, q+" ORDER BY created DESC, id DESC LIMIT $1", args...)
	if err != nil {
		return nil, s.fail("list events", err)
	}
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		var e Event
		if err := rows.Scan(eventDest(&e, &e.Created)...); err != nil {
			return nil, s.fail("list events", err)
		}
		e.Created = e.Created.UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("list events", err)
	}
	return out, nil
}
