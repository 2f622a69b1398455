package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/store/pgtest"
	"github.com/bastion-dev/bastion/internal/store/storetest"
)

// appendEventually retries an append while PostgreSQL comes back: the
// first calls after a restart may meet pooled connections that died with
// the old server. Retrying is what the manager does too; resends are safe.
func appendEventually(t *testing.T, s store.Store, key store.TaskKey, ls []store.Line) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.AppendLines(t.Context(), key, ls)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("AppendLines did not succeed within 30s after the restart: %v", err)
		}
		<-time.After(20 * time.Millisecond) // polling an external process with a deadline
	}
}

func mkLines(from, to int64) []store.Line {
	var out []store.Line
	for seq := from; seq <= to; seq++ {
		out = append(out, store.Line{Seq: seq, Output: "line"})
	}
	return out
}

// Both a clean restart and a crash (SIGKILL of the whole server) keep every
// committed line, and the store's pool reconnects by itself.
func TestPostgres_survivesRestartAndCrash(t *testing.T) {
	srv := store.PostgresServer(t)
	s := mustOpen(t, srv.NewDatabase(t))
	key := store.TaskKey{ProjectID: 1, TaskID: 1}
	appendEventually(t, s, key, mkLines(1, 1000))

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The runner resends what it sent around the restart: 900..2000.
	appendEventually(t, s, key, mkLines(900, 2000))

	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	appendEventually(t, s, key, mkLines(1500, 3000))

	n := int64(0)
	err := s.StreamLines(t.Context(), key, func(l store.Line) error {
		n++
		if l.Seq != n {
			t.Fatalf("line %d has seq %d", n, l.Seq)
		}
		return nil
	})
	if err != nil || n != 3000 {
		t.Fatalf("after a restart and a crash: %d lines (%v), want 3000", n, err)
	}
	if last, err := s.LastSeq(t.Context(), key); err != nil || last != 3000 {
		t.Fatalf("LastSeq = %d, %v; want 3000", last, err)
	}
}

// Replicas starting together must not race each other's migrations.
func TestPostgres_concurrentOpensMigrateOnce(t *testing.T) {
	dsn := store.PostgresServer(t).NewDatabase(t)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := store.Open(context.Background(), dsn)
			if err == nil {
				err = s.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestPostgres_refusesASchemaFromANewerBastion(t *testing.T) {
	dsn := store.PostgresServer(t).NewDatabase(t)
	mustOpen(t, dsn).Close()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "UPDATE schema_version SET version = 99"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(t.Context(), dsn); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Open of a newer schema: %v, want a refusal", err)
	}
}

// Two stores on one database are two replicas: an append on one is
// reported on the other (without its lines, which never travel), and the
// store that appended reports it once, with the lines, when its own
// notification comes back. The notification names the task and the
// range and nothing of the lines.
func TestPostgres_feedReachesOtherReplicas(t *testing.T) {
	dsn, a, b, fa, fb := liveReplicas(t)
	raw := listen(t, dsn)

	key := store.TaskKey{ProjectID: 4, TaskID: 9}
	secret := []store.Line{{Seq: 1, Output: "password=hunter2"}, {Seq: 2, Output: "token"}}
	if err := a.AppendLines(t.Context(), key, secret); err != nil {
		t.Fatal(err)
	}
	checkReport(t, fb.Next(t), key, 0, 2, 0)
	checkReport(t, fa.Next(t), key, 0, 2, 2)
	n, err := raw.WaitForNotification(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(n.Payload); len(f) != 5 || strings.Join(f[1:], " ") != "4 9 0 2" || strings.Contains(n.Payload, "hunter2") {
		t.Fatalf("payload %q, want \"<origin> 4 9 0 2\"", n.Payload)
	}

	// b appends next: a hears it from b, and b's own report comes once.
	if err := b.AppendLines(t.Context(), key, mkLines(3, 5)); err != nil {
		t.Fatal(err)
	}
	checkReport(t, fa.Next(t), key, 2, 5, 0)
	checkReport(t, fb.Next(t), key, 2, 5, 3)
	if err := a.AppendLines(t.Context(), key, mkLines(6, 6)); err != nil {
		t.Fatal(err)
	}
	checkReport(t, fa.Next(t), key, 5, 6, 1) // not an echo of 0..2 or 2..5
	checkReport(t, fb.Next(t), key, 5, 6, 0)
}

// A listener whose connection is killed (pg_terminate_backend, as an
// administrator or a failover would) reconnects, asks its watchers to
// catch up, and reports again; a watcher that follows a task as the API's
// publisher does, reading from its last line on a catch-up, ends up with
// every line once and in order although the notifications sent while the
// listener was away were lost.
func TestPostgres_feedRecoversFromAKilledListener(t *testing.T) {
	dsn := store.PostgresServer(t).NewDatabase(t)
	watched, writer := mustOpen(t, dsn), mustOpen(t, dsn)
	f := storetest.Watch(t, watched)
	f.WaitCatchUp(t)
	key := store.TaskKey{ProjectID: 1, TaskID: 1}
	var got []int64 // what the follower delivered
	follow := func(r store.LinesStored) {
		t.Helper()
		if !r.CatchUp && r.Task != key {
			t.Fatalf("report of another task: %+v", r)
		}
		ls, err := watched.Lines(t.Context(), key, len(got), 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			if l.Seq != int64(len(got))+1 {
				break
			}
			got = append(got, l.Seq)
		}
	}

	appendEventually(t, writer, key, mkLines(1, 2))
	follow(f.Next(t))
	killed := terminateListener(t, dsn)
	appendEventually(t, writer, key, mkLines(3, 4)) // while the listener may be away
	// The catch-up comes (perhaps after a report of 3..4, if the
	// listener was back in time).
	for r := f.Next(t); ; r = f.Next(t) {
		follow(r)
		if r.CatchUp {
			break
		}
	}
	if again := listenerPID(t, dsn, killed); again == 0 {
		t.Fatalf("no listener but the killed one (%d) after the catch-up", killed)
	}
	appendEventually(t, writer, key, mkLines(5, 6))
	for len(got) < 6 {
		follow(f.Next(t))
	}
	if want := []int64{1, 2, 3, 4, 5, 6}; !slices.Equal(got, want) {
		t.Fatalf("follower delivered %v, want %v", got, want)
	}
}

// A store's own append is reported in the order PostgreSQL commits and
// notifies, like another replica's, not at once: a replica that stores a
// task's second batch must hear of the first (stored by another replica
// and notified earlier) before its own, or its clients would follow the
// task from the second batch and never see the first live. So while its
// listener is away, an append of its own is not reported either, and the
// catch-up after the reconnection covers it, as it covers everyone's.
func TestPostgres_aStoresOwnAppendIsReportedInCommitOrder(t *testing.T) {
	dsn := store.PostgresServer(t).NewDatabase(t)
	s, other := mustOpen(t, dsn), mustOpen(t, dsn)
	f := storetest.Watch(t, s)
	f.WaitCatchUp(t)
	key := store.TaskKey{ProjectID: 2, TaskID: 3}

	appendEventually(t, other, key, mkLines(1, 2))
	checkReport(t, f.Next(t), key, 0, 2, 0)
	appendEventually(t, s, key, mkLines(3, 4)) // its own, heard back with its lines
	checkReport(t, f.Next(t), key, 2, 4, 2)

	terminateListener(t, dsn)
	appendEventually(t, s, key, mkLines(5, 6))
	if r := f.Next(t); !r.CatchUp {
		t.Fatalf("reported %+v while the listener was away, want nothing before the catch-up", r)
	}
	appendEventually(t, s, key, mkLines(7, 8))
	checkReport(t, f.Next(t), key, 6, 8, 2)
}

func checkReport(t *testing.T, r store.LinesStored, key store.TaskKey, from, to int64, lines int) {
	t.Helper()
	if r.CatchUp || r.Task != key || r.From != from || r.To != to || len(r.Lines) != lines {
		t.Fatalf("report %+v (%d lines), want %v %d..%d with %d lines", r, len(r.Lines), key, from+1, to, lines)
	}
}

// listen is a raw LISTEN on the feed's channel, to see the payloads.
func listen(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(t.Context(), "LISTEN bastion_lines"); err != nil {
		t.Fatal(err)
	}
	return conn
}

// listenerPID is the backend of a store's listener on dsn's database
// other than except, 0 if none is connected.
func listenerPID(t *testing.T, dsn string, except int64) int64 {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var pid int64
	err = conn.QueryRow(t.Context(), `SELECT COALESCE(MAX(pid), 0) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'bastion line feed' AND pid <> $1`, except).Scan(&pid)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// terminateListener kills the listener's backend and returns its pid.
func terminateListener(t *testing.T, dsn string) int64 {
	t.Helper()
	pid := listenerPID(t, dsn, 0)
	if pid == 0 {
		t.Fatal("no listener connected")
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var ok bool
	if err := conn.QueryRow(t.Context(), `SELECT pg_terminate_backend($1)`, pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, ok, err)
	}
	return pid
}

// The premise of the publisher's check of a first report against the
// store (apiserver/line_publisher.go, follow): a role with no privilege on
// any table, connected to the database as PostgreSQL lets every role do
// by default, reaches every replica's feed with a NOTIFY on its channel.
// The feed cannot tell (so its readers must not trust a report's range),
// and the report can name no lines: it carries none.
func TestPostgres_anyRoleOfTheDatabaseCanReachTheFeed(t *testing.T) {
	srv := store.PostgresServer(t)
	dsn := srv.NewDatabase(t)
	s := mustOpen(t, dsn)
	f := storetest.Watch(t, s)
	f.WaitCatchUp(t)
	admin, err := pgx.Connect(t.Context(), srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	role := fmt.Sprintf("intruder_%d", time.Now().UnixNano())
	if _, err := admin.Exec(t.Context(), "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Fatal(err)
	}
	intruder, err := pgx.Connect(t.Context(), strings.Replace(dsn, "postgres@", role+"@", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer intruder.Close(context.Background())
	if _, err := intruder.Exec(t.Context(), "SELECT * FROM task_chunks"); err == nil {
		t.Fatal("the intruder role may read the lines; the test means one that may not")
	}
	if _, err := intruder.Exec(t.Context(), "SELECT pg_notify('bastion_lines', 'forged 4 9 1000000 1000001')"); err != nil {
		t.Fatal(err)
	}
	checkReport(t, f.Next(t), store.TaskKey{ProjectID: 4, TaskID: 9}, 1000000, 1000001, 0)
}

// liveReplicas opens two stores on one new database, as two replicas,
// each with its line feed live.
func liveReplicas(t *testing.T) (dsn string, a, b store.Store, fa, fb *storetest.Feed) {
	t.Helper()
	dsn = store.PostgresServer(t).NewDatabase(t)
	a, b = mustOpen(t, dsn), mustOpen(t, dsn)
	fa, fb = storetest.Watch(t, a), storetest.Watch(t, b)
	fa.WaitCatchUp(t)
	fb.WaitCatchUp(t)
	return dsn, a, b, fa, fb
}

// Replicas keep the lines they stored last (to answer a follower from
// memory): a task another replica deletes is forgotten by every replica,
// which then answers what the database holds, the lines of a new run
// under the same key included.
func TestPostgres_aTaskDeletedByAnotherReplicaIsForgottenByAll(t *testing.T) {
	_, a, b, _, _ := liveReplicas(t)
	key := store.TaskKey{ProjectID: 3, TaskID: 7}
	texts := func(s store.Store) []string {
		t.Helper()
		ls, err := s.Lines(t.Context(), key, 2, 100)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range ls {
			out = append(out, l.Output)
		}
		return out
	}
	run := func(text string) []store.Line {
		ls := mkLines(1, 10)
		for i := range ls {
			ls[i].Output = fmt.Sprintf("%s %d", text, ls[i].Seq)
		}
		return ls
	}

	appendEventually(t, a, key, run("old"))
	if got := texts(a); len(got) != 8 || got[0] != "old 3" {
		t.Fatalf("a answers %q before the delete", got)
	}
	if err := b.DeleteTask(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(texts(a)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after b deleted the task, a still answers %q", texts(a))
		}
		time.Sleep(10 * time.Millisecond)
	}
	appendEventually(t, b, key, run("new"))
	if got, want := texts(a), texts(b); !slices.Equal(got, want) || len(got) != 8 || got[0] != "new 3" {
		t.Fatalf("after a new run through b, a answers %q and b %q", got, want)
	}
}

// A replica hears other replicas' deletes only through its line feed, so
// it answers from the lines it keeps only while the feed is live, and
// forgets them when the feed connects. Seen by deleting the rows behind
// the store's back: while answers come from the database, the lines are
// gone; once they come from memory, they are not.
func TestPostgres_aReplicaAnswersFromMemoryOnlyWhileItsFeedIsLive(t *testing.T) {
	dsn := store.PostgresServer(t).NewDatabase(t)
	s := mustOpen(t, dsn)
	raw, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close(context.Background())
	key := store.TaskKey{ProjectID: 2, TaskID: 5}
	dropRows := func() {
		t.Helper()
		if _, err := raw.Exec(t.Context(), "DELETE FROM task_chunks WHERE project_id = $1 AND task_id = $2", key.ProjectID, key.TaskID); err != nil {
			t.Fatal(err)
		}
	}
	count := func(offset int) int {
		t.Helper()
		ls, err := s.Lines(t.Context(), key, offset, 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(ls)
	}

	appendEventually(t, s, key, mkLines(1, 10)) // no watcher yet: the feed is not live
	dropRows()
	if n := count(2); n != 0 {
		t.Fatalf("with the feed down, Lines gave %d lines the database no longer holds", n)
	}
	storetest.Watch(t, s).WaitCatchUp(t)
	if n := count(2); n != 0 {
		t.Fatalf("once the feed is live, Lines gave %d lines kept from before it connected", n)
	}
	appendEventually(t, s, key, mkLines(11, 20))
	dropRows()
	if n := count(12); n != 8 {
		t.Fatalf("with the feed live, Lines gave %d of the 8 lines just stored, want them from memory", n)
	}
}

// A PostgreSQL that stops answering (frozen, its connections still open)
// used to hold every call to the store for ever: sign-in, the credential
// check of each request, a runner's batch. Bounded fails each call once
// its limit has passed, with context.DeadlineExceeded, through pooled
// connections and new ones alike, and the store answers again once the
// server does.
func TestPostgres_aFrozenServerFailsBoundedCallsInsteadOfHoldingThem(t *testing.T) {
	srv, err := pgtest.Start() // its own server: freezing the shared one would stall other tests
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const limit = time.Second
	s := store.Bounded(mustOpen(t, srv.NewDatabase(t)), limit)
	key := store.TaskKey{ProjectID: 1, TaskID: 1}
	appendEventually(t, s, key, mkLines(1, 10))

	thaw := srv.Freeze()
	defer thaw()
	ctx := t.Context()
	for name, call := range map[string]func() error{
		"Credential": func() error { _, err := s.Credential(ctx, strings.Repeat("a", 64)); return err },
		"SignInAttempt": func() error {
			_, err := s.SignInAttempt(ctx, "admin", "10.0.0.1", store.SignInWindow{Now: time.Now(), Window: time.Minute, MaxGuessers: 8}, func(store.SignInRecord) bool { return true })
			return err
		},
		"AppendLines": func() error { return s.AppendLines(ctx, key, mkLines(11, 20)) },
		"Lines":       func() error { _, err := s.Lines(ctx, key, 0, 10); return err },
		// Streams are bounded per page read, not as a whole.
		"StreamLines": func() error { return s.StreamLines(ctx, key, func(store.Line) error { return nil }) },
		"StderrSeqs":  func() error { return s.StderrSeqs(ctx, key, func([]int64) error { return nil }) },
	} {
		start := time.Now()
		err := call()
		if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > limit+2*time.Second {
			t.Errorf("%s on a frozen server: %v after %v, want context.DeadlineExceeded after about %v", name, err, took.Round(time.Millisecond), limit)
		}
	}
	thaw()
	var last int64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if last, err = s.LastSeq(ctx, key); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || last != 10 {
		t.Fatalf("once the server answers again: LastSeq %d, %v; want 10 (the frozen append stored nothing)", last, err)
	}
}
