//go:build !unix

package vfs_test

import "testing"

// setUmask skips: there is no umask and there are no POSIX permission bits
// to check here, so the mode checks say nothing on this system.
func setUmask(t *testing.T, mask int) {
	t.Helper()
	t.Skip("no umask and no POSIX permission bits on this system")
}
