//go:build unix

package engine_test

import (
	"testing"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time the calling thread has used, in ns.
func threadCPU(b *testing.B) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return ts.Nano()
}

// processCPU returns the CPU time the whole process has used, in ns: the
// garbage collector's threads included, for work (opening a store) whose
// cost is partly its garbage.
func processCPU(b *testing.B) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return ts.Nano()
}
