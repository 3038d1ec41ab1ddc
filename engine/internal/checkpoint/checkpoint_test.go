package checkpoint_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine/internal/checkpoint"
	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/vfs"
)

func TestRoundTrip(t *testing.T) {
	rng := seededRand(t)
	big := func(n int) []byte { return bytes.Repeat([]byte{0xab}, n) }
	cases := []struct {
		name string
		recs [][]byte
	}{
		{"empty", nil},
		{"one", [][]byte{[]byte("hello")}},
		{"one-empty-record", [][]byte{{}}},
		{"many", randRecords(rng, 40000, 80)}, // ~1.6 MB, ~25 blocks
		{"block-sized", [][]byte{big(checkpoint.BlockSize - 3), big(checkpoint.BlockSize), {1}, big(checkpoint.BlockSize + 1)}},
		{"big", [][]byte{{1, 2, 3}, big(200 << 10), {4}, big(3 << 20), big(70 << 10), {}}},
	}
	created := time.Date(2025, 6, 1, 12, 0, 0, 123, time.UTC)
	for _, tc := range cases {
		for _, enc := range []bool{false, true} {
			name := tc.name + "/plain"
			var c *crypt.Cipher
			if enc {
				name = tc.name + "/encrypted"
				c = newCipher(t, 7)
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				h := checkpoint.Header{Kind: checkpoint.Delta, LSN: 1 << 40, Prev: 99, Created: created}
				path := filepath.Join(dir, checkpoint.FileName(h))
				info := writeFile(t, vfs.OS(), path, h, c, tc.recs)
				if info.Records != uint64(len(tc.recs)) || info.Path != path {
					t.Fatalf("info %+v, want %d records", info, len(tc.recs))
				}
				if fi, err := os.Stat(path); err != nil || fi.Size() != info.Bytes {
					t.Fatalf("size %v %v, info says %d", fi.Size(), err, info.Bytes)
				}
				// A fresh cipher with the same key reads it.
				if c != nil {
					c = newCipher(t, 7)
				}
				got, gh, err := readAll(vfs.OS(), path, c)
				if err != nil {
					t.Fatal(err)
				}
				if gh.Kind != h.Kind || gh.LSN != h.LSN || gh.Prev != h.Prev || !gh.Created.Equal(h.Created) {
					t.Fatalf("header %+v, want %+v", gh, h)
				}
				if len(got) != len(tc.recs) {
					t.Fatalf("%d records, want %d", len(got), len(tc.recs))
				}
				for i := range got {
					if !bytes.Equal(got[i], tc.recs[i]) {
						t.Fatalf("record %d differs (len %d, want %d)", i, len(got[i]), len(tc.recs[i]))
					}
				}
				vi, err := checkpoint.Verify(vfs.OS(), path, c)
				if err != nil || vi != info {
					t.Fatalf("Verify = %+v, %v; want %+v", vi, err, info)
				}
				if enc {
					raw, _ := os.ReadFile(path)
					for i, rec := range tc.recs[:min(len(tc.recs), 20)] {
						if len(rec) >= 16 && bytes.Contains(raw, rec[:16]) {
							t.Fatalf("plaintext of record %d found in an encrypted file", i)
						}
					}
				}
			})
		}
	}
}

func TestAllIterator(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.ckpt")
	recs := [][]byte{[]byte("a"), []byte("bb"), []byte("ccc")}
	writeFile(t, vfs.OS(), path, checkpoint.Header{Kind: checkpoint.Base, LSN: 3}, nil, recs)
	r, h, err := checkpoint.Open(vfs.OS(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if h.Kind != checkpoint.Base || h.LSN != 3 || !h.Created.IsZero() {
		t.Fatalf("header %+v", h)
	}
	if r.Info().Records != 3 {
		t.Fatalf("Info %+v", r.Info())
	}
	var got []string
	for rec, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(rec))
	}
	if len(got) != 3 || got[0] != "a" || got[2] != "ccc" {
		t.Fatalf("All = %q", got)
	}
}

func TestCreateRules(t *testing.T) {
	dir := t.TempDir()
	fs := vfs.OS()
	bad := []checkpoint.Header{
		{Kind: 0, LSN: 1},
		{Kind: 3, LSN: 1},
		{Kind: checkpoint.Base, LSN: 5, Prev: 1},
		{Kind: checkpoint.Delta, LSN: 5, Prev: 6},
	}
	for _, h := range bad {
		if _, err := checkpoint.Create(fs, filepath.Join(dir, "x.ckpt"), h, nil); !errors.Is(err, checkpoint.ErrInvalid) {
			t.Errorf("Create(%+v) = %v, want ErrInvalid", h, err)
		}
	}
	path := filepath.Join(dir, "a.ckpt")
	h := checkpoint.Header{Kind: checkpoint.Base, LSN: 1}
	writeFile(t, fs, path, h, nil, [][]byte{[]byte("x")})
	if _, err := checkpoint.Create(fs, path, h, nil); !errors.Is(err, checkpoint.ErrExists) {
		t.Fatalf("Create over an existing file = %v, want ErrExists", err)
	}
	if _, err := checkpoint.Verify(fs, path, nil); err != nil {
		t.Fatalf("existing file damaged: %v", err)
	}

	// Abort removes the partial file; Finish and Add after it fail.
	p2 := filepath.Join(dir, "b.ckpt")
	w, err := checkpoint.Create(fs, p2, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Add(bytes.Repeat([]byte("y"), 3*checkpoint.BlockSize))
	w.Abort()
	if _, err := os.Stat(p2); !os.IsNotExist(err) {
		t.Fatalf("after Abort: %v", err)
	}
	if _, err := w.Finish(); !errors.Is(err, checkpoint.ErrClosed) {
		t.Fatalf("Finish after Abort = %v", err)
	}
	if err := w.Add(nil); !errors.Is(err, checkpoint.ErrClosed) {
		t.Fatalf("Add after Abort = %v", err)
	}

	// Abort after Finish keeps the file.
	p3 := filepath.Join(dir, "c.ckpt")
	w, _ = checkpoint.Create(fs, p3, h, nil)
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if _, err := w.Finish(); !errors.Is(err, checkpoint.ErrClosed) {
		t.Fatalf("second Finish = %v", err)
	}
	if _, err := checkpoint.Verify(fs, p3, nil); err != nil {
		t.Fatalf("Abort after Finish damaged the file: %v", err)
	}
}

func TestFileName(t *testing.T) {
	for _, tc := range []struct {
		h    checkpoint.Header
		want string
	}{
		{checkpoint.Header{Kind: checkpoint.Base, LSN: 42}, "base-00000000000000000042.ckpt"},
		{checkpoint.Header{Kind: checkpoint.Delta, Prev: 42, LSN: 100}, "delta-00000000000000000042-00000000000000000100.ckpt"},
	} {
		if got := checkpoint.FileName(tc.h); got != tc.want {
			t.Errorf("FileName(%+v) = %q, want %q", tc.h, got, tc.want)
		}
	}
}
