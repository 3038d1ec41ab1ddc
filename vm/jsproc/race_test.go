//go:build race

package jsproc_test

// raceBuild: under the race detector a worker short of memory may also die
// in the detector's own allocator, by a segmentation fault rather than the
// Go runtime's "out of memory".
const raceBuild = true
