package cube

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cubelinux/cube/engine"
)

// RekeyOptions configure Rekey: the file system (nil means the operating
// system's) and the logger for the notices of the opens it does. See
// engine.RekeyOptions.
type RekeyOptions = engine.RekeyOptions

// RekeyReport says what Rekey did.
// Its JSON is snake_case, like the stats reports', for cube rekey --json.
type RekeyReport struct {
	// Already is set when the store was under the new key when Rekey
	// began (an earlier rekey did the work, and if that one was cut short
	// this one finished it): nothing was rewritten.
	Already bool `json:"already"`
	// Encrypted says whether the store is now encrypted.
	Encrypted bool `json:"encrypted"`
	// Namespaces, Records and Bytes describe the checkpoint written under
	// the new key: the store's whole contents.
	Namespaces int    `json:"namespaces"`
	Records    uint64 `json:"records"`
	Bytes      int64  `json:"checkpoint_bytes"`
	// CacheRemoved is set when Rekey removed the default WASM compilation
	// cache (dir/cache/wasm), which holds compiled code in clear.
	CacheRemoved bool `json:"cache_removed"`
}

// Rekey moves the stopped store in dir from oldKey to newKey; nil means no
// key, so it also encrypts a plain store (oldKey nil) and decrypts an
// encrypted one (newKey nil):
//
//	err := cube.WriteKeyFile("new.key")
//	newKey, err := cube.ReadKeyFile("new.key")
//	rep, err := cube.Rekey(ctx, "cube.data", oldKey, newKey, cube.RekeyOptions{})
//
// It writes the store's whole state as one checkpoint under newKey beside
// the old files, makes it durable, commits by one directory rename, and
// only then removes the old checkpoints and log. A crash or error at any
// point leaves a store that opens under exactly one of the two keys with
// all its data; running Rekey again with the same keys finishes the job.
// See engine.Rekey.
//
// When the store ends up encrypted, the default WASM compilation cache
// (dir/cache/wasm, see Options.CacheDir) is removed too: it holds the
// programs' compiled code in clear, and an Open with a key does not use it.
// A cache elsewhere (an explicit Options.CacheDir) is left alone.
//
// # Errors
//
// ErrNoStore if dir holds no store (nothing is created); ErrWrongKey if
// neither key opens it; ErrLocked if it is open, in this process or
// another (a daemon serving it: stop it first); ErrBadOptions for a key
// that is not 32 bytes.
//
// # Notes
//
// The old files are unlinked, not overwritten: a file system or disk can
// keep their blocks, and so the old bytes, after an unlink.
func Rekey(ctx context.Context, dir string, oldKey, newKey []byte, o RekeyOptions) (RekeyReport, error) {
	r, err := engine.Rekey(ctx, dir, oldKey, newKey, o)
	rep := RekeyReport{Already: r.Already, Encrypted: r.Encrypted, Namespaces: r.Namespaces, Records: r.Records, Bytes: r.Bytes}
	if err != nil {
		return rep, err
	}
	// The cache is the operating system's files even when the store's are
	// not (Open makes it only on the OS file system).
	if newKey != nil && o.FS == nil {
		removed, err := removeCache(defaultCacheDir(dir))
		rep.CacheRemoved = removed
		if err != nil {
			return rep, fmt.Errorf("cube: rekey %s: the store is under the new key, but removing its compilation cache failed: %w", dir, err)
		}
	}
	return rep, nil
}

// defaultCacheDir is where Open keeps the WASM compilation cache of a
// plain store on the operating system's file system.
func defaultCacheDir(dir string) string { return filepath.Join(dir, "cache", "wasm") }

// removeCache removes the compilation cache dir and, if that leaves it
// empty, its parent (dir/cache). It reports whether there was a cache.
func removeCache(dir string) (bool, error) {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return true, err
	}
	os.Remove(filepath.Dir(dir)) // only if empty: someone else's files stay
	return true, nil
}
