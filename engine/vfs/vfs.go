package vfs

import (
	"io"
	"os"
)

// File is an open file. It is the subset of *os.File the engine uses.
//
// Sync is a data sync (fdatasync on Linux): it makes the file's contents
// durable, and its size when the size changed. It does not make the file's
// directory entry durable; that is FS.SyncDir's job.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.WriterAt
	io.Closer

	// Sync makes everything written so far durable (fdatasync).
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
	// Size reports the file's current size.
	Size() (int64, error)
	// Preallocate reserves space for [off, off+n) without changing the
	// visible size where the platform allows (fallocate KEEP_SIZE); it is a
	// hint and may do nothing.
	Preallocate(off, n int64) error
	// Name is the path the file was opened with.
	Name() string
}

// FS is the file system the engine does all its I/O through. Paths are
// slash- or OS-separated as the implementation expects; the engine builds
// them with path/filepath.
type FS interface {
	// Create creates or truncates the named file for reading and writing.
	// A new file is readable and writable by its owner only (0600); an
	// existing one keeps its mode.
	Create(name string) (File, error)
	// Open opens an existing file read-only.
	Open(name string) (File, error)
	// OpenReadWrite opens an existing file for reading and writing.
	OpenReadWrite(name string) (File, error)
	// Remove deletes a file or an empty directory.
	Remove(name string) error
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	// MkdirAll creates a directory and its parents, each new one with
	// perm (less the umask, on the real file system). Existing ones keep
	// their mode.
	MkdirAll(dir string, perm os.FileMode) error
	// Chmod sets the permission bits of the named file or directory.
	Chmod(name string, perm os.FileMode) error
	// List returns the names (not paths) of the entries in dir, sorted.
	List(dir string) ([]string, error)
	// Stat describes the named file.
	Stat(name string) (os.FileInfo, error)
	// SyncDir makes the directory's entries durable: files created,
	// renamed or removed in it survive a crash once SyncDir returns.
	SyncDir(dir string) error
	// Lock takes an exclusive lock on the named file, creating it if
	// needed (0600, as Create). It fails at once (ErrLocked) if another process or another
	// open of the same FS holds it. Close releases it.
	Lock(name string) (io.Closer, error)
}
