package engine_test

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// fillStore writes, checkpoints and writes again, so that the tree holds
// every kind of file the store makes: FORMAT, LOCK, wal segments and the
// spare, checkpoints and MANIFEST.
func fillStore(t *testing.T, dir string) {
	t.Helper()
	db := mustOpen(t, dir, engine.Options{CheckpointInterval: -1})
	ns := mustNS(t, db, "p", 1)
	for i := range 10 {
		if err := ns.Put(ctx, []int32{int32(i)}, []byte("secret")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ns.Put(ctx, []int32{99}, []byte("secret")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkPrivate walks dir and fails for every directory that is not 0700 and
// every file that is not 0600. It returns how many entries it checked.
func checkPrivate(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		n++
		want := fs.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %04o, want %04o", path, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFilesAreOwnersOnly creates a store (its directory and a parent that
// did not exist) under umask 022 and 000 on the real file system, and walks
// the tree: every directory must be 0700 and every file 0600.
//
// Breaks seen caught: vfs OS Create or Lock with 0666 (files 0644 / 0666);
// engine dirPerm 0755 (the parent and data directories).
func TestFilesAreOwnersOnly(t *testing.T) {
	for _, mask := range []int{0o022, 0o000} {
		withUmask(t, mask, func() {
			root := t.TempDir()
			if err := os.Chmod(root, 0o700); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, "parent", "data")
			fillStore(t, dir)
			n := checkPrivate(t, filepath.Join(root, "parent"))
			// parent, data, FORMAT, LOCK, wal/, its LOCK, a segment,
			// checkpoint/, a checkpoint, MANIFEST at least.
			if n < 10 {
				t.Errorf("umask %03o: only %d entries in the tree; the store did not write what the test expects", mask, n)
			}
			if t.Failed() {
				t.Fatalf("umask %03o: the store's files are open to others", mask)
			}
		})
	}
}

// TestLooseStoreIsTightened opens a store whose files were opened up
// (chmod -R 0755/0644, as a copy under a loose umask leaves them): Open
// makes them private again, logs what it changed, and the data is intact.
//
// Break seen caught: dropping the tighten call from Open.
func TestLooseStoreIsTightened(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	fillStore(t, dir)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(path, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	db := mustOpen(t, dir, engine.Options{CheckpointInterval: -1, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	ns, err := db.Namespace("p")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ns.Get(ctx, []int32{99}); err != nil || string(v) != "secret" {
		t.Fatalf("Get after tightening = %q, %v", v, err)
	}
	checkPrivate(t, dir)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logged.String(), "private") || !strings.Contains(logged.String(), "0644->0600") {
		t.Errorf("the log does not say what was tightened:\n%s", logged.String())
	}
}

// TestLooseStoreThatCannotBeTightened: when chmod is refused (a directory
// owned by another user), Open fails, saying what is wrong and what to do,
// and does not go on to use the store.
func TestLooseStoreThatCannotBeTightened(t *testing.T) {
	mem := vfs.NewMem()
	db := openMem(t, mem, engine.Options{})
	mustNS(t, db, "p", 1)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mem.Chmod("/data/FORMAT", 0o644); err != nil {
		t.Fatal(err)
	}
	refuse := vfs.NewFaulty(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpChmod {
			return syscall.EPERM
		}
		return nil
	}))
	_, err := engine.Open("/data", engine.Options{FS: refuse})
	if err == nil {
		t.Fatal("Open of a store it could not make private succeeded")
	}
	if !errors.Is(err, syscall.EPERM) || !strings.Contains(err.Error(), "FORMAT is open to other users (mode 0644)") || !strings.Contains(err.Error(), "chmod -R go-rwx /data") {
		t.Fatalf("Open error = %v; want it to name the file, its mode and the fix", err)
	}
}
