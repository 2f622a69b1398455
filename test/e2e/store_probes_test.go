package e2e

import (
	"fmt"
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
	probe := func(path string) (int, string, error) { return getText(client, "http://"+probes+path) }
	eventually(t, 60*time.Second, "the probes answer while the store waits for the migration", func() error {
		if code, body, err := probe("/healthz"); err != nil || code != http.StatusOK {
			return fmt.Errorf("/healthz: %d %q %v", code, body, err)
		}
		return nil
	})
	var holder uint32
	if err := conn.QueryRow(t.Context(), `SELECT pg_backend_pid()`).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the log saying why the manager waits, and for whom", func() error {
		data, _ := os.ReadFile(m.logPath(m.starts))
		log := string(data)
		if !strings.Contains(log, "waiting for another replica's migration of the store's schema") {
			return fmt.Errorf("not in the log yet")
		}
		if want := fmt.Sprintf(`"holderPID":%d`, holder); !strings.Contains(log, want) {
			return fmt.Errorf("the log does not name the holder (%s):\n%s", want, tail(log, 5))
		}
		return nil
	})
	// Several looks over a few seconds: the wait goes on, and so do the
	// answers.
	for range 5 {
		if code, body, err := probe("/healthz"); err != nil || code != http.StatusOK {
			t.Fatalf("/healthz while the store opens: %d %q %v", code, body, err)
		}
		code, body, err := probe("/readyz")
		if err != nil || code != http.StatusServiceUnavailable || !strings.Contains(body, "the output store is opening") {
			t.Fatalf("/readyz while the store opens: %d %q %v, want 503 saying the store is opening", code, body, err)
		}
		time.Sleep(500 * time.Millisecond)
	}

	// The other migration ends: this replica opens its store (and
	// migrates it, the database being empty), starts, and becomes ready.
	// The probes answer throughout, on the same address: not one look
	// meets a closed port or a /healthz that is not 200.
	if err := migration.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	looks := 0
	for ; ; looks++ {
		if code, body, err := probe("/healthz"); err != nil || code != http.StatusOK {
			t.Fatalf("/healthz while the manager migrates and starts (look %d): %d %q %v", looks, code, body, err)
		}
		code, body, err := probe("/readyz")
		if err != nil {
			t.Fatalf("/readyz while the manager migrates and starts (look %d): %v", looks, err)
		}
		if code == http.StatusOK {
			break
		}
		if code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("/readyz: %d %q after %d looks, want 503 until ready, then 200", code, body, looks)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("ready after %d looks at the probes, every one answered", looks)
	m.waitAPI()
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
