package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// KillLeftovers stops etcd and kube-apiserver processes that a previous run
// on dataDir left behind. envtest starts them in their own process groups, so
// when `bastion dev` is killed with SIGKILL (no chance to clean up) they
// survive it; they would hold etcd's data lock and the next start would
// fail. They are recognised by a command-line argument inside dataDir.
// Callers must hold the data dir's lock, so that no live run owns them.
func KillLeftovers(dataDir string) ([]int, error) {
	dataDir, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, err
	}
	pids, err := FindProcesses(dataDir)
	if err != nil || len(pids) == 0 {
		return nil, err
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return pids, nil
}

// FindProcesses lists the etcd and kube-apiserver processes whose command
// line names a path inside dataDir.
func FindProcesses(dataDir string) ([]int, error) {
	dataDir, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue // gone, or a kernel thread
		}
		args := splitCmdline(raw)
		switch filepath.Base(args[0]) {
		case "etcd", "kube-apiserver":
			if hasArgUnder(args[1:], dataDir) {
				pids = append(pids, pid)
			}
		}
	}
	return pids, nil
}

func splitCmdline(raw []byte) []string {
	parts := bytes.Split(bytes.TrimRight(raw, "\x00"), []byte{0})
	args := make([]string, len(parts))
	for i, p := range parts {
		args[i] = string(p)
	}
	return args
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}
