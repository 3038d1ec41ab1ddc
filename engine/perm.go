package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/cubelinux/cube/engine/vfs"
)

// dirPerm is the mode of every directory the store makes. Its files hold
// values in clear (unless it is encrypted) and the program registry, so
// they are the owner's alone, as PostgreSQL and etcd keep theirs: files
// are created 0600 (vfs.FS.Create). A umask only removes bits, so new
// entries are never looser than these, whatever it is.
const dirPerm fs.FileMode = 0o700

// storeEntries are the names the store keeps at the top of its directory.
// Only these are tightened: the directory may be one the owner also uses
// for other things, which are not the store's to change.
var storeEntries = []string{formatFile, formatFile + ".tmp", "LOCK", "wal", "checkpoint"}

// tighten removes group and other permission bits from dir, from the
// store's entries in it, and from everything in wal/ and checkpoint/, so
// that a directory made by an older cube or copied in under a loose umask
// is private before anything in it is read. Entries that are neither
// files nor directories (the daemon's socket) are left alone: the private
// directory already shuts others out. It returns what it changed, for the
// log. An entry it may not change (owned by another user) fails Open with
// a message saying what to do.
func tighten(fsys vfs.FS, dir string) ([]string, error) {
	var changed []string
	var visit func(path string, descend bool) error
	visit = func(path string, descend bool) error {
		fi, err := fsys.Stat(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // not made yet, or a temp file gone meanwhile
			}
			return fmt.Errorf("engine: stat %s: %w", path, err)
		}
		if !fi.IsDir() && !fi.Mode().IsRegular() {
			return nil
		}
		if mode := fi.Mode().Perm(); mode&0o077 != 0 {
			if err := fsys.Chmod(path, mode&^0o077); err != nil {
				return fmt.Errorf("engine: %s is open to other users (mode %04o) and cannot be made private: %w; run chmod -R go-rwx %s as its owner", path, mode, err, dir)
			}
			changed = append(changed, fmt.Sprintf("%s %04o->%04o", path, mode, mode&^0o077))
		}
		if !fi.IsDir() || !descend {
			return nil
		}
		names, err := fsys.List(path)
		if err != nil {
			return fmt.Errorf("engine: list %s: %w", path, err)
		}
		for _, n := range names {
			if err := visit(filepath.Join(path, n), false); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(dir, false); err != nil {
		return changed, err
	}
	for _, n := range storeEntries {
		if err := visit(filepath.Join(dir, n), true); err != nil {
			return changed, err
		}
	}
	return changed, nil
}
