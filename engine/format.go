package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/cubelinux/cube/engine/internal/base"
	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/vfs"
)

// FormatVersion is the data directory format this code writes and reads.
const FormatVersion = 1

const formatFile = "FORMAT"

// keyCheck is sealed into FORMAT of an encrypted store so that a wrong
// key is found before anything is read or written.
var keyCheck = []byte("cube key check v1")

type format struct {
	Format    int    `json:"format"`
	Encrypted bool   `json:"encrypted"`
	KeyCheck  []byte `json:"keycheck,omitempty"`
}

// readFormat reads dir/FORMAT; exists is false for a new directory.
func readFormat(fsys vfs.FS, dir string) (f format, exists bool, err error) {
	path := filepath.Join(dir, formatFile)
	file, err := fsys.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, false, nil
	}
	if err != nil {
		return f, false, fmt.Errorf("engine: open %s: %w", path, err)
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, 1<<16))
	if err != nil {
		return f, true, fmt.Errorf("engine: read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Format <= 0 {
		return f, true, base.Corruptf(path, 0, "FORMAT is not a cube format file; restore the data directory from a backup")
	}
	if f.Format > FormatVersion {
		return f, true, fmt.Errorf("%w: %s is format %d, this cube reads up to %d; upgrade cube", ErrNewerFormat, dir, f.Format, FormatVersion)
	}
	return f, true, nil
}

// checkKey verifies that the options' key matches the directory.
func (f format) checkKey(dir string, c *crypt.Cipher) error {
	switch {
	case f.Encrypted && c == nil:
		return fmt.Errorf("%w: %s is encrypted; pass its key in Options.EncryptionKey", ErrWrongKey, dir)
	case !f.Encrypted && c != nil:
		return fmt.Errorf("%w: %s is not encrypted, but a key was given; open it without one", ErrWrongKey, dir)
	case c != nil:
		if _, err := c.Open(nil, f.KeyCheck, nil); err != nil {
			return fmt.Errorf("%w: the key does not open %s", ErrWrongKey, dir)
		}
	}
	return nil
}

// writeFormat creates dir/FORMAT durably (write, sync, rename, sync dir).
func writeFormat(fsys vfs.FS, dir string, c *crypt.Cipher) error {
	f := format{Format: FormatVersion, Encrypted: c != nil}
	if c != nil {
		f.KeyCheck = c.Seal(nil, keyCheck, nil)
	}
	b, _ := json.Marshal(f)
	tmp := filepath.Join(dir, formatFile+".tmp")
	file, err := fsys.Create(tmp)
	if err != nil {
		return fmt.Errorf("engine: create %s: %w", tmp, err)
	}
	if _, err := file.Write(append(b, '\n')); err != nil {
		file.Close()
		return fmt.Errorf("engine: write %s: %w", tmp, err)
	}
	if err := file.Sync(); err != nil {
		file.Close()
		return fmt.Errorf("engine: sync %s: %w", tmp, err)
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("engine: close %s: %w", tmp, err)
	}
	if err := fsys.Rename(tmp, filepath.Join(dir, formatFile)); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	return fsys.SyncDir(dir)
}
