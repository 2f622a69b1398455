package main

import "syscall"

// devProcAttr has the kernel send bastion dev SIGTERM if this program dies
// without stopping it (kill -9, a crash): it then stops its control plane.
func devProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
