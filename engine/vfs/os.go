package vfs

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// OS returns the FS backed by the operating system's file system. Paths are
// ordinary OS paths. It holds no state; every call returns an equivalent
// value.
//
// On Linux File.Sync is fdatasync(2), File.Preallocate is
// fallocate(FALLOC_FL_KEEP_SIZE), SyncDir opens the directory and fsyncs it,
// and Lock is flock(LOCK_EX|LOCK_NB) on a file it opens (and keeps open
// until the returned Closer is closed). Files are created 0600: the
// engine's files hold values in clear (unless encrypted) and are the
// owner's alone, whatever the umask (which can only remove bits).
func OS() FS { return osFS{} }

type osFS struct{}

var _ FS = osFS{}

func (osFS) Create(name string) (File, error) {
	return openOS(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC)
}

func (osFS) Open(name string) (File, error) {
	return openOS(name, os.O_RDONLY)
}

func (osFS) OpenReadWrite(name string) (File, error) {
	return openOS(name, os.O_RDWR)
}

func openOS(name string, flag int) (File, error) {
	f, err := os.OpenFile(name, flag|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	// The raw connection is taken once so that Sync and Preallocate reach
	// the descriptor without allocating and without racing a Close.
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &osFile{File: f, rc: rc}, nil
}

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }

func (osFS) Chmod(name string, perm os.FileMode) error { return os.Chmod(name, perm.Perm()) }

func (osFS) List(dir string) ([]string, error) {
	// os.ReadDir sorts by name.
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names, nil
}

func (osFS) Stat(name string) (os.FileInfo, error) { return os.Stat(name) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	// A directory's fsync is a full fsync: fdatasync would not be enough for
	// the entries on every file system.
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return fmt.Errorf("vfs: sync dir %s: %w", dir, serr)
	}
	return cerr
}

func (osFS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("vfs: lock %s: %w", name, err)
	}
	// Closing the descriptor releases the flock.
	return f, nil
}

// osFile is a File backed by an *os.File.
type osFile struct {
	*os.File
	rc syscall.RawConn
}

var _ File = (*osFile)(nil)

func (f *osFile) Size() (int64, error) {
	fi, err := f.File.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func ignoringEINTR(fn func() error) error {
	for {
		err := fn()
		if err != syscall.EINTR {
			return err
		}
	}
}
