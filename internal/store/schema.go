package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
)

// The schema is a list of migrations per backend, applied in order on Open
// and recorded in schema_version. A migration is never edited once
// released; a change is a new entry at the end. The two lists keep the same
// numbering, so one version means the same tables on both backends.
//
// Tables:
//   - task_chunks: output, a run of a task's lines per row (chunks.go),
//     keyed (project, task, last_seq). Before migration 8 it was
//     task_lines, a row per line.
//   - task_output: one row per task with the watermark (last_seq) and the
//     highest Seq stored (max_seq); see advanceWatermark.
//   - task_summaries: one row per task, keyed (project, task).
//   - events: append-only, ids never reused.
//   - credentials: sessions and API tokens, keyed by the hash of the
//     secret (never the secret itself).
//   - signin_accounts, signin_guessers, signin_addresses, signin_known:
//     the sign-in limits, shared by the API replicas (shared.go).
//   - webhook_deliveries: the GitHub deliveries run in the last day, keyed
//     by digest, so that a replay to any replica is refused.
//   - task_history_versions: one row per project whose pruned task history
//     was changed through the API, so that other replicas read it again.
var sqliteMigrations = []string{
	// 1: initial schema. task_lines is WITHOUT ROWID: the primary key is the
	// table, so lines are clustered by task and Seq and there is no second
	// index to write for every line.
	`CREATE TABLE task_lines (
		project_id INTEGER NOT NULL,
		task_id    INTEGER NOT NULL,
		seq        INTEGER NOT NULL,
		time       INTEGER NOT NULL,
		output     BLOB NOT NULL,
		PRIMARY KEY (project_id, task_id, seq)
	) WITHOUT ROWID;
	CREATE TABLE task_output (
		project_id INTEGER NOT NULL,
		task_id    INTEGER NOT NULL,
		last_seq   INTEGER NOT NULL,
		max_seq    INTEGER NOT NULL,
		PRIMARY KEY (project_id, task_id)
	) WITHOUT ROWID;
	CREATE TABLE task_summaries (
		project_id INTEGER NOT NULL, task_id INTEGER NOT NULL, template_id INTEGER NOT NULL,
		status TEXT NOT NULL, message TEXT NOT NULL, version TEXT NOT NULL,
		commit_hash TEXT NOT NULL, commit_message TEXT NOT NULL, user_name TEXT NOT NULL,
		tpl_type TEXT NOT NULL, tpl_app TEXT NOT NULL, tpl_alias TEXT NOT NULL, tpl_playbook TEXT NOT NULL,
		user_id INTEGER NOT NULL, build_task_id INTEGER NOT NULL,
		schedule_id INTEGER NOT NULL, integration_id INTEGER NOT NULL,
		created INTEGER NOT NULL, start_time INTEGER, end_time INTEGER,
		PRIMARY KEY (project_id, task_id)
	);
	CREATE INDEX task_summaries_by_template ON task_summaries (project_id, template_id, task_id);
	CREATE INDEX task_summaries_by_status ON task_summaries (project_id, status, task_id);
	CREATE TABLE events (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		project_id INTEGER NOT NULL, user_id INTEGER NOT NULL,
		object_id INTEGER NOT NULL, integration_id INTEGER NOT NULL,
		object_type TEXT NOT NULL, object_name TEXT NOT NULL, project_name TEXT NOT NULL,
		username TEXT NOT NULL, description TEXT NOT NULL,
		created INTEGER NOT NULL
	);
	CREATE INDEX events_by_created ON events (created, id);
	CREATE INDEX events_by_project ON events (project_id, created, id);`,
	// 2: credentials. WITHOUT ROWID because every sign-in looks a row up by
	// hash: the key is the table, so that is one B-tree search. A NULL
	// expires is a credential that never expires.
	`CREATE TABLE credentials (
		hash      TEXT NOT NULL PRIMARY KEY,
		kind      TEXT NOT NULL,
		public_id TEXT NOT NULL,
		user_id   INTEGER NOT NULL,
		created   INTEGER NOT NULL,
		expires   INTEGER,
		expired   INTEGER NOT NULL DEFAULT 0
	) WITHOUT ROWID;
	CREATE INDEX credentials_by_user ON credentials (user_id, kind);`,
	// 3: sign-in limits shared by the replicas (shared.go). Times are
	// microseconds since the epoch on both backends.
	`CREATE TABLE signin_accounts (
		account      TEXT NOT NULL PRIMARY KEY,
		failures     INTEGER NOT NULL,
		last_failure INTEGER NOT NULL
	) WITHOUT ROWID;
	CREATE INDEX signin_accounts_by_last ON signin_accounts (last_failure);
	CREATE TABLE signin_guessers (
		account TEXT NOT NULL,
		address TEXT NOT NULL,
		PRIMARY KEY (account, address)
	) WITHOUT ROWID;
	CREATE TABLE signin_addresses (
		address  TEXT NOT NULL PRIMARY KEY,
		failures INTEGER NOT NULL,
		since    INTEGER NOT NULL
	) WITHOUT ROWID;
	CREATE INDEX signin_addresses_by_since ON signin_addresses (since);
	CREATE TABLE signin_known (
		account TEXT NOT NULL,
		address TEXT NOT NULL,
		at      INTEGER NOT NULL,
		PRIMARY KEY (account, address)
	) WITHOUT ROWID;
	CREATE INDEX signin_known_by_at ON signin_known (at);`,
	// 4: GitHub deliveries already run, shared by the replicas (shared.go).
	`CREATE TABLE webhook_deliveries (
		delivery_key TEXT NOT NULL PRIMARY KEY,
		at           INTEGER NOT NULL
	) WITHOUT ROWID;
	CREATE INDEX webhook_deliveries_by_at ON webhook_deliveries (at);`,
	// 5: a version per project's task history, raised when summaries
	// change without a Task object to tell the replicas (shared.go).
	`CREATE TABLE task_history_versions (
		project_id INTEGER NOT NULL PRIMARY KEY,
		version    INTEGER NOT NULL
	);`,
	// 6: History's chart counts a project's tasks per day and status
	// (TaskCountsByDay): the status in the index makes it a range scan of
	// the index alone, never of the rows.
	`CREATE INDEX task_summaries_by_created ON task_summaries (project_id, created, status);`,
	// 7: which stream a line came from: 0 stdout (and the runner's own
	// lines), 1 the program's stderr. A constant default rewrites no row,
	// and every line stored before reads as stdout.
	`ALTER TABLE task_lines ADD COLUMN stream INTEGER NOT NULL DEFAULT 0;`,
	// 8: output in chunks (chunks.go). After this SQL the migration copies
	// task_lines into chunks and drops it (linesToChunks). A rowid table,
	// unlike task_lines: a row holds up to 256 KiB, and SQLite keeps
	// WITHOUT ROWID tables for small rows. The key is last_seq, so that
	// "the chunks holding a Seq above N" is one range of it.
	`CREATE TABLE task_chunks (
		project_id INTEGER NOT NULL,
		task_id    INTEGER NOT NULL,
		first_seq  INTEGER NOT NULL,
		last_seq   INTEGER NOT NULL,
		stderr     INTEGER NOT NULL,
		body       BLOB NOT NULL,
		PRIMARY KEY (project_id, task_id, last_seq)
	);`,
}

var postgresMigrations = []string{
	// 1: initial schema. Output is bytea so that any bytes a program prints
	// are kept; PostgreSQL text refuses NUL and invalid UTF-8.
	`CREATE TABLE task_lines (
		project_id BIGINT NOT NULL,
		task_id    BIGINT NOT NULL,
		seq        BIGINT NOT NULL,
		time       TIMESTAMPTZ NOT NULL,
		output     BYTEA NOT NULL,
		PRIMARY KEY (project_id, task_id, seq)
	);
	CREATE TABLE task_output (
		project_id BIGINT NOT NULL,
		task_id    BIGINT NOT NULL,
		last_seq   BIGINT NOT NULL,
		max_seq    BIGINT NOT NULL,
		PRIMARY KEY (project_id, task_id)
	);
	CREATE TABLE task_summaries (
		project_id BIGINT NOT NULL, task_id BIGINT NOT NULL, template_id BIGINT NOT NULL,
		status TEXT NOT NULL, message TEXT NOT NULL, version TEXT NOT NULL,
		commit_hash TEXT NOT NULL, commit_message TEXT NOT NULL, user_name TEXT NOT NULL,
		tpl_type TEXT NOT NULL, tpl_app TEXT NOT NULL, tpl_alias TEXT NOT NULL, tpl_playbook TEXT NOT NULL,
		user_id BIGINT NOT NULL, build_task_id BIGINT NOT NULL,
		schedule_id BIGINT NOT NULL, integration_id BIGINT NOT NULL,
		created TIMESTAMPTZ NOT NULL, start_time TIMESTAMPTZ, end_time TIMESTAMPTZ,
		PRIMARY KEY (project_id, task_id)
	);
	CREATE INDEX task_summaries_by_template ON task_summaries (project_id, template_id, task_id);
	CREATE INDEX task_summaries_by_status ON task_summaries (project_id, status, task_id);
	CREATE TABLE events (
		id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		project_id BIGINT NOT NULL, user_id BIGINT NOT NULL,
		object_id BIGINT NOT NULL, integration_id BIGINT NOT NULL,
		object_type TEXT NOT NULL, object_name TEXT NOT NULL, project_name TEXT NOT NULL,
		username TEXT NOT NULL, description TEXT NOT NULL,
		created TIMESTAMPTZ NOT NULL
	);
	CREATE INDEX events_by_created ON events (created, id);
	CREATE INDEX events_by_project ON events (project_id, created, id);`,
	// 2: credentials. The keys are COLLATE "C" so they compare byte by
	// byte as in SQLite, whatever the database's locale: the listing's tie
	// order is then the same on both backends. A NULL expires is a
	// credential that never expires.
	`CREATE TABLE credentials (
		hash      TEXT COLLATE "C" NOT NULL PRIMARY KEY,
		kind      TEXT NOT NULL,
		public_id TEXT COLLATE "C" NOT NULL,
		user_id   BIGINT NOT NULL,
		created   TIMESTAMPTZ NOT NULL,
		expires   TIMESTAMPTZ,
		expired   BOOLEAN NOT NULL DEFAULT false
	);
	CREATE INDEX credentials_by_user ON credentials (user_id, kind);`,
	// 3: sign-in limits shared by the replicas (shared.go). Times are
	// microseconds since the epoch, as in SQLite, so that both backends
	// run the same statements.
	`CREATE TABLE signin_accounts (
		account      TEXT COLLATE "C" NOT NULL PRIMARY KEY,
		failures     INTEGER NOT NULL,
		last_failure BIGINT NOT NULL
	);
	CREATE INDEX signin_accounts_by_last ON signin_accounts (last_failure);
	CREATE TABLE signin_guessers (
		account TEXT COLLATE "C" NOT NULL,
		address TEXT COLLATE "C" NOT NULL,
		PRIMARY KEY (account, address)
	);
	CREATE TABLE signin_addresses (
		address  TEXT COLLATE "C" NOT NULL PRIMARY KEY,
		failures INTEGER NOT NULL,
		since    BIGINT NOT NULL
	);
	CREATE INDEX signin_addresses_by_since ON signin_addresses (since);
	CREATE TABLE signin_known (
		account TEXT COLLATE "C" NOT NULL,
		address TEXT COLLATE "C" NOT NULL,
		at      BIGINT NOT NULL,
		PRIMARY KEY (account, address)
	);
	CREATE INDEX signin_known_by_at ON signin_known (at);`,
	// 4: GitHub deliveries already run, shared by the replicas (shared.go).
	`CREATE TABLE webhook_deliveries (
		delivery_key TEXT COLLATE "C" NOT NULL PRIMARY KEY,
		at           BIGINT NOT NULL
	);
	CREATE INDEX webhook_deliveries_by_at ON webhook_deliveries (at);`,
	// 5: a version per project's task history, raised when summaries
	// change without a Task object to tell the replicas (shared.go).
	`CREATE TABLE task_history_versions (
		project_id BIGINT NOT NULL PRIMARY KEY,
		version    BIGINT NOT NULL
	);`,
	// 6: as SQLite's 6, for TaskCountsByDay.
	`CREATE INDEX task_summaries_by_created ON task_summaries (project_id, created, status);`,
	// 7: as SQLite's 7. A constant default is a catalog change only
	// (PostgreSQL 11 and later): no table rewrite.
	`ALTER TABLE task_lines ADD COLUMN stream SMALLINT NOT NULL DEFAULT 0;`,
	// 8: as SQLite's 8. The bodies are compressed by PostgreSQL's TOAST as
	// any large bytea is: output compresses well.
	`CREATE TABLE task_chunks (
		project_id BIGINT NOT NULL,
		task_id    BIGINT NOT NULL,
		first_seq  BIGINT NOT NULL,
		last_seq   BIGINT NOT NULL,
		stderr     INTEGER NOT NULL,
		body       BYTEA NOT NULL,
		PRIMARY KEY (project_id, task_id, last_seq)
	);`,
}

// dropTaskLines ends migration 8 on both backends, once its lines are in
// chunks.
const dropTaskLines = `DROP TABLE task_lines`

// checkSchemaVersion refuses a database that a newer Bastion migrated:
// running old code on a newer schema could write rows it does not
// understand.
func checkSchemaVersion(have, known int) error {
	if have > known {
		return fmt.Errorf("schema version %d is newer than this binary knows (%d): upgrade Bastion", have, known)
	}
	return nil
}

// migrating logs that the store's schema goes from version from to to,
// and returns what logs that it is done: a migration runs before the
// manager serves anything but its probes (alive, not ready), and
// converting a large store (the lines into chunks, version 8) takes
// minutes, which the log would otherwise leave unexplained.
func migrating(ctx context.Context, store string, from, to int) (done func()) {
	log := logr.FromContextOrDiscard(ctx)
	log.Info("migrating the store's schema; the manager serves once it is done (its probes meanwhile: alive, not ready)", "store", store, "from", from, "to", to)
	start := time.Now()
	return func() {
		log.Info("migrated the store's schema", "store", store, "version", to, "took", time.Since(start).Round(time.Millisecond).String())
	}
}

var summaryColumns = []string{
	"project_id", "task_id", "template_id",
	"status", "message", "version", "commit_hash", "commit_message", "user_name",
	"tpl_type", "tpl_app", "tpl_alias", "tpl_playbook",
	"user_id", "build_task_id", "schedule_id", "integration_id",
	"created", "start_time", "end_time",
}

// summaryUpsertSQL is the same statement on both backends but for the
// placeholder style.
func summaryUpsertSQL(placeholder func(i int) string) string {
	ph := make([]string, len(summaryColumns))
	var set []string
	for i, c := range summaryColumns {
		ph[i] = placeholder(i + 1)
		if c != "project_id" && c != "task_id" {
			set = append(set, c+" = excluded."+c)
		}
	}
	return "INSERT INTO task_summaries (" + strings.Join(summaryColumns, ", ") + ") VALUES (" +
		strings.Join(ph, ", ") + ") ON CONFLICT (project_id, task_id) DO UPDATE SET " + strings.Join(set, ", ")
}

// summaryValues lists a summary in summaryColumns order; the backend says
// how times are stored.
func summaryValues(s TaskSummary, at func(time.Time) any, atPtr func(*time.Time) any) []any {
	return []any{
		s.ProjectID, s.TaskID, s.TemplateID,
		s.Status, s.Message, s.Version, s.CommitHash, s.CommitMessage, s.UserName,
		s.TplType, s.TplApp, s.TplAlias, s.TplPlaybook,
		s.UserID, s.BuildTaskID, s.ScheduleID, s.IntegrationID,
		at(s.Created), atPtr(s.Start), atPtr(s.End),
	}
}

// summaryDest is the Scan destination list in summaryColumns order, with
// the backend's holders for the three times.
func summaryDest(s *TaskSummary, created, start, end any) []any {
	return []any{
		&s.ProjectID, &s.TaskID, &s.TemplateID,
		&s.Status, &s.Message, &s.Version, &s.CommitHash, &s.CommitMessage, &s.UserName,
		&s.TplType, &s.TplApp, &s.TplAlias, &s.TplPlaybook,
		&s.UserID, &s.BuildTaskID, &s.ScheduleID, &s.IntegrationID,
		created, start, end,
	}
}

const eventColumns = "project_id, user_id, object_id, integration_id, object_type, object_name, project_name, username, description, created"

func eventValues(e Event, created any) []any {
	return []any{e.ProjectID, e.UserID, e.ObjectID, e.IntegrationID,
		e.ObjectType, e.ObjectName, e.ProjectName, e.Username, e.Description, created}
}

func eventDest(e *Event, created any) []any {
	return []any{&e.ID, &e.ProjectID, &e.UserID, &e.ObjectID, &e.IntegrationID,
		&e.ObjectType, &e.ObjectName, &e.ProjectName, &e.Username, &e.Description, created}
}
