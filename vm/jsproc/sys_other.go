//go:build !linux

package jsproc

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
