//go:build !linux

package engine_test

import "os"

// fdatasync is the raw flush BenchmarkDurablePut compares the engine with.
// Without fdatasync(2) it is a full fsync (F_FULLFSYNC on darwin), which is
// what vfs.OS's Sync does on these systems too.
func fdatasync(f *os.File) error { return f.Sync() }
