package jsproc

import (
	"os"
	"strconv"
	"syscall"
)

// sysProcAttr makes a worker die with the daemon.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// interruptPipe opens the worker's interrupt pipe, descriptor fd (a
// decimal string; "" when there is none), in non-blocking mode so that
// its reader parks on the runtime's poller rather than holding a thread
// in a system call. nil when there is none.
func interruptPipe(fd string) *os.File {
	n, err := strconv.Atoi(fd)
	if err != nil || n < 3 {
		return nil
	}
	if syscall.SetNonblock(n, true) != nil {
		return nil
	}
	return os.NewFile(uintptr(n), "interrupts")
}
