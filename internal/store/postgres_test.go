package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bastion-dev/bastion/internal/store"
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
