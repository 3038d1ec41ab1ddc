//go:build !linux

package vfs

// Sync is a full fsync where fdatasync is not available.
func (f *osFile) Sync() error { return f.File.Sync() }

// Preallocate does nothing where fallocate is not available; it is a hint.
func (f *osFile) Preallocate(off, n int64) error { return nil }
