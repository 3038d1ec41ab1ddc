package vfs

import (
	"io"
	"os"
	"syscall"
)

// memFile is an open handle on a MemFS inode. All its state is guarded by
// the file system's mutex.
type memFile struct {
	fs     *MemFS
	n      *memNode
	name   string
	gen    uint64
	write  bool
	closed bool
	off    int64
}

var _ File = (*memFile)(nil)

func (fs *MemFS) newHandle(n *memNode, name string, write bool) *memFile {
	return &memFile{fs: fs, n: n, name: name, gen: fs.gen, write: write}
}

// check reports why the handle cannot be used. Callers hold fs.mu.
func (f *memFile) check(op string, write bool) error {
	switch {
	case f.gen != f.fs.gen:
		return f.err(op, ErrCrashed)
	case f.closed:
		return f.err(op, os.ErrClosed)
	case write && !f.write:
		return f.err(op, syscall.EBADF)
	}
	return nil
}

func (f *memFile) err(op string, err error) error { return pathErr(op, f.name, err) }

func (f *memFile) Name() string { return f.name }

func (f *memFile) Read(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if f.off >= int64(len(f.n.data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	k := copy(p, f.n.data[f.off:])
	f.off += int64(k)
	return k, nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, f.err("read", syscall.EINVAL)
	}
	if off >= int64(len(f.n.data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	k := copy(p, f.n.data[off:])
	if k < len(p) {
		return k, io.EOF
	}
	return k, nil
}

// Write is volatile until Sync.
func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	f.n.writeAt(p, f.off)
	f.off += int64(len(p))
	return len(p), nil
}

// WriteAt is volatile until Sync.
func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, f.err("write", syscall.EINVAL)
	}
	f.n.writeAt(p, off)
	return len(p), nil
}

// Sync makes the inode's contents and size durable, not its directory
// entry.
func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("fdatasync", false); err != nil {
		return err
	}
	f.n.sync()
	return nil
}

// Truncate is volatile until Sync.
func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return f.err("truncate", syscall.EINVAL)
	}
	f.n.truncate(size)
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("stat", false); err != nil {
		return 0, err
	}
	return int64(len(f.n.data)), nil
}

// Preallocate does nothing but check its arguments: memory needs no
// reservation and KEEP_SIZE leaves the visible size alone.
func (f *memFile) Preallocate(off, n int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("fallocate", true); err != nil {
		return err
	}
	if off < 0 || n < 0 {
		return f.err("fallocate", syscall.EINVAL)
	}
	return nil
}

// Close releases the handle; it does not sync.
func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("close", false); err != nil {
		return err
	}
	f.closed = true
	return nil
}

// loseDirty is how a Faulty file system tells the inode beneath that a
// Sync failed: see memNode.loseDirty.
func (f *memFile) loseDirty() {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.check("fdatasync", false) == nil {
		f.n.loseDirty()
	}
}
