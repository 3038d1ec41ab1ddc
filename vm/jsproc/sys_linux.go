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
// decimal string; "" when there is none), or returns nil. It stays in the
// blocking mode it was handed over in: its reader then waits in a system
// call on a thread of its own, where in the runtime's poller it made
// every idle moment of the worker an epoll_wait (3.6 per prog+run pair
// under cube stress, each a context switch).
func interruptPipe(fd string) *os.File {
	n, err := strconv.Atoi(fd)
	if err != nil || n < 3 {
		return nil
	}
	var st syscall.Stat_t
	if syscall.Fstat(n, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return nil
	}
	return os.NewFile(uintptr(n), "interrupts")
}
