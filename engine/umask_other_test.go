//go:build !unix

package engine_test

import "testing"

// withUmask skips: there is no umask and there are no POSIX permission bits
// to check here, so the mode tests say nothing on this system.
func withUmask(t *testing.T, mask int, fn func()) {
	t.Helper()
	t.Skip("no umask and no POSIX permission bits on this system")
}
