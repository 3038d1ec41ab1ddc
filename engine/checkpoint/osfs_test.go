package checkpoint_test

import (
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/cubelinux/cube/engine/vfs"
)

// osFS is a minimal OS-backed vfs.FS for these tests.
// TODO: replace with vfs.OS() and vfs.NewMem() once they are committed.
type osFS struct{}

var _ vfs.FS = osFS{}

type osFile struct{ *os.File }

func (f osFile) Size() (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
func (f osFile) Preallocate(off, n int64) error { return nil }

func (osFS) Create(name string) (vfs.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}
func (osFS) Open(name string) (vfs.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}
func (osFS) OpenReadWrite(name string) (vfs.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}
func (osFS) Remove(name string) error                    { return os.Remove(name) }
func (osFS) Rename(o, n string) error                    { return os.Rename(o, n) }
func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }
func (osFS) Stat(name string) (os.FileInfo, error)       { return os.Stat(name) }
func (osFS) List(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}
func (osFS) SyncDir(dir string) error {
	d, err := os.Open(filepath.Clean(dir))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
func (osFS) Lock(name string) (io.Closer, error) { return os.Create(name) }
