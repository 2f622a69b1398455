package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Lock is an exclusive hold on a data dir: two `bastion dev` runs on one
// data dir would fight over etcd's files.
type Lock struct{ f *os.File }

// LockDataDir takes the data dir's lock or says who holds it.
func LockDataDir(dataDir string) (*Lock, error) {
	path := filepath.Join(dataDir, "bastion-dev.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir %s is not writable: %w", dataDir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		_ = f.Close()
		return nil, fmt.Errorf("data dir %s is in use by another bastion dev (pid %s); stop it or pick another --data-dir", dataDir, string(holder))
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "%d", os.Getpid())
	return &Lock{f: f}, nil
}

// Unlock releases the data dir.
func (l *Lock) Unlock() {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
}
