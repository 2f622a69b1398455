// Package store owns what Bastion keeps outside etcd: the output lines of
// tasks, a summary of every task (kept after the Task object is pruned from
// etcd, so the history screens still show it) and project events.
//
// There is one interface and two real backends: SQLite (a file on the
// manager's volume, the embedded default) and PostgreSQL (for several API
// replicas). Both pass the same conformance suite, storetest.Run.
//
// Rules shared by both backends:
//   - Output lines are idempotent by (task, Seq): a resend never duplicates
//     and never overwrites what was stored first.
//   - LastSeq is a per-task watermark, the highest Seq below which nothing
//     is missing. It lives in its own row, updated in the same transaction
//     as the lines, so reading it is one key lookup and appending only
//     searches the lines when a gap was pending (see advanceWatermark).
//   - Output is kept byte for byte (BLOB/bytea): a line that is not valid
//     UTF-8 or contains NUL is still stored exactly; encoding it for JSON is
//     the API's business. Summary and event text is stored as text, so
//     invalid UTF-8 becomes U+FFFD and NUL is dropped there.
//   - Times are kept to the microsecond (PostgreSQL's resolution), in UTC,
//     on both backends, so moving from one to the other changes nothing.
//   - Every advance of a watermark is reported on the line feed
//     (WatchLines, feed.go) after it commits, so each replica can publish
//     the lines live whichever replica stored them.
//   - Errors name the backend and the operation; they never carry line
//     contents or credentials.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Line is one line of a task's output. Seq starts at 1 for each task and is
// assigned by the runner, which makes resends idempotent.
type Line struct {
	Seq    int64
	Time   time.Time
	Output string
	// Stderr is true for a line the task's program wrote to its stderr
	// (task_lines.stream 1); false for stdout and the runner's own lines.
	Stderr bool
}

// Stream names the line's stream as the API does: "stderr", or "" for
// stdout (so that stdout lines keep their JSON shape).
func (l Line) Stream() string {
	if l.Stderr {
		return "stderr"
	}
	return ""
}

// MaxSeq is the highest Seq a line may have: the largest integer a
// browser reads exactly from JSON (2^53 − 1, for GET …/stderr's list of
// Seqs), and far beyond any task's output. A Seq above it is ErrInvalid:
// near 2^63, a Seq's successor would wrap around.
const MaxSeq = 1<<53 - 1

// TaskKey names a task by the integer ids of the /api contract. Task ids are
// allocated per project, so both are needed.
type TaskKey struct {
	ProjectID, TaskID int64
}

// TaskSummary is what the history screens show of a task, kept after the
// Task object is gone.
type TaskSummary struct {
	ProjectID, TaskID, TemplateID int64

	Status, Message, Version, CommitHash, CommitMessage, UserName string
	TplType, TplApp, TplAlias, TplPlaybook                        string

	UserID, BuildTaskID, ScheduleID, IntegrationID int64

	Created    time.Time
	Start, End *time.Time
}

// SummaryFilter narrows ListTaskSummaries; zero values match everything.
type SummaryFilter struct {
	TemplateID int64
	Status     string
	// Before keeps tasks whose id is below it: keyset paging, which stays
	// one index range however deep the page (an offset reads and drops
	// every row before it).
	Before int64
}

// DayCount is how many of a project's tasks created on one day ended with
// one status.
type DayCount struct {
	// Day is the calendar date, as midnight UTC of that date.
	Day    time.Time
	Status string
	Count  int64
}

// Event is one entry of a project's activity log. ProjectID 0 is an event
// outside any project.
type Event struct {
	ID, ProjectID, UserID, ObjectID, IntegrationID             int64
	ObjectType, ObjectName, ProjectName, Username, Description string
	Created                                                    time.Time
}

// CredentialKind tells a browser session from an API token.
type CredentialKind string

const (
	CredentialSession CredentialKind = "session"
	CredentialToken   CredentialKind = "token"
)

// Credential is a sign-in session or an API token. Only a hash of its
// secret is stored, so a copy of the database signs nobody in.
type Credential struct {
	// Hash is the hex SHA-256 of the secret: the key.
	Hash string
	Kind CredentialKind
	// PublicID names the credential in lists and deletes without being the
	// secret (for tokens; may be empty for sessions).
	PublicID string
	UserID   int64
	Created  time.Time
	// Expires is when the credential stops working; zero means never.
	Expires time.Time
	// Expired is set when the credential was revoked but kept for the list.
	Expired bool
}

// Store keeps task output, task summaries, events, credentials, and the
// sign-in limits and webhook deliveries that replicas share.
type Store interface {
	// AppendLines stores lines of a task. Idempotent by (task, Seq): a line
	// whose Seq is already stored is ignored (the first copy wins), so a
	// runner that resends after a lost ack never duplicates. One call is
	// one transaction: either all its new lines are stored or none.
	AppendLines(ctx context.Context, task TaskKey, lines []Line) error
	// LastSeq is the highest contiguous Seq stored (0 if none): what the
	// manager acknowledges and the runner resumes after. With 1,2,3,5
	// stored it is 3, so 4 must be resent.
	LastSeq(ctx context.Context, task TaskKey) (int64, error)
	// Lines pages output in Seq order; offset counts stored lines.
	Lines(ctx context.Context, task TaskKey, offset, limit int) ([]Line, error)
	// StreamLines calls fn for every line in Seq order, reading a page at a
	// time so that a task of a million lines never sits in memory. An error
	// from fn stops the stream and is returned as is.
	StreamLines(ctx context.Context, task TaskKey, fn func(Line) error) error
	// StderrSeqs calls fn with the Seqs of the task's stderr lines, in
	// order, a page at a time, without reading the lines' text: which
	// lines of a long log (read as plain text) came from stderr.
	StderrSeqs(ctx context.Context, task TaskKey, fn func(seqs []int64) error) error
	// WatchLines is the line feed: it calls fn, on the caller's goroutine
	// and in order, each time a task's LastSeq advances, whichever process
	// appended (PostgreSQL: any replica of the database; SQLite: this
	// process). Reports of one task may merge ("From..To" for several).
	// The first call of fn is a CatchUp, made once every later advance is
	// sure to be reported; another comes whenever reports may have been
	// lost (the PostgreSQL listener reconnected). It returns when ctx ends,
	// with ctx's error, or when the store closes, with ErrClosed.
	WatchLines(ctx context.Context, fn func(LinesStored)) error

	// PutTaskSummary inserts or replaces the summary of a task.
	PutTaskSummary(ctx context.Context, s TaskSummary) error
	// TaskSummary returns ErrNotFound for an unknown task.
	TaskSummary(ctx context.Context, task TaskKey) (TaskSummary, error)
	// ListTaskSummaries lists a project's summaries, newest TaskID first.
	ListTaskSummaries(ctx context.Context, projectID int64, f SummaryFilter, offset, limit int) ([]TaskSummary, error)
	// TaskCountsByDay counts a project's summaries created at or after
	// since, by day and status, oldest day first. Days start at midnight
	// offset from UTC (the reader's time zone), which must be within
	// ±14 h.
	TaskCountsByDay(ctx context.Context, projectID int64, since time.Time, offset time.Duration) ([]DayCount, error)
	// DeleteTask removes a task's lines, watermark and summary.
	DeleteTask(ctx context.Context, task TaskKey) error

	// AddEvent stores an event and returns its id; a zero Created is now.
	AddEvent(ctx context.Context, e Event) (int64, error)
	// Events lists events newest first. nil projectIDs means every project;
	// an empty, non-nil slice means none (a user who may see no project).
	Events(ctx context.Context, projectIDs []int64, limit int) ([]Event, error)

	// PutCredential stores a new session or API token. A Hash already
	// stored is an error (ErrConflict): secrets are random, so a collision
	// means a bug, never a second sign-in to merge.
	PutCredential(ctx context.Context, c Credential) error
	// Credential finds a credential by the hash of its secret; ErrNotFound
	// if there is none. Expired credentials are returned too: the caller
	// decides (and says why it refuses).
	Credential(ctx context.Context, hash string) (Credential, error)
	// Credentials lists a user's credentials of one kind, newest first.
	Credentials(ctx context.Context, userID int64, kind CredentialKind) ([]Credential, error)
	// ExpireCredential marks the user's credential of that kind and
	// PublicID expired; ErrNotFound if the user has none.
	ExpireCredential(ctx context.Context, userID int64, kind CredentialKind, publicID string) error
	// DeleteCredential removes one credential (sign-out); deleting a
	// missing one is not an error.
	DeleteCredential(ctx context.Context, hash string) error
	// DeleteUserCredentials removes every credential of kind that the user
	// holds except the one whose hash is keep ("" keeps none), and returns
	// how many went: a password change ends the user's other sessions.
	DeleteUserCredentials(ctx context.Context, userID int64, kind CredentialKind, keep string) (int64, error)

	// Shared is the state every API replica must see alike (shared.go).
	Shared

	// Close releases the store; every later call returns ErrClosed.
	Close() error
}

var (
	// ErrNotFound is returned when a task summary does not exist.
	ErrNotFound = errors.New("not found")
	// ErrClosed is returned by every call on a closed store.
	ErrClosed = errors.New("store is closed")
	// ErrConflict is returned when a key that must be new already exists.
	ErrConflict = errors.New("already exists")
	// ErrInvalid is returned for arguments no backend could honour
	// (a Seq below 1, a negative offset, a limit below 1).
	ErrInvalid = errors.New("invalid argument")
)

// Open opens the store a DSN names and creates or migrates its schema:
//
//	sqlite:///abs/path/file.db, or a plain file path  → SQLite
//	postgres://… or postgresql://…                    → PostgreSQL
func Open(ctx context.Context, dsn string) (Store, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return openPostgres(ctx, dsn)
	}
	if path, ok := SQLitePath(dsn); ok {
		return openSQLite(ctx, path)
	}
	if scheme, _, found := strings.Cut(dsn, "://"); found {
		// Never echo the DSN: it may carry a password.
		return nil, fmt.Errorf("store: unsupported DSN scheme %q (want sqlite:// or postgres://)", scheme)
	}
	return nil, fmt.Errorf("store: empty DSN")
}

// SQLitePath is the database file a DSN names, and whether it names SQLite
// at all: sqlite:///path/file.db, or a bare path.
func SQLitePath(dsn string) (string, bool) {
	switch {
	case strings.HasPrefix(dsn, "sqlite://"):
		return strings.TrimPrefix(dsn, "sqlite://"), true
	case dsn == "" || strings.Contains(dsn, "://"):
		return "", false
	}
	return dsn, true
}
