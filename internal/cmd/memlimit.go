package cmd

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// The manager's soft memory limit. Without one, Go's garbage collector
// paces itself on the heap's growth alone (GOGC), so a burst (many
// followers of long logs, a large restore) can take the process past its
// container's memory limit, and the kernel kills it, where a collection
// would have freed enough. With GOMEMLIMIT unset, the manager gives the
// runtime 90 % of the container's limit, leaving a tenth for memory the
// runtime does not manage (the binary's pages, the kernel's buffers that
// count against the cgroup).
const memoryLimitShare = 0.9

// setMemoryLimit sets the runtime's soft memory limit from the cgroup
// under root (cgroup v2's memory.max, else v1's memory.limit_in_bytes)
// unless GOMEMLIMIT is set, and returns the limit it set.
func setMemoryLimit(root string, getenv func(string) string) (int64, bool) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, false // the runtime read it already
	}
	limit, ok := cgroupMemoryLimit(root)
	if !ok {
		return 0, false
	}
	soft := int64(float64(limit) * memoryLimitShare)
	debug.SetMemoryLimit(soft)
	return soft, true
}

// cgroupMemoryLimit reads the memory limit of the cgroup mounted at root;
// false when there is none ("max", v1's "no limit" value near 2^63) or no
// cgroup file to read.
func cgroupMemoryLimit(root string) (int64, bool) {
	for _, file := range []string{"memory.max", filepath.Join("memory", "memory.limit_in_bytes")} {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			continue
		}
		text := strings.TrimSpace(string(data))
		n, err := strconv.ParseInt(text, 10, 64)
		if text == "max" || err != nil || n <= 0 || n >= math.MaxInt64/2 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}
