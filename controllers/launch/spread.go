package launch

import "golang.org/x/sys/unix"

// fsTopDir is the inode flag FS_TOPDIR_FL (chattr +T), which
// golang.org/x/sys does not name.
const fsTopDir = 0x00020000

// spreadRuns marks the runs directory as the top of directory
// hierarchies (chattr +T), so that ext4 places each run's directory, and
// with it the run's files, in a block group of its own instead of next to
// its siblings.
//
// Why it matters: without a journal, ext4 does not reuse an inode freed
// in the last seconds, and finds that out by reading each candidate's
// inode. A burst of runs creates and removes thousands of files (a clone,
// the inputs, the work directories), so with every run in the same group
// each new file stepped over all of them: a quarter of all the CPU of 20
// tasks started at once, on such a filesystem (docs/benchmarks.md, "Sixth
// round"). On other filesystems, and on ext4 with a journal, it changes
// at most where the runs' files are placed, and where the flag is not
// supported nothing is done: it is an optimisation, never a requirement.
func spreadRuns(dir string) {
	// The directory itself, never what a link or a FIFO put in its place
	// would open (O_NONBLOCK: a FIFO must not hold the start-up).
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil || flags&fsTopDir != 0 {
		return
	}
	_ = unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags|fsTopDir))
}
