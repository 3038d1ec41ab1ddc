package vfs_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"testing"

	"github.com/cubelinux/cube/engine/vfs"
)

// seededRand returns a generator seeded from the clock unless the test
// fixes the seed, and logs the seed so a failure can be replayed.
func seededRand(t testing.TB, seed uint64) *rand.Rand {
	t.Helper()
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func mustCreate(t testing.TB, fsys vfs.FS, name string, data []byte) vfs.File {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	return f
}

func mustSync(t testing.TB, f vfs.File) {
	t.Helper()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

func mustSyncDir(t testing.TB, fsys vfs.FS, dir string) {
	t.Helper()
	if err := fsys.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
}

// writeDurable creates name with data, syncs it and its directory.
func writeDurable(t testing.TB, fsys vfs.FS, dir, name string, data []byte) {
	t.Helper()
	f := mustCreate(t, fsys, name, data)
	mustSync(t, f)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	mustSyncDir(t, fsys, dir)
}

// contents reads the whole named file; ok is false if it does not exist.
func contents(t testing.TB, fsys vfs.FS, name string) (data []byte, ok bool) {
	t.Helper()
	f, err := fsys.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err = io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return data, true
}

func wantContents(t testing.TB, fsys vfs.FS, name string, want []byte) {
	t.Helper()
	got, ok := contents(t, fsys, name)
	if !ok {
		t.Fatalf("%s: does not exist, want %d bytes", name, len(want))
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: got %d bytes, want %d; first difference at offset %d: got %q, want %q",
			name, len(got), len(want), i, clip(got[i:]), clip(want[i:]))
	}
}

func wantMissing(t testing.TB, fsys vfs.FS, name string) {
	t.Helper()
	if _, err := fsys.Stat(name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat %s: got %v, want not-exist", name, err)
	}
}

func clip(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}
