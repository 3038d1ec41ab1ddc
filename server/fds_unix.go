//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package server

import (
	"math"

	"golang.org/x/sys/unix"
)

// openFileLimit returns the soft RLIMIT_NOFILE (which the Go runtime has
// already raised to the hard limit), or 0 if unknown.
func openFileLimit() int {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil || r.Cur > math.MaxInt32 {
		return 0
	}
	return int(r.Cur)
}
