package launch

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func dirFlags(t *testing.T, dir string) (uint32, error) {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
}

// The runs directory is the top of its runs' hierarchies (chattr +T), so
// that ext4 spreads the runs over its block groups (spread.go).
func TestPrepareBase_marksTheRunsDirectoryAsTheTopOfItsRunsHierarchies(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	l := &LocalLauncher{BaseDir: dir}
	if err := l.PrepareBase(); err != nil {
		t.Fatal(err)
	}
	flags, err := dirFlags(t, dir)
	if err != nil {
		t.Skipf("the filesystem of %s keeps no inode flags (%v): nothing to check here", dir, err)
	}
	if flags&fsTopDir == 0 {
		t.Fatalf("runs directory flags %#x lack FS_TOPDIR_FL", flags)
	}
	// A second manager start finds the flag set and keeps it.
	if err := l.PrepareBase(); err != nil {
		t.Fatal(err)
	}
	if again, _ := dirFlags(t, dir); again != flags {
		t.Fatalf("flags went from %#x to %#x on the second start", flags, again)
	}
}

// A filesystem without the flag (tmpfs) takes the runs all the same.
func TestPrepareBase_worksWhereTheFilesystemHasNoSuchFlag(t *testing.T) {
	shm, err := os.MkdirTemp("/dev/shm", "bastion-runs-test-")
	if err != nil {
		t.Skipf("no /dev/shm here: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(shm) })
	l := &LocalLauncher{BaseDir: filepath.Join(shm, "runs")}
	if err := l.PrepareBase(); err != nil {
		t.Fatalf("PrepareBase on tmpfs: %v", err)
	}
	if info, err := os.Stat(l.BaseDir); err != nil || !info.IsDir() {
		t.Fatalf("runs directory %s: %v", l.BaseDir, err)
	}
}
