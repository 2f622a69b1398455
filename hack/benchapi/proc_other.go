//go:build !linux

package main

import "syscall"

func devProcAttr() *syscall.SysProcAttr { return nil }
