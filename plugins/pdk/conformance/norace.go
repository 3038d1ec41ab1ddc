//go:build !race

package conformance

// Race reports a race-enabled build.
const Race = false
