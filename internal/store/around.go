package store

import (
	"context"
	"time"
)

// Hook runs around a call of a store wrapped with Around: it gets the
// call's context and the operation's name (snake_case: "append_lines",
// "credential", …) and returns the context to make the call with and a
// function to run once the call has returned.
type Hook func(ctx context.Context, op string) (context.Context, func())

// Around wraps s so that every call goes through hook, except WatchLines,
// which lasts as long as the process, and Close. The metrics time the
// store this way (metrics.InstrumentStore), and Bounded gives its calls a
// deadline.
func Around(s Store, hook Hook) Store { return around{s, hook} }

type around struct {
	next Store
	hook Hook
}

var _ Store = around{}

func (a around) WatchLines(ctx context.Context, fn func(LinesStored)) error {
	return a.next.WatchLines(ctx, fn)
}

func (a around) Close() error { return a.next.Close() }

func (a around) AppendLines(ctx context.Context, task TaskKey, lines []Line) error {
	ctx, done := a.hook(ctx, "append_lines")
	defer done()
	return a.next.AppendLines(ctx, task, lines)
}

func (a around) LastSeq(ctx context.Context, task TaskKey) (int64, error) {
	ctx, done := a.hook(ctx, "last_seq")
	defer done()
	return a.next.LastSeq(ctx, task)
}

func (a around) Lines(ctx context.Context, task TaskKey, offset, limit int) ([]Line, error) {
	ctx, done := a.hook(ctx, "lines")
	defer done()
	return a.next.Lines(ctx, task, offset, limit)
}

func (a around) StreamLines(ctx context.Context, task TaskKey, fn func(Line) error) error {
	ctx, done := a.hook(ctx, "stream_lines")
	defer done()
	return a.next.StreamLines(ctx, task, fn)
}

func (a around) StderrSeqs(ctx context.Context, task TaskKey, fn func([]int64) error) error {
	ctx, done := a.hook(ctx, "stderr_seqs")
	defer done()
	return a.next.StderrSeqs(ctx, task, fn)
}

func (a around) PutTaskSummary(ctx context.Context, s TaskSummary) error {
	ctx, done := a.hook(ctx, "put_task_summary")
	defer done()
	return a.next.PutTaskSummary(ctx, s)
}

func (a around) TaskSummary(ctx context.Context, task TaskKey) (TaskSummary, error) {
	ctx, done := a.hook(ctx, "task_summary")
	defer done()
	return a.next.TaskSummary(ctx, task)
}

func (a around) ListTaskSummaries(ctx context.Context, projectID int64, f SummaryFilter, offset, limit int) ([]TaskSummary, error) {
	ctx, done := a.hook(ctx, "list_task_summaries")
	defer done()
	return a.next.ListTaskSummaries(ctx, projectID, f, offset, limit)
}

func (a around) TaskCountsByDay(ctx context.Context, projectID int64, since time.Time, offset time.Duration) ([]DayCount, error) {
	ctx, done := a.hook(ctx, "task_counts_by_day")
	defer done()
	return a.next.TaskCountsByDay(ctx, projectID, since, offset)
}

func (a around) DeleteTask(ctx context.Context, task TaskKey) error {
	ctx, done := a.hook(ctx, "delete_task")
	defer done()
	return a.next.DeleteTask(ctx, task)
}

func (a around) AddEvent(ctx context.Context, e Event) (int64, error) {
	ctx, done := a.hook(ctx, "add_event")
	defer done()
	return a.next.AddEvent(ctx, e)
}

func (a around) Events(ctx context.Context, projectIDs []int64, limit int) ([]Event, error) {
	ctx, done := a.hook(ctx, "events")
	defer done()
	return a.next.Events(ctx, projectIDs, limit)
}

func (a around) PutCredential(ctx context.Context, c Credential) error {
	ctx, done := a.hook(ctx, "put_credential")
	defer done()
	return a.next.PutCredential(ctx, c)
}

func (a around) Credential(ctx context.Context, hash string) (Credential, error) {
	ctx, done := a.hook(ctx, "credential")
	defer done()
	return a.next.Credential(ctx, hash)
}

func (a around) Credentials(ctx context.Context, userID int64, kind CredentialKind) ([]Credential, error) {
	ctx, done := a.hook(ctx, "credentials")
	defer done()
	return a.next.Credentials(ctx, userID, kind)
}

func (a around) ExpireCredential(ctx context.Context, userID int64, kind CredentialKind, publicID string) error {
	ctx, done := a.hook(ctx, "expire_credential")
	defer done()
	return a.next.ExpireCredential(ctx, userID, kind, publicID)
}

func (a around) DeleteCredential(ctx context.Context, hash string) error {
	ctx, done := a.hook(ctx, "delete_credential")
	defer done()
	return a.next.DeleteCredential(ctx, hash)
}

func (a around) DeleteUserCredentials(ctx context.Context, userID int64, kind CredentialKind, keep string) (int64, error) {
	ctx, done := a.hook(ctx, "delete_user_credentials")
	defer done()
	return a.next.DeleteUserCredentials(ctx, userID, kind, keep)
}

func (a around) SignInRecord(ctx context.Context, account, address string) (SignInRecord, error) {
	ctx, done := a.hook(ctx, "signin_record")
	defer done()
	return a.next.SignInRecord(ctx, account, address)
}

func (a around) SignInFailed(ctx context.Context, account, address string, f SignInWindow) error {
	ctx, done := a.hook(ctx, "signin_failed")
	defer done()
	return a.next.SignInFailed(ctx, account, address, f)
}

func (a around) SignInAttempt(ctx context.Context, account, address string, f SignInWindow, allow func(SignInRecord) bool) (bool, error) {
	ctx, done := a.hook(ctx, "signin_attempt")
	defer done()
	return a.next.SignInAttempt(ctx, account, address, f, allow)
}

func (a around) SignInSucceeded(ctx context.Context, account, address string, triedAt, now time.Time) error {
	ctx, done := a.hook(ctx, "signin_succeeded")
	defer done()
	return a.next.SignInSucceeded(ctx, account, address, triedAt, now)
}

func (a around) PruneSignIns(ctx context.Context, failedBefore, knownBefore time.Time) error {
	ctx, done := a.hook(ctx, "prune_signins")
	defer done()
	return a.next.PruneSignIns(ctx, failedBefore, knownBefore)
}

func (a around) ClaimDeliveries(ctx context.Context, keys []string, now, expiredBefore time.Time) (bool, error) {
	ctx, done := a.hook(ctx, "claim_deliveries")
	defer done()
	return a.next.ClaimDeliveries(ctx, keys, now, expiredBefore)
}

func (a around) ReleaseDeliveries(ctx context.Context, keys []string, claimedAt time.Time) error {
	ctx, done := a.hook(ctx, "release_deliveries")
	defer done()
	return a.next.ReleaseDeliveries(ctx, keys, claimedAt)
}

func (a around) TouchTaskHistory(ctx context.Context, projectID int64) error {
	ctx, done := a.hook(ctx, "touch_task_history")
	defer done()
	return a.next.TouchTaskHistory(ctx, projectID)
}

func (a around) TaskHistoryVersion(ctx context.Context, projectID int64) (int64, error) {
	ctx, done := a.hook(ctx, "task_history_version")
	defer done()
	return a.next.TaskHistoryVersion(ctx, projectID)
}

// Bounded gives every call to s a deadline of limit, so that a store that
// stops answering (PostgreSQL frozen, its network cut without a reset)
// fails each call after limit instead of holding it, and the request that
// made it, for ever: sign-in, every request's credential check, a
// runner's batch (which the runner sends again). The two calls that hand
// their lines to a caller page by page get the limit per page read
// instead: a download over a slow link may take longer than any limit,
// and the time between pages is the caller's.
func Bounded(s Store, limit time.Duration) Store {
	return Around(s, func(ctx context.Context, op string) (context.Context, func()) {
		if op == "stream_lines" || op == "stderr_seqs" {
			return context.WithValue(ctx, pageLimitKey{}, limit), func() {}
		}
		return context.WithTimeout(ctx, limit)
	})
}

// pageLimitKey carries Bounded's limit to the page reads of a stream.
type pageLimitKey struct{}

// pageContext is the context of one page read of a stream: bounded when
// the store is (Bounded).
func pageContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if limit, ok := ctx.Value(pageLimitKey{}).(time.Duration); ok {
		return context.WithTimeout(ctx, limit)
	}
	return ctx, func() {}
}
