package checkpoint_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cubelinux/cube/engine/internal/base"
	"github.com/cubelinux/cube/engine/internal/checkpoint"
	"github.com/cubelinux/cube/engine/vfs"
)

func TestManifestRoundTrip(t *testing.T) {
	for _, m := range []checkpoint.Manifest{
		{},
		{Base: "base-1.ckpt", LSN: 1, Seq: 1},
		{Base: "b.ckpt", Deltas: []string{"d1.ckpt", "d2.ckpt", "d3.ckpt"}, LSN: 1 << 62, Seq: 1<<64 - 1},
		{Base: strings.Repeat("x", 255), Deltas: []string{"ü.ckpt"}},
	} {
		dir := t.TempDir()
		if err := checkpoint.WriteManifest(vfs.OS(), dir, m); err != nil {
			t.Fatal(err)
		}
		got, ok, err := checkpoint.ReadManifest(vfs.OS(), dir)
		if err != nil || !ok {
			t.Fatalf("ReadManifest = %v, %v", ok, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("got %+v, want %+v", got, m)
		}
		if _, err := os.Stat(filepath.Join(dir, "MANIFEST.tmp")); !os.IsNotExist(err) {
			t.Fatalf("MANIFEST.tmp left behind: %v", err)
		}
	}
}

func TestManifestMissing(t *testing.T) {
	m, ok, err := checkpoint.ReadManifest(vfs.OS(), t.TempDir())
	if ok || err != nil || m.Base != "" {
		t.Fatalf("ReadManifest of an empty dir = %+v, %v, %v", m, ok, err)
	}
}

func TestManifestInvalid(t *testing.T) {
	for _, m := range []checkpoint.Manifest{
		{Deltas: []string{"d.ckpt"}},
		{Base: "a/b.ckpt"},
		{Base: ".."},
		{Base: "MANIFEST"},
		{Base: "b.ckpt", Deltas: []string{"b.ckpt"}},
		{Base: "b.ckpt", Deltas: []string{""}},
		{Base: strings.Repeat("x", 256)},
	} {
		dir := t.TempDir()
		if err := checkpoint.WriteManifest(vfs.OS(), dir, m); !errors.Is(err, checkpoint.ErrInvalid) {
			t.Errorf("WriteManifest(%+v) = %v, want ErrInvalid", m, err)
		}
		if names, _ := vfs.OS().List(dir); len(names) != 0 {
			t.Errorf("WriteManifest(%+v) left %v", m, names)
		}
	}
}

// TestManifestCorruption flips every byte and cuts every length: always a
// *CorruptionError naming MANIFEST, never a wrong manifest.
func TestManifestCorruption(t *testing.T) {
	dir := t.TempDir()
	m := checkpoint.Manifest{Base: "b.ckpt", Deltas: []string{"d1.ckpt", "d2.ckpt"}, LSN: 500, Seq: 7}
	if err := checkpoint.WriteManifest(vfs.OS(), dir, m); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, checkpoint.ManifestName)
	orig, _ := os.ReadFile(path)
	expectCorrupt := func(b []byte, what string) {
		t.Helper()
		os.WriteFile(path, b, 0o644)
		_, ok, err := checkpoint.ReadManifest(vfs.OS(), dir)
		var ce *base.CorruptionError
		if !ok || !errors.As(err, &ce) || ce.File != path || ce.Offset < 0 || ce.Offset > int64(len(orig)) {
			t.Fatalf("%s: ReadManifest = %v, %v; want corruption", what, ok, err)
		}
	}
	for off := range orig {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			b := bytes.Clone(orig)
			b[off] ^= mask
			expectCorrupt(b, "flip")
		}
	}
	for n := 0; n < len(orig); n++ {
		expectCorrupt(orig[:n], "cut")
	}
	expectCorrupt(append(bytes.Clone(orig), 0), "appended")
}

func TestRemoveUnreferenced(t *testing.T) {
	dir := t.TempDir()
	m := checkpoint.Manifest{Base: "a.ckpt", Deltas: []string{"c.ckpt"}}
	if err := checkpoint.WriteManifest(vfs.OS(), dir, m); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.ckpt", "b.ckpt", "c.ckpt", "old.ckpt", "MANIFEST.tmp", "wal-1.log", "other"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	removed, err := checkpoint.RemoveUnreferenced(vfs.OS(), dir, m)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if want := []string{"MANIFEST.tmp", "b.ckpt", "old.ckpt"}; !slices.Equal(removed, want) {
		t.Fatalf("removed %v, want %v", removed, want)
	}
	names, _ := vfs.OS().List(dir)
	if want := []string{"MANIFEST", "a.ckpt", "c.ckpt", "other", "wal-1.log"}; !slices.Equal(names, want) {
		t.Fatalf("left %v, want %v", names, want)
	}
}
