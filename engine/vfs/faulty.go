package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// OpKind names the kind of operation a Faulty file system asks its
// Injector about.
type OpKind uint8

// The operations an Injector sees. File.Size is reported as OpStat.
const (
	OpCreate      OpKind = iota + 1 // FS.Create
	OpOpen                          // FS.Open, FS.OpenReadWrite
	OpRead                          // File.Read, File.ReadAt
	OpWrite                         // File.Write, File.WriteAt
	OpSync                          // File.Sync
	OpTruncate                      // File.Truncate
	OpPreallocate                   // File.Preallocate
	OpClose                         // File.Close
	OpRemove                        // FS.Remove
	OpRename                        // FS.Rename
	OpMkdir                         // FS.MkdirAll
	OpList                          // FS.List
	OpStat                          // FS.Stat, File.Size
	OpSyncDir                       // FS.SyncDir
	OpLock                          // FS.Lock
	OpChmod                         // FS.Chmod
)

var opNames = [...]string{
	OpCreate: "create", OpOpen: "open", OpRead: "read", OpWrite: "write",
	OpSync: "sync", OpTruncate: "truncate", OpPreallocate: "preallocate",
	OpClose: "close", OpRemove: "remove", OpRename: "rename", OpMkdir: "mkdir",
	OpList: "list", OpStat: "stat", OpSyncDir: "syncdir", OpLock: "lock",
	OpChmod: "chmod",
}

func (k OpKind) String() string {
	if int(k) < len(opNames) && opNames[k] != "" {
		return opNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// Op describes one operation about to be done.
type Op struct {
	Kind OpKind
	// Path is the name the file was opened with, or the FS method's path
	// argument (for OpRename, the old name).
	Path string
	// NewPath is the new name of an OpRename.
	NewPath string
	// Offset is where a read, write, truncate (the new size) or
	// preallocation starts; for Read and Write it is the handle's offset.
	Offset int64
	// Len is the byte count of a read, write or preallocation.
	Len int64
}

// An Injector decides, before each operation of a Faulty file system,
// whether it fails. A nil error lets it through. Injectors are called
// concurrently when the file system is used concurrently.
type Injector interface {
	Inject(op Op) error
}

// InjectorFunc adapts a function to an Injector.
type InjectorFunc func(op Op) error

// Inject calls f.
func (f InjectorFunc) Inject(op Op) error { return f(op) }

// ShortWriteError, returned by an Injector for an OpWrite, lets the first N
// bytes through before the write fails with Err (what a full disk does to
// the write that crosses its end). For other operations it is a plain
// failure with Err.
type ShortWriteError struct {
	N   int64
	Err error
}

func (e *ShortWriteError) Error() string {
	return fmt.Sprintf("short write of %d bytes: %v", e.N, e.Err)
}

func (e *ShortWriteError) Unwrap() error { return e.Err }

// InjectedError is the error a Faulty file system returns for an operation
// its Injector failed. It matches ErrInjected and unwraps to the
// Injector's error, so errors.Is(err, syscall.EIO) works.
type InjectedError struct {
	Op  Op
	Err error
}

func (e *InjectedError) Error() string {
	p := e.Op.Path
	if e.Op.Kind == OpRename {
		p += " -> " + e.Op.NewPath
	}
	return fmt.Sprintf("vfs: injected fault: %s %s: %v", e.Op.Kind, p, e.Err)
}

func (e *InjectedError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrInjected) true.
func (e *InjectedError) Is(target error) bool { return target == ErrInjected }

// NewFaulty returns an FS that does every operation through fs, but first
// asks inj whether it fails. A failed operation is not done at all (except
// the first N bytes of a ShortWriteError, and Close, which releases the
// file beneath anyway, as close(2) does) and returns an *InjectedError.
//
// # Sync failures
//
// A failed Sync does not sync. Worse, as on Linux, where a failed writeback
// marks the dirty pages clean and a later fsync succeeds without writing
// them: when fs is a MemFS, the writes that the failed Sync should have made
// durable are lost to the disk for good. Reads still see them, but no later
// Sync makes them durable, and after a crash the file holds its old bytes
// there (zeros past the old end). A program that retries fsync and then
// trusts the data fails a crash test, as it should: an fsync error must be
// fatal.
func NewFaulty(fs FS, inj Injector) FS {
	return &faultyFS{fs: fs, inj: inj}
}

type faultyFS struct {
	fs  FS
	inj Injector
}

var _ FS = (*faultyFS)(nil)

func (f *faultyFS) inject(op Op) error {
	if err := f.inj.Inject(op); err != nil {
		var sw *ShortWriteError
		if errors.As(err, &sw) {
			err = sw.Err
		}
		return &InjectedError{Op: op, Err: err}
	}
	return nil
}

func (f *faultyFS) Create(name string) (File, error) {
	if err := f.inject(Op{Kind: OpCreate, Path: name}); err != nil {
		return nil, err
	}
	return f.wrap(f.fs.Create(name))
}

func (f *faultyFS) Open(name string) (File, error) {
	if err := f.inject(Op{Kind: OpOpen, Path: name}); err != nil {
		return nil, err
	}
	return f.wrap(f.fs.Open(name))
}

func (f *faultyFS) OpenReadWrite(name string) (File, error) {
	if err := f.inject(Op{Kind: OpOpen, Path: name}); err != nil {
		return nil, err
	}
	return f.wrap(f.fs.OpenReadWrite(name))
}

func (f *faultyFS) wrap(file File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &faultyFile{File: file, fs: f}, nil
}

func (f *faultyFS) Remove(name string) error {
	if err := f.inject(Op{Kind: OpRemove, Path: name}); err != nil {
		return err
	}
	return f.fs.Remove(name)
}

func (f *faultyFS) Rename(oldname, newname string) error {
	if err := f.inject(Op{Kind: OpRename, Path: oldname, NewPath: newname}); err != nil {
		return err
	}
	return f.fs.Rename(oldname, newname)
}

func (f *faultyFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := f.inject(Op{Kind: OpMkdir, Path: dir}); err != nil {
		return err
	}
	return f.fs.MkdirAll(dir, perm)
}

func (f *faultyFS) Chmod(name string, perm os.FileMode) error {
	if err := f.inject(Op{Kind: OpChmod, Path: name}); err != nil {
		return err
	}
	return f.fs.Chmod(name, perm)
}

func (f *faultyFS) List(dir string) ([]string, error) {
	if err := f.inject(Op{Kind: OpList, Path: dir}); err != nil {
		return nil, err
	}
	return f.fs.List(dir)
}

func (f *faultyFS) Stat(name string) (os.FileInfo, error) {
	if err := f.inject(Op{Kind: OpStat, Path: name}); err != nil {
		return nil, err
	}
	return f.fs.Stat(name)
}

func (f *faultyFS) SyncDir(dir string) error {
	if err := f.inject(Op{Kind: OpSyncDir, Path: dir}); err != nil {
		return err
	}
	return f.fs.SyncDir(dir)
}

func (f *faultyFS) Lock(name string) (io.Closer, error) {
	if err := f.inject(Op{Kind: OpLock, Path: name}); err != nil {
		return nil, err
	}
	return f.fs.Lock(name)
}

// faultyFile asks its file system's Injector before each operation.
type faultyFile struct {
	File
	fs *faultyFS

	mu  sync.Mutex // serializes Read and Write, so off matches the file's offset
	off int64
}

var _ File = (*faultyFile)(nil)

// dirtyLoser is implemented by files that can model a failed writeback.
type dirtyLoser interface{ loseDirty() }

func (f *faultyFile) loseDirty() {
	if dl, ok := f.File.(dirtyLoser); ok {
		dl.loseDirty()
	}
}

func (f *faultyFile) op(kind OpKind, off, n int64) Op {
	return Op{Kind: kind, Path: f.Name(), Offset: off, Len: n}
}

func (f *faultyFile) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fs.inject(f.op(OpRead, f.off, int64(len(p)))); err != nil {
		return 0, err
	}
	n, err := f.File.Read(p)
	f.off += int64(n)
	return n, err
}

func (f *faultyFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.inject(f.op(OpRead, off, int64(len(p)))); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *faultyFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.write(p, f.off, func(b []byte) (int, error) { return f.File.Write(b) })
	f.off += int64(n)
	return n, err
}

func (f *faultyFile) WriteAt(p []byte, off int64) (int, error) {
	return f.write(p, off, func(b []byte) (int, error) { return f.File.WriteAt(b, off) })
}

func (f *faultyFile) write(p []byte, off int64, do func([]byte) (int, error)) (int, error) {
	op := f.op(OpWrite, off, int64(len(p)))
	ierr := f.fs.inj.Inject(op)
	if ierr == nil {
		return do(p)
	}
	n := 0
	var sw *ShortWriteError
	if errors.As(ierr, &sw) {
		if k := min(max(sw.N, 0), int64(len(p))); k > 0 {
			var err error
			if n, err = do(p[:k]); err != nil {
				return n, err
			}
		}
		ierr = sw.Err
	}
	return n, &InjectedError{Op: op, Err: ierr}
}

func (f *faultyFile) Sync() error {
	if err := f.fs.inject(f.op(OpSync, 0, 0)); err != nil {
		f.loseDirty()
		return err
	}
	return f.File.Sync()
}

func (f *faultyFile) Truncate(size int64) error {
	if err := f.fs.inject(f.op(OpTruncate, size, 0)); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

func (f *faultyFile) Size() (int64, error) {
	if err := f.fs.inject(f.op(OpStat, 0, 0)); err != nil {
		return 0, err
	}
	return f.File.Size()
}

func (f *faultyFile) Preallocate(off, n int64) error {
	if err := f.fs.inject(f.op(OpPreallocate, off, n)); err != nil {
		return err
	}
	return f.File.Preallocate(off, n)
}

func (f *faultyFile) Close() error {
	ierr := f.fs.inject(f.op(OpClose, 0, 0))
	err := f.File.Close()
	if ierr != nil {
		return ierr
	}
	return err
}
