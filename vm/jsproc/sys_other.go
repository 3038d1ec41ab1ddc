//go:build !linux

package jsproc

import (
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

func interruptPipe(fd string) *os.File { return nil }

func workerPipe[T any](x T) T { return x }
