package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/store/pgtest"
)

// A replica whose store is not open yet, because it migrates the schema
// or waits for another replica's migration, answers its health probes:
// alive (so the kubelet lets it finish, however long a migration takes)
// and not ready (so the Service sends it nothing). Before, nothing
// answered until the store was open, and a migration longer than the
// chart's startup allowance was restarted, rolled back and started over,
// for ever (docs/install.md, "Upgrades"). The manager now binds the probe
// address before anything else and keeps it: once it serves, /readyz
// says ready on the same address.
//
// Here another replica's migration is a PostgreSQL session that holds the
// migration lock; the manager under test waits for it as it would.
func TestManager_answersItsProbesAliveAndNotReadyUntilItsStoreIsOpen(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	pg, err := pgtest.Start()
	if err != nil {
		t.Fatalf("PostgreSQL: %v", err)
	}
	t.Cleanup(func() { _ = pg.Close() })
	dsn := pg.NewDatabase(t)

	// The other replica's migration, under way.
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(t.Context()) })
	migration, err := conn.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migration.Exec(t.Context(), `SELECT pg_advisory_xact_lock($1)`, int64(store.MigrationLock)); err != nil {
		t.Fatal(err)
	}

	m := newManagerProc(t, c)
	probes := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	setFlag(t, m.args, "--store", dsn)
	setFlag(t, m.args, "--health-probe-bind-address", probes)
	m.spawn()

	client := &http.Client{Timeout: 2 * time.Second}
	get := func(path string) (int, string, error) {
		resp, err := client.Get("http://" + probes + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	eventually(t, 60*time.Second, "the probes answer while the store waits for the migration", func() error {
		if code, body, err := get("/healthz"); err != nil || code != http.StatusOK {
			return fmt.Errorf("/healthz: %d %q %v", code, body, err)
		}
		return nil
	})
	eventually(t, 30*time.Second, "the log saying why the manager waits", func() error {
		data, _ := os.ReadFile(m.logPath(m.starts))
		if !strings.Contains(string(data), "waiting for another replica's migration of the store's schema") {
			return fmt.Errorf("not in the log yet")
		}
		return nil
	})
	// Several looks over a few seconds: the wait goes on, and so do the
	// answers.
	for range 5 {
		if code, body, err := get("/healthz"); err != nil || code != http.StatusOK {
			t.Fatalf("/healthz while the store opens: %d %q %v", code, body, err)
		}
		code, body, err := get("/readyz")
		if err != nil || code != http.StatusServiceUnavailable || !strings.Contains(body, "the output store is opening") {
			t.Fatalf("/readyz while the store opens: %d %q %v, want 503 saying the store is opening", code, body, err)
		}
		time.Sleep(500 * time.Millisecond)
	}

	// The other migration ends: this replica opens its store (and
	// migrates it, the database being empty), then serves, and its own
	// probes answer ready on the same address.
	if err := migration.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	m.waitAPI()
	eventually(t, 30*time.Second, "the manager's own probes, ready", func() error {
		if code, body, err := get("/readyz"); err != nil || code != http.StatusOK {
			return fmt.Errorf("/readyz: %d %q %v", code, body, err)
		}
		return nil
	})
	if code, body, err := get("/healthz"); err != nil || code != http.StatusOK {
		t.Fatalf("/healthz once serving: %d %q %v", code, body, err)
	}
}

// setFlag sets the value that follows flag in args, which must hold it.
func setFlag(t *testing.T, args []string, flag, value string) {
	t.Helper()
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("no %s in %q", flag, args)
	}
	args[i+1] = value
}
