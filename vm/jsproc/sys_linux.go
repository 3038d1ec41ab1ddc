package jsproc

import "syscall"

// sysProcAttr makes a worker die with the daemon.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
