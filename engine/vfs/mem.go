package vfs

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MemFS is an in-memory FS that remembers, for every file and directory,
// what a power loss would keep, so that crash tests run in-process and
// deterministically. See the package documentation for the crash model,
// Crash and CrashClean for the crash itself.
//
// Paths are slash-separated (OS separators are converted); relative paths
// are taken from the root. A MemFS is safe for concurrent use. Its zero
// value is not usable: call NewMem.
type MemFS struct {
	mu    sync.Mutex
	root  *memNode
	gen   uint64 // bumped by every crash; handles of older generations are dead
	locks map[*memNode]*memLock
}

var _ FS = (*MemFS)(nil)

// memNode is an inode: a directory or a regular file. Directory entries
// point at nodes, so a rename moves the node (and its durable contents) and
// an open handle keeps working on a node no entry points at any more.
type memNode struct {
	isDir bool
	mode  os.FileMode

	// Directories.
	children       map[string]*memNode // what List sees
	syncedChildren map[string]*memNode // as of the last SyncDir

	// Files.
	data   []byte // what reads see (the page cache)
	synced []byte // what the disk holds, as of the last Sync
	// [dirtyLo, dirtyHi) covers every byte of data that may differ from
	// synced, and everything past the shorter of the two; empty when the
	// file is clean. Keeping a hull, not a copy, makes Sync cost what was
	// written since the last one.
	dirtyLo, dirtyHi int64
}

func newDir(perm os.FileMode) *memNode {
	return &memNode{
		isDir:          true,
		mode:           os.ModeDir | perm.Perm(),
		children:       map[string]*memNode{},
		syncedChildren: map[string]*memNode{},
	}
}

func (n *memNode) markDirty(lo, hi int64) {
	if n.dirtyLo >= n.dirtyHi {
		n.dirtyLo, n.dirtyHi = lo, hi
		return
	}
	n.dirtyLo = min(n.dirtyLo, lo)
	n.dirtyHi = max(n.dirtyHi, hi)
}

func (n *memNode) clean() { n.dirtyLo, n.dirtyHi = 0, 0 }

// resize returns b with length n, zero-filling any growth.
func resize(b []byte, n int64) []byte {
	if n <= int64(len(b)) {
		return b[:n]
	}
	old := len(b)
	if n > int64(cap(b)) {
		// Double rather than let append grow by 1.25x: a log file grows
		// by small appends, and each growth copies the whole file.
		nb := make([]byte, n, max(n, 2*int64(cap(b))))
		copy(nb, b)
		return nb
	}
	b = b[:n]
	clear(b[old:])
	return b
}

func (n *memNode) writeAt(p []byte, off int64) {
	end := off + int64(len(p))
	old := int64(len(n.data))
	if end > old {
		n.data = resize(n.data, end)
	}
	copy(n.data[off:], p)
	n.markDirty(min(off, old), end)
}

func (n *memNode) truncate(size int64) {
	old := int64(len(n.data))
	n.data = resize(n.data, size)
	if size != old {
		n.markDirty(min(size, old), max(size, old))
	}
}

// sync makes data durable.
func (n *memNode) sync() {
	size := int64(len(n.data))
	n.synced = resize(n.synced, size)
	if lo, hi := n.dirtyLo, min(n.dirtyHi, size); lo < hi {
		copy(n.synced[lo:hi], n.data[lo:hi])
	}
	n.clean()
}

// loseDirty models a failed writeback: the dirty pages are marked clean
// without reaching the disk, which keeps their old contents (zeros past the
// old end of file). Reads still see the new bytes until a crash.
func (n *memNode) loseDirty() {
	n.synced = resize(n.synced, int64(len(n.data)))
	n.clean()
}

// NewMem returns an empty in-memory file system holding only its root
// directory, which always exists.
func NewMem() *MemFS {
	return &MemFS{root: newDir(0o755), locks: map[*memNode]*memLock{}}
}

// split turns a path into its components below the root.
func split(name string) []string {
	p := path.Clean("/" + filepath.ToSlash(name))
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

func pathErr(op, name string, err error) error {
	return &os.PathError{Op: op, Path: name, Err: err}
}

// walk returns the directory node of comps. Callers hold fs.mu.
func (fs *MemFS) walk(comps []string) (*memNode, error) {
	n := fs.root
	for _, c := range comps {
		if !n.isDir {
			return nil, syscall.ENOTDIR
		}
		next, ok := n.children[c]
		if !ok {
			return nil, syscall.ENOENT
		}
		n = next
	}
	return n, nil
}

// lookup returns the node a path names.
func (fs *MemFS) lookup(name string) (*memNode, error) {
	return fs.walk(split(name))
}

// parent returns the directory holding the entry name, and the entry's base
// name. The root has no parent.
func (fs *MemFS) parent(name string) (*memNode, string, error) {
	comps := split(name)
	if len(comps) == 0 {
		return nil, "", syscall.EBUSY
	}
	dir, err := fs.walk(comps[:len(comps)-1])
	if err != nil {
		return nil, "", err
	}
	if !dir.isDir {
		return nil, "", syscall.ENOTDIR
	}
	return dir, comps[len(comps)-1], nil
}

// Create implements FS. Creating an existing file truncates that same
// inode, as O_TRUNC does; the truncation is volatile until the file's Sync.
// A new file's directory entry is volatile until SyncDir of its directory.
func (fs *MemFS) Create(name string) (File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir, base, err := fs.parent(name)
	if err != nil {
		return nil, pathErr("create", name, err)
	}
	n, ok := dir.children[base]
	switch {
	case !ok:
		n = &memNode{mode: 0o600}
		dir.children[base] = n
	case n.isDir:
		return nil, pathErr("create", name, syscall.EISDIR)
	default:
		n.truncate(0)
	}
	return fs.newHandle(n, name, true), nil
}

// Open implements FS. Directories cannot be opened as files here.
func (fs *MemFS) Open(name string) (File, error) { return fs.open("open", name, false) }

// OpenReadWrite implements FS.
func (fs *MemFS) OpenReadWrite(name string) (File, error) { return fs.open("open", name, true) }

func (fs *MemFS) open(op, name string, write bool) (File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.lookup(name)
	if err != nil {
		return nil, pathErr(op, name, err)
	}
	if n.isDir {
		return nil, pathErr(op, name, syscall.EISDIR)
	}
	return fs.newHandle(n, name, write), nil
}

// Remove implements FS. The removal is volatile until SyncDir of the
// parent; open handles keep the inode alive.
func (fs *MemFS) Remove(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir, base, err := fs.parent(name)
	if err != nil {
		return pathErr("remove", name, err)
	}
	n, ok := dir.children[base]
	if !ok {
		return pathErr("remove", name, syscall.ENOENT)
	}
	if n.isDir && len(n.children) > 0 {
		return pathErr("remove", name, syscall.ENOTEMPTY)
	}
	delete(dir.children, base)
	return nil
}

// Rename implements FS, with os.Rename's rules (an existing directory is
// never replaced). The inode moves with its durable contents; the
// directory change is volatile until SyncDir of both directories involved.
func (fs *MemFS) Rename(oldname, newname string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	perr := func(err error) error {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	odir, obase, err := fs.parent(oldname)
	if err != nil {
		return perr(err)
	}
	n, ok := odir.children[obase]
	if !ok {
		return perr(syscall.ENOENT)
	}
	ndir, nbase, err := fs.parent(newname)
	if err != nil {
		return perr(err)
	}
	if odir == ndir && obase == nbase {
		return nil
	}
	if n.isDir {
		oc, nc := split(oldname), split(newname)
		if len(nc) > len(oc) && slices.Equal(nc[:len(oc)], oc) {
			return perr(syscall.EINVAL) // into its own subtree
		}
	}
	if dst, ok := ndir.children[nbase]; ok {
		switch {
		case dst.isDir:
			// os.Rename refuses to replace any directory; so does this.
			return perr(syscall.EEXIST)
		case n.isDir:
			return perr(syscall.ENOTDIR)
		}
	}
	delete(odir.children, obase)
	ndir.children[nbase] = n
	return nil
}

// MkdirAll implements FS. New directories are volatile entries of their
// parents until SyncDir of each parent, as on Linux.
func (fs *MemFS) MkdirAll(dir string, perm os.FileMode) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.root
	for _, c := range split(dir) {
		next, ok := n.children[c]
		if !ok {
			next = newDir(perm)
			n.children[c] = next
		} else if !next.isDir {
			return pathErr("mkdir", dir, syscall.ENOTDIR)
		}
		n = next
	}
	return nil
}

// Chmod implements FS. Modes are outside the crash model: a crash keeps
// the mode last set.
func (fs *MemFS) Chmod(name string, perm os.FileMode) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.lookup(name)
	if err != nil {
		return pathErr("chmod", name, err)
	}
	n.mode = n.mode&^os.ModePerm | perm.Perm()
	return nil
}

// List implements FS.
func (fs *MemFS) List(dir string) ([]string, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.lookup(dir)
	if err != nil {
		return nil, pathErr("readdir", dir, err)
	}
	if !n.isDir {
		return nil, pathErr("readdir", dir, syscall.ENOTDIR)
	}
	return slices.Sorted(maps.Keys(n.children)), nil
}

// Stat implements FS.
func (fs *MemFS) Stat(name string) (os.FileInfo, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.lookup(name)
	if err != nil {
		return nil, pathErr("stat", name, err)
	}
	return n.info(name), nil
}

func (n *memNode) info(name string) os.FileInfo {
	base := path.Base("/" + filepath.ToSlash(name))
	return memInfo{name: base, size: int64(len(n.data)), mode: n.mode}
}

// SyncDir implements FS: the directory's current entries become its durable
// entries. It makes neither the entries' contents nor sub-directories'
// entries durable.
func (fs *MemFS) SyncDir(dir string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.lookup(dir)
	if err != nil {
		return pathErr("syncdir", dir, err)
	}
	if !n.isDir {
		return pathErr("syncdir", dir, syscall.ENOTDIR)
	}
	n.syncedChildren = maps.Clone(n.children)
	return nil
}

// Lock implements FS. It creates the file (a volatile entry) if needed. A
// second Lock of the same inode fails with ErrLocked until the first is
// closed or the file system crashes.
func (fs *MemFS) Lock(name string) (io.Closer, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir, base, err := fs.parent(name)
	if err != nil {
		return nil, pathErr("lock", name, err)
	}
	n, ok := dir.children[base]
	if !ok {
		n = &memNode{mode: 0o600}
		dir.children[base] = n
	} else if n.isDir {
		return nil, pathErr("lock", name, syscall.EISDIR)
	}
	if fs.locks[n] != nil {
		return nil, fmt.Errorf("vfs: lock %s: %w", name, ErrLocked)
	}
	l := &memLock{fs: fs, n: n, gen: fs.gen}
	fs.locks[n] = l
	return l, nil
}

type memLock struct {
	fs     *MemFS
	n      *memNode
	gen    uint64
	closed bool
}

// Close releases the lock. After a crash it reports ErrCrashed: the crash
// already released it.
func (l *memLock) Close() error {
	l.fs.mu.Lock()
	defer l.fs.mu.Unlock()
	switch {
	case l.gen != l.fs.gen:
		return ErrCrashed
	case l.closed:
		return os.ErrClosed
	}
	l.closed = true
	delete(l.fs.locks, l.n)
	return nil
}

type memInfo struct {
	name string
	size int64
	mode os.FileMode
}

func (fi memInfo) Name() string       { return fi.name }
func (fi memInfo) Size() int64        { return fi.size }
func (fi memInfo) Mode() os.FileMode  { return fi.mode }
func (fi memInfo) ModTime() time.Time { return time.Time{} } // no clock: deterministic
func (fi memInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi memInfo) Sys() any           { return nil }
