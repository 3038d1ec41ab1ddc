//go:build !unix

package engine_test

import "testing"

// threadCPU would return the CPU time the calling thread has used; there
// is no per-thread CPU clock to read here, so it returns 0 and the region
// benchmarks' cpu-ns/op reads 0 on this system.
func threadCPU(b *testing.B) int64 { return 0 }

// processCPU would return the CPU time the process has used; 0 here.
func processCPU(b *testing.B) int64 { return 0 }
