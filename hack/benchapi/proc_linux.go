package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// devProcAttr has the kernel send bastion dev SIGTERM if this program dies
// without stopping it (kill -9, a crash): it then stops its control plane.
func devProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// runnersUnder lists the processes whose command line names a path under
// dir: the `bastion runner --input <dir>/<run>/input` of a dev server.
func runnersUnder(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	needle := []byte(filepath.Clean(dir) + string(filepath.Separator))
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, needle) {
			pids = append(pids, pid)
		}
	}
	return pids
}
