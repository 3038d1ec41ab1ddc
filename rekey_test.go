package cube_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/vm"
)

var (
	key1 = bytes.Repeat([]byte{0x11}, 32)
	key2 = bytes.Repeat([]byte{0x22}, 32)
)

// clearMarker is a value stored in the tests' stores: no file of an
// encrypted store may hold it.
const clearMarker = "in-clear-3b9d0c"

// fillStore opens dir under key, makes namespace "w" with the marker at
// (1,2,3), registers testdata/get.wasm as "get" and runs it (so that it is
// compiled), and closes the store.
func fillStore(t *testing.T, dir string, o cube.Options) {
	t.Helper()
	o.TelemetryInterval = -1
	db, err := cube.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	ns := newNS(t, db, "w", 3)
	if err := ns.Put(ctx, []int32{1, 2, 3}, []byte(clearMarker)); err != nil {
		t.Fatal(err)
	}
	prog(t, db, "w", "get", vm.WASM, mustRead(t, "testdata/get.wasm"), cube.ProgOptions{ReadOnly: true})
	res, err := db.Run(ctx, "w", "get", coordArgs(1, 2, 3))
	if err != nil || string(res.Output) != clearMarker {
		t.Fatalf("run get: %q, %v", res.Output, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// readMarker opens dir under key and runs "get", which compiles it anew
// if no cache holds it.
func readMarker(t *testing.T, dir string, key []byte) error {
	t.Helper()
	db, err := cube.Open(dir, cube.Options{Engine: engine.Options{EncryptionKey: key, MustExist: true}, TelemetryInterval: -1})
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := db.Run(ctx, "w", "get", coordArgs(1, 2, 3))
	if err != nil || string(res.Output) != clearMarker {
		t.Fatalf("run get: %q, %v", res.Output, err)
	}
	return nil
}

// filesUnder lists the regular files under dir, relative to it.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// noneInClear fails if any file under dir holds the marker.
func noneInClear(t *testing.T, dir, where string) {
	t.Helper()
	for _, rel := range filesUnder(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(clearMarker)) {
			t.Fatalf("%s: %s holds a value in clear", where, rel)
		}
	}
}

// TestEncryptedStoreCachesInMemory: a store opened with a key keeps its
// WASM compilation cache in memory (nothing under dir/cache, so no
// compiled code in clear), unless Options.CacheDir is set; a plain store
// keeps it in dir/cache/wasm (which shows the check can see a cache).
//
// Deliberate break this test was seen to catch: Open's cache default
// without the EncryptionKey condition: the encrypted store gets
// dir/cache/wasm ("encrypted: dir/cache holds [wasm/...]").
func TestEncryptedStoreCachesInMemory(t *testing.T) {
	plain := t.TempDir()
	fillStore(t, plain, cube.Options{})
	if len(filesUnder(t, filepath.Join(plain, "cache", "wasm"))) == 0 {
		t.Fatal("plain: no compilation cache in dir/cache/wasm; the check below proves nothing")
	}

	// The key given either way: Options.EncryptionKey, or the engine's.
	for _, o := range []cube.Options{{EncryptionKey: key1}, {Engine: engine.Options{EncryptionKey: key1}}} {
		enc := t.TempDir()
		fillStore(t, enc, o)
		if got := filesUnder(t, filepath.Join(enc, "cache")); len(got) > 0 {
			t.Fatalf("encrypted: dir/cache holds %v", got)
		}
		if _, err := os.Stat(filepath.Join(enc, "cache")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("encrypted: dir/cache exists (%v)", err)
		}
		noneInClear(t, enc, "encrypted")
		if err := readMarker(t, enc, key1); err != nil { // compiles again, from the store
			t.Fatal(err)
		}
	}

	// An explicit CacheDir is used, key or not.
	mine := filepath.Join(t.TempDir(), "cache")
	fillStore(t, t.TempDir(), cube.Options{Engine: engine.Options{EncryptionKey: key1}, CacheDir: mine})
	if len(filesUnder(t, mine)) == 0 {
		t.Fatal("encrypted with an explicit CacheDir: nothing in it")
	}
}

// TestRekey moves a plain store to a key, to another, and back to plain
// through cube.Rekey: the data and programs come along, only the new key
// opens the store, no file holds a value in clear while it is encrypted,
// and the plain store's compilation cache (compiled code in clear) is
// gone once the store is encrypted.
//
// Deliberate break this test was seen to catch: Rekey not removing the
// default cache ("plain -> key1: CacheRemoved false, with a cache before:
// true"; without that check, the cache check after it fails the same way).
func TestRekey(t *testing.T) {
	dir := t.TempDir()
	fillStore(t, dir, cube.Options{})
	steps := []struct {
		name     string
		old, new []byte
	}{
		{"plain -> key1", nil, key1},
		{"key1 -> key2", key1, key2},
		{"key2 -> plain", key2, nil},
	}
	for _, s := range steps {
		hadCache := len(filesUnder(t, filepath.Join(dir, "cache"))) > 0
		rep, err := cube.Rekey(ctx, dir, s.old, s.new, cube.RekeyOptions{})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if rep.Already || rep.Encrypted != (s.new != nil) || rep.Namespaces != 1 || rep.Records == 0 || rep.Bytes == 0 {
			t.Fatalf("%s: report %+v", s.name, rep)
		}
		if rep.CacheRemoved != (hadCache && s.new != nil) {
			t.Fatalf("%s: CacheRemoved %v, with a cache before: %v", s.name, rep.CacheRemoved, hadCache)
		}
		if s.new != nil {
			if got := filesUnder(t, filepath.Join(dir, "cache")); len(got) > 0 {
				t.Fatalf("%s: dir/cache holds %v", s.name, got)
			}
			noneInClear(t, dir, s.name)
		}
		if err := readMarker(t, dir, s.old); !errors.Is(err, cube.ErrWrongKey) {
			t.Fatalf("%s: open under the old key: %v, want ErrWrongKey", s.name, err)
		}
		if err := readMarker(t, dir, s.new); err != nil {
			t.Fatalf("%s: open under the new key: %v", s.name, err)
		}
		rep, err = cube.Rekey(ctx, dir, s.old, s.new, cube.RekeyOptions{})
		if err != nil || !rep.Already {
			t.Fatalf("%s again: %+v, %v; want Already", s.name, rep, err)
		}
	}
	if _, err := cube.Rekey(ctx, filepath.Join(dir, "nowhere"), nil, key1, cube.RekeyOptions{}); !errors.Is(err, cube.ErrNoStore) {
		t.Fatalf("rekey of no store: %v, want ErrNoStore", err)
	}
	db := open(t, dir, cube.Options{})
	if _, err := cube.Rekey(ctx, dir, nil, key1, cube.RekeyOptions{}); !errors.Is(err, cube.ErrLocked) {
		t.Fatalf("rekey of an open store: %v, want ErrLocked", err)
	}
	db.Close()
}

// treeHash hashes every name, mode and content under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s %v %d\n", rel, fi.Mode(), fi.Size())
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%x\n", sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestRefusedKeyChangesNothing: opening an encrypted store with a wrong
// key or none, a plain store with a key, or rekeying with an old key that
// does not open the store, is refused with ErrWrongKey saying what to do,
// and leaves every file, name and mode in the directory as it was. The
// directories are set up so that a careless open would change them: loose
// modes (which an accepted open tightens) and a compilation cache in
// clear beside the encrypted store (which an accepted open removes).
//
// Deliberate breaks this test was seen to catch:
//   - cube.Open removing the stale cache before engine.Open: the refused
//     open deletes dir/cache/wasm ("encrypted, wrong key: the refused open
//     changed the directory");
//   - engine.Open tightening modes before the key check (tighten moved
//     to the top of engine/db.go's open): the refused open chmods the
//     loose files (the same failure).
func TestRefusedKeyChangesNothing(t *testing.T) {
	enc := t.TempDir()
	fillStore(t, enc, cube.Options{Engine: engine.Options{EncryptionKey: key1}})
	plain := t.TempDir()
	fillStore(t, plain, cube.Options{})
	stale := filepath.Join(enc, "cache", "wasm")
	if err := os.MkdirAll(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, "compiled"), []byte("code in clear"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{enc, plain} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, "FORMAT"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		dir  string
		do   func(dir string) error
		want string
	}{
		{"encrypted, wrong key", enc, func(dir string) error { return readMarker(t, dir, key2) }, "the key does not open"},
		{"encrypted, no key", enc, func(dir string) error { return readMarker(t, dir, nil) }, "is encrypted"},
		{"plain, a key", plain, func(dir string) error { return readMarker(t, dir, key1) }, "is not encrypted"},
		{"rekey encrypted, wrong old key", enc, func(dir string) error {
			_, err := cube.Rekey(ctx, dir, key2, nil, cube.RekeyOptions{})
			return err
		}, "does not open"},
		{"rekey encrypted, no old key", enc, func(dir string) error {
			_, err := cube.Rekey(ctx, dir, nil, key2, cube.RekeyOptions{})
			return err
		}, "is encrypted"},
	}
	for _, tt := range tests {
		before := treeHash(t, tt.dir)
		err := tt.do(tt.dir)
		if !errors.Is(err, cube.ErrWrongKey) || !strings.Contains(err.Error(), tt.want) {
			t.Fatalf("%s: %v, want ErrWrongKey saying %q", tt.name, err, tt.want)
		}
		if after := treeHash(t, tt.dir); after != before {
			t.Fatalf("%s: the refused open changed the directory", tt.name)
		}
	}
	// The right key is accepted, and the open does what the refused ones
	// must not have done.
	if err := readMarker(t, enc, key1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the accepted open left the stale cache: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(enc, "FORMAT")); err != nil || fi.Mode() != 0o600 {
		t.Fatalf("the accepted open left FORMAT %v (%v)", fi.Mode(), err)
	}
}
