//go:build !linux

package main

import (
	"syscall"
	"time"
)

func devProcAttr() *syscall.SysProcAttr { return nil }

// runnersUnder finds nothing off Linux: runs left by a failed benchmark
// end by themselves, minutes later.
func runnersUnder(string) []int { return nil }

// treeCPU is not measured off Linux.
func treeCPU(int) time.Duration { return 0 }

// rssMiB is not measured off Linux.
func rssMiB(int) float64 { return 0 }

// selfCPU is not measured off Linux.
func selfCPU() time.Duration { return 0 }
