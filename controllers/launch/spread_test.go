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
	var fs unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(dir), &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type != unix.EXT4_SUPER_MAGIC {
		t.Skipf("%s is not on ext4 (filesystem type %#x), the one filesystem this flag is for", dir, fs.Type)
	}
	l := &LocalLauncher{BaseDir: dir}
	if err := l.PrepareBase(); err != nil {
		t.Fatal(err)
	}
	flags, err := dirFlags(t, dir)
	if err != nil {
		t.Fatal(err)
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
