//go:build unix

package vfs_test

import (
	"syscall"
	"testing"
)

// setUmask sets the process umask to mask until t ends. The umask is the
// whole process's: the tests that call this do not run in parallel.
func setUmask(t *testing.T, mask int) {
	t.Helper()
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}
