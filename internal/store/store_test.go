package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/store/storetest"
)

func openSQLite(t testing.TB) store.Store {
	return mustOpen(t, "sqlite://"+filepath.Join(t.TempDir(), "bastion.db"))
}

func openPostgres(t testing.TB) store.Store {
	return mustOpen(t, store.PostgresServer(t).NewDatabase(t))
}

func mustOpen(t testing.TB, dsn string) store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSQLite(t *testing.T) { storetest.Run(t, openSQLite) }

func TestPostgres(t *testing.T) {
	store.PostgresServer(t) // without PostgreSQL, fail once here rather than in every case
	storetest.Run(t, openPostgres)
}

func BenchmarkAppendLines(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { storetest.BenchmarkAppendLines(b, openSQLite) })
	b.Run("postgres", func(b *testing.B) { storetest.BenchmarkAppendLines(b, openPostgres) })
}

func BenchmarkAppendLinesManyTasks(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { storetest.BenchmarkAppendLinesManyTasks(b, openSQLite) })
	b.Run("postgres", func(b *testing.B) { storetest.BenchmarkAppendLinesManyTasks(b, openPostgres) })
}

func BenchmarkFollowLines(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { storetest.BenchmarkFollowLines(b, openSQLite) })
	b.Run("postgres", func(b *testing.B) { storetest.BenchmarkFollowLines(b, openPostgres) })
}

func BenchmarkSignIn(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { storetest.BenchmarkSignIn(b, openSQLite) })
	b.Run("postgres", func(b *testing.B) { storetest.BenchmarkSignIn(b, openPostgres) })
}

func BenchmarkClaimDelivery(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { storetest.BenchmarkClaimDelivery(b, openSQLite) })
	b.Run("postgres", func(b *testing.B) { storetest.BenchmarkClaimDelivery(b, openPostgres) })
}

func TestOpen_choosesTheBackendByDSN(t *testing.T) {
	dir := t.TempDir()
	for _, dsn := range []string{
		"sqlite://" + filepath.Join(dir, "a.db"),
		filepath.Join(dir, "b.db"),
		filepath.Join(dir, "odd ?#% name.db"),
	} {
		s := mustOpen(t, dsn)
		if err := s.AppendLines(t.Context(), store.TaskKey{ProjectID: 1, TaskID: 1}, []store.Line{{Seq: 1, Output: "x"}}); err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
	}
	s := mustOpen(t, store.PostgresServer(t).NewDatabase(t))
	if _, err := s.LastSeq(t.Context(), store.TaskKey{ProjectID: 1, TaskID: 1}); err != nil {
		t.Fatal(err)
	}
}

func TestOpen_refusesUnknownDSNsWithoutEchoingThem(t *testing.T) {
	for _, dsn := range []string{"", "mysql://root:hunter2@db/bastion", "postgres://u:hunter2@127.0.0.1:1/x?sslmode=bogus",
		"postgres://u:hunter2@127.0.0.1:1/x?sslmode=disable&connect_timeout=5"} {
		s, err := store.Open(t.Context(), dsn)
		if err == nil {
			s.Close()
			t.Fatalf("Open(%q) succeeded", dsn)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("Open(%q): the error shows the password: %v", dsn, err)
		}
	}
}

func TestSQLite_reopensWithDataAndSchemaKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bastion.db")
	testReopen(t, "sqlite://"+path)
	for _, f := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600 (output may hold secrets)", f, fi.Mode(), err)
		}
	}
}

func TestPostgres_reopensWithDataAndSchemaKept(t *testing.T) {
	testReopen(t, store.PostgresServer(t).NewDatabase(t))
}

func testReopen(t *testing.T, dsn string) {
	ctx := context.Background()
	key := store.TaskKey{ProjectID: 1, TaskID: 1}
	s := mustOpen(t, dsn)
	if err := s.AppendLines(ctx, key, []store.Line{{Seq: 1, Output: "a"}, {Seq: 3, Output: "c"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = mustOpen(t, dsn)
	if err := s.AppendLines(ctx, key, []store.Line{{Seq: 2, Output: "b"}}); err != nil {
		t.Fatal(err)
	}
	last, err := s.LastSeq(ctx, key)
	if err != nil || last != 3 {
		t.Fatalf("LastSeq after reopen = %d, %v; want 3", last, err)
	}
}

func BenchmarkHistoryStats(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { storetest.BenchmarkHistoryStats(b, openSQLite) })
	b.Run("postgres", func(b *testing.B) { storetest.BenchmarkHistoryStats(b, openPostgres) })
}
