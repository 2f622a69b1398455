package cmd

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/bastion-dev/bastion/internal/store"
)

// lockSQLiteStore takes, for the life of this process, an exclusive lock
// on a file beside the SQLite database the DSN names: SQLite serves one
// manager. Two would each keep their own live output, the second's
// runners' lines reaching only its own clients, and both write one file
// over whatever shares it. A second manager on the same database stops at
// once, saying so, before it touches the cluster. The lock goes with the
// process, however it ends (the kernel drops it), so a manager killed
// with SIGKILL does not keep its successor out. Nil, and no lock, for a
// PostgreSQL DSN.
//
// It sees only managers that share the file (one host, or a volume
// mounted by several pods): the chart refuses more than one replica with
// SQLite at install, where replicas would each have their own volume.
func lockSQLiteStore(dsn string) (*os.File, error) {
	path, ok := store.SQLitePath(dsn)
	if !ok || path == "" {
		return nil, nil // not SQLite, or store.Open says what is wrong
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	// The lock file sits beside the database's real file: a symlink to it
	// (a DSN naming an alias) would otherwise get a lock of its own, and
	// two managers one database. A symlinked directory needs nothing: the
	// lock file is then in the real directory already. (Hard links are
	// not seen: their names share nothing.)
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	lockPath := abs + "-manager.lock"
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking the SQLite store: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(lockPath)
		_ = f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("locking the SQLite store %s: %w", abs, err)
		}
		return nil, fmt.Errorf("the SQLite store %s is in use by another bastion manager (%s): SQLite serves one manager only; "+
			"to run more than one replica, use PostgreSQL (--store postgres://… or --store-file)", abs, cmp.Or(strings.TrimSpace(string(holder)), "its pid not written yet"))
	}
	host, _ := os.Hostname()
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "pid %d on %s\n", os.Getpid(), cmp.Or(host, "an unnamed host"))
	return f, nil
}
