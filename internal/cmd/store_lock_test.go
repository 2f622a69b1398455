package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockSQLiteStore_everyNameOfOneFileIsOneLock: a second manager on the
// same SQLite file is refused however its DSN spells the path: through a
// symlinked directory, a symlink to the file, a relative path, or with
// "..". A symlink to the file took a lock file of its own (beside the
// symlink), and two managers shared one database.
func TestLockSQLiteStore_everyNameOfOneFileIsOneLock(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "data")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(real, "bastion.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(db, filepath.Join(dir, "alias.db")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)

	first, err := lockSQLiteStore("sqlite://" + db)
	if err != nil || first == nil {
		t.Fatalf("the first manager's lock = %v, %v", first, err)
	}
	defer first.Close()
	for _, dsn := range []string{
		"sqlite://" + filepath.Join(dir, "link", "bastion.db"),
		filepath.Join(dir, "link", "bastion.db"),
		"sqlite://" + filepath.Join(dir, "alias.db"),
		"link/bastion.db",
		"./data/../link/bastion.db",
		"data/bastion.db",
	} {
		f, err := lockSQLiteStore(dsn)
		if err == nil {
			f.Close()
			t.Errorf("a second manager on %s (the same file) took the lock", dsn)
			continue
		}
		if !strings.Contains(err.Error(), "in use by another bastion manager") {
			t.Errorf("a second manager on %s: %v, want \"in use by another bastion manager\"", dsn, err)
		}
	}
	info, err := os.Stat(db + "-manager.lock")
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("the lock file's permissions = %o, want 600", perm)
	}
}

// TestLockSQLiteStore_aNewDatabaseBehindASymlinkedDirectory: on a first
// start the file does not exist yet; the lock file, beside it, is in the
// directory's real path however it is named.
func TestLockSQLiteStore_aNewDatabaseBehindASymlinkedDirectory(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "data")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	first, err := lockSQLiteStore(filepath.Join(real, "new.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if f, err := lockSQLiteStore(filepath.Join(dir, "link", "new.db")); err == nil {
		f.Close()
		t.Fatal("a second manager on a new database, named through a symlinked directory, took the lock")
	}
}
