package engine_test

import (
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync is the raw flush BenchmarkDurablePut compares the engine with:
// fdatasync(2), the call vfs.OS makes on Linux.
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
