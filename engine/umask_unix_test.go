//go:build unix

package engine_test

import (
	"syscall"
	"testing"
)

// withUmask runs fn with the process umask set to mask. The umask is the
// whole process's: these tests do not run in parallel.
func withUmask(t *testing.T, mask int, fn func()) {
	t.Helper()
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	fn()
}
