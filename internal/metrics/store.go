package metrics

import (
	"context"
	"time"

	"github.com/bastion-dev/bastion/internal/store"
)

// InstrumentStore wraps s so that every call is observed in StoreLatency.
func InstrumentStore(s store.Store) store.Store { return timedStore{s} }

type timedStore struct{ next store.Store }

var _ store.Store = timedStore{}

func observe(op string, start time.Time) {
	StoreLatency.WithLabelValues(op).Observe(time.Since(start).Seconds())
}

func (t timedStore) AppendLines(ctx context.Context, task store.TaskKey, lines []store.Line) error {
	defer observe("append_lines", time.Now())
	return t.next.AppendLines(ctx, task, lines)
}

func (t timedStore) LastSeq(ctx context.Context, task store.TaskKey) (int64, error) {
	defer observe("last_seq", time.Now())
	return t.next.LastSeq(ctx, task)
}

func (t timedStore) Lines(ctx context.Context, task store.TaskKey, offset, limit int) ([]store.Line, error) {
	defer observe("lines", time.Now())
	return t.next.Lines(ctx, task, offset, limit)
}

// StreamLines is timed as a whole: it includes the caller's writes, which
// is what a slow output download costs the store's connection.
func (t timedStore) StreamLines(ctx context.Context, task store.TaskKey, fn func(store.Line) error) error {
	defer observe("stream_lines", time.Now())
	return t.next.StreamLines(ctx, task, fn)
}

// StderrSeqs is timed as a whole, like StreamLines.
func (t timedStore) StderrSeqs(ctx context.Context, task store.TaskKey, fn func([]int64) error) error {
	defer observe("stderr_seqs", time.Now())
	return t.next.StderrSeqs(ctx, task, fn)
}

// WatchLines is not timed: it lasts as long as the process.
func (t timedStore) WatchLines(ctx context.Context, fn func(store.LinesStored)) error {
	return t.next.WatchLines(ctx, fn)
}

func (t timedStore) PutTaskSummary(ctx context.Context, s store.TaskSummary) error {
	defer observe("put_task_summary", time.Now())
	return t.next.PutTaskSummary(ctx, s)
}

func (t timedStore) TaskSummary(ctx context.Context, task store.TaskKey) (store.TaskSummary, error) {
	defer observe("task_summary", time.Now())
	return t.next.TaskSummary(ctx, task)
}

func (t timedStore) ListTaskSummaries(ctx context.Context, projectID int64, f store.SummaryFilter, offset, limit int) ([]store.TaskSummary, error) {
	defer observe("list_task_summaries", time.Now())
	return t.next.ListTaskSummaries(ctx, projectID, f, offset, limit)
}

func (t timedStore) TaskCountsByDay(ctx context.Context, projectID int64, since time.Time, offset time.Duration) ([]store.DayCount, error) {
	defer observe("task_counts_by_day", time.Now())
	return t.next.TaskCountsByDay(ctx, projectID, since, offset)
}

func (t timedStore) DeleteTask(ctx context.Context, task store.TaskKey) error {
	defer observe("delete_task", time.Now())
	return t.next.DeleteTask(ctx, task)
}

func (t timedStore) AddEvent(ctx context.Context, e store.Event) (int64, error) {
	defer observe("add_event", time.Now())
	return t.next.AddEvent(ctx, e)
}

func (t timedStore) Events(ctx context.Context, projectIDs []int64, limit int) ([]store.Event, error) {
	defer observe("events", time.Now())
	return t.next.Events(ctx, projectIDs, limit)
}

func (t timedStore) PutCredential(ctx context.Context, c store.Credential) error {
	defer observe("put_credential", time.Now())
	return t.next.PutCredential(ctx, c)
}

func (t timedStore) Credential(ctx context.Context, hash string) (store.Credential, error) {
	defer observe("credential", time.Now())
	return t.next.Credential(ctx, hash)
}

func (t timedStore) Credentials(ctx context.Context, userID int64, kind store.CredentialKind) ([]store.Credential, error) {
	defer observe("credentials", time.Now())
	return t.next.Credentials(ctx, userID, kind)
}

func (t timedStore) ExpireCredential(ctx context.Context, userID int64, kind store.CredentialKind, publicID string) error {
	defer observe("expire_credential", time.Now())
	return t.next.ExpireCredential(ctx, userID, kind, publicID)
}

func (t timedStore) DeleteCredential(ctx context.Context, hash string) error {
	defer observe("delete_credential", time.Now())
	return t.next.DeleteCredential(ctx, hash)
}

func (t timedStore) DeleteUserCredentials(ctx context.Context, userID int64, kind store.CredentialKind, keep string) (int64, error) {
	defer observe("delete_user_credentials", time.Now())
	return t.next.DeleteUserCredentials(ctx, userID, kind, keep)
}

func (t timedStore) SignInRecord(ctx context.Context, account, address string) (store.SignInRecord, error) {
	defer observe("signin_record", time.Now())
	return t.next.SignInRecord(ctx, account, address)
}

func (t timedStore) SignInFailed(ctx context.Context, account, address string, f store.SignInWindow) error {
	defer observe("signin_failed", time.Now())
	return t.next.SignInFailed(ctx, account, address, f)
}

func (t timedStore) SignInAttempt(ctx context.Context, account, address string, f store.SignInWindow, allow func(store.SignInRecord) bool) (bool, error) {
	defer observe("signin_attempt", time.Now())
	return t.next.SignInAttempt(ctx, account, address, f, allow)
}

func (t timedStore) SignInSucceeded(ctx context.Context, account, address string, triedAt, now time.Time) error {
	defer observe("signin_succeeded", time.Now())
	return t.next.SignInSucceeded(ctx, account, address, triedAt, now)
}

func (t timedStore) PruneSignIns(ctx context.Context, failedBefore, knownBefore time.Time) error {
	defer observe("prune_signins", time.Now())
	return t.next.PruneSignIns(ctx, failedBefore, knownBefore)
}

func (t timedStore) ClaimDeliveries(ctx context.Context, keys []string, now, expiredBefore time.Time) (bool, error) {
	defer observe("claim_deliveries", time.Now())
	return t.next.ClaimDeliveries(ctx, keys, now, expiredBefore)
}

func (t timedStore) ReleaseDeliveries(ctx context.Context, keys []string, claimedAt time.Time) error {
	defer observe("release_deliveries", time.Now())
	return t.next.ReleaseDeliveries(ctx, keys, claimedAt)
}

func (t timedStore) TouchTaskHistory(ctx context.Context, projectID int64) error {
	defer observe("touch_task_history", time.Now())
	return t.next.TouchTaskHistory(ctx, projectID)
}

func (t timedStore) TaskHistoryVersion(ctx context.Context, projectID int64) (int64, error) {
	defer observe("task_history_version", time.Now())
	return t.next.TaskHistoryVersion(ctx, projectID)
}

func (t timedStore) Close() error { return t.next.Close() }
