package store

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/bastion-dev/bastion/internal/store/pgtest"
)

// One PostgreSQL server serves the whole test binary, started by the first
// test that needs it (so `-run TestSQLite` needs no PostgreSQL) and stopped
// by TestMain, so no server outlives the run.
var pg struct {
	once sync.Once
	srv  *pgtest.Server
	err  error
}

// PostgresServer returns the package's test server. A missing PostgreSQL
// fails the test, never skips it: CI installs it, and a skipped backend
// would let the two backends drift apart unnoticed.
func PostgresServer(t testing.TB) *pgtest.Server {
	t.Helper()
	pg.once.Do(func() { pg.srv, pg.err = pgtest.Start() })
	if pg.err != nil {
		t.Fatalf("PostgreSQL for the store tests: %v", pg.err)
	}
	return pg.srv
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pg.srv != nil {
		if err := pg.srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}
