package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// treeCPU is the CPU time (user and system) the process root and its
// descendants have used so far: bastion dev, its etcd and kube-apiserver,
// and its runners, those that ended included (a process that waited for a
// child holds the child's time, and its children's, in cutime and cstime). On a loaded machine a measure's wall time says as much
// about the neighbours as about the server; its CPU time does not.
func treeCPU(root int) time.Duration {
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	ticks := map[int]int64{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command name, which is in parentheses and
		// may hold spaces: state ppid ... utime (14th field) stime (15th).
		end := bytes.LastIndexByte(stat, ')')
		fields := strings.Fields(string(stat[end+1:]))
		if len(fields) < 15 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		var sum int64
		for _, f := range fields[11:15] { // utime stime cutime cstime
			n, _ := strconv.ParseInt(f, 10, 64)
			sum += n
		}
		parent[pid], ticks[pid] = ppid, sum
	}
	var total int64
	for pid, t := range ticks {
		for p := pid; p > 1; p = parent[p] {
			if p == root {
				total += t
				break
			}
		}
	}
	const clockTicks = 100 // USER_HZ, 100 on every Linux port that runs Go
	return time.Duration(total) * time.Second / clockTicks
}

// rssMiB is a process's resident memory (VmRSS) in MiB; 0 if unknown.
func rssMiB(pid int) float64 {
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// selfCPU is the CPU time (user and system) this benchmark has used so
// far: its client shares the machine's cores with the server it measures.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
