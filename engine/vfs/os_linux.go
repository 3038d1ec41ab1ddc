package vfs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Sync is fdatasync(2): the data and the size reach the disk, other
// metadata (mtime) may not.
func (f *osFile) Sync() error {
	var serr error
	err := f.rc.Control(func(fd uintptr) {
		serr = ignoringEINTR(func() error { return unix.Fdatasync(int(fd)) })
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	return nil
}

// Preallocate is fallocate(FALLOC_FL_KEEP_SIZE): blocks are reserved, the
// visible size does not change. A file system that cannot do it (EOPNOTSUPP)
// loses nothing but speed, so that is not an error.
func (f *osFile) Preallocate(off, n int64) error {
	if n <= 0 {
		return nil
	}
	var perr error
	err := f.rc.Control(func(fd uintptr) {
		perr = ignoringEINTR(func() error {
			return unix.Fallocate(int(fd), unix.FALLOC_FL_KEEP_SIZE, off, n)
		})
	})
	if err == nil {
		err = perr
	}
	if err == nil || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return nil
	}
	return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
}
