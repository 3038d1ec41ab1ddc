//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package server

// openFileLimit is unknown here.
func openFileLimit() int { return 0 }
