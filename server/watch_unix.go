//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package server

import (
	"net"

	"golang.org/x/sys/unix"
)

// hungUp polls uc for POLLHUP, which a unix stream socket reports once
// its peer has closed both directions.
func hungUp(uc *net.UnixConn) bool {
	rc, err := uc.SyscallConn()
	if err != nil {
		return true
	}
	hup := true
	cerr := rc.Control(func(fd uintptr) {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(p, 0); err == nil && n == 1 {
			hup = p[0].Revents&unix.POLLHUP != 0
		}
	})
	return cerr != nil || hup
}
