package wasm

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
	"github.com/cubelinux/cube/vm/wasm/internal/instrument"
)

// runTrivialFrom compiles testdata/trivial.wasm in a new sandbox on dir and
// returns its output against a host holding "value" at (1, 2, 3).
func runTrivialFrom(t *testing.T, dir string) (string, error) {
	t.Helper()
	ctx := context.Background()
	s, err := New(ctx, Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	p, err := s.Compile(ctx, readTestdata(t, "trivial"), vm.Limits{})
	if err != nil {
		return "", err
	}
	h := vmtest.NewHost(3)
	_ = h.Put(ctx, []int32{1, 2, 3}, []byte("value"))
	res, err := p.Run(ctx, h, []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0})
	return string(res.Output), err
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// onlyEntry returns the path of the one rewrite cache entry under dir.
func onlyEntry(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, rewriteVersion, "*"))
	if err != nil || len(m) != 1 {
		t.Fatalf("rewrite cache entries %v (%v), want one", m, err)
	}
	return m[0]
}

// TestRewriteCacheUsed: a second Compile of the same module takes the
// instrumented module from the cache rather than rewriting it. Shown by
// planting a sound entry for another module under trivial's name: the
// program then behaves as the other one (output, which writes nothing
// useful and loops until its output limit). Break caught: with
// rewriteCache.rewrite always calling instrument.Rewrite, the run prints
// "value" and the test fails.
func TestRewriteCacheUsed(t *testing.T) {
	dir := t.TempDir()
	if out, err := runTrivialFrom(t, dir); err != nil || out != "value" {
		t.Fatalf("first run: %q, %v", out, err)
	}
	entry := onlyEntry(t, dir)
	other, err := instrument.Rewrite(readTestdata(t, "output"), uint32(StackBytes(vm.Limits{})/8))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entry, encodeRewrite(other), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runTrivialFrom(t, dir); vm.KindOf(err) != vm.KindOutputLimit {
		t.Fatalf("with output's entry planted: %q, %v; want the output limit", out, err)
	}
}

// TestRewriteCacheDamaged: an entry whose bytes do not match its checksum
// (a torn write, a bad disk) is ignored and written anew, never compiled.
// Break caught: with the checksum comparison in decodeRewrite removed, the
// Compile fails with KindBadModule on the damaged bytes.
func TestRewriteCacheDamaged(t *testing.T) {
	dir := t.TempDir()
	if out, err := runTrivialFrom(t, dir); err != nil || out != "value" {
		t.Fatalf("first run: %q, %v", out, err)
	}
	entry := onlyEntry(t, dir)
	b, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	sound := string(b)
	for i := len(b) - 40; i < len(b); i++ {
		b[i] = 0xff
	}
	if err := os.WriteFile(entry, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runTrivialFrom(t, dir); err != nil || out != "value" {
		t.Fatalf("with a damaged entry: %q, %v", out, err)
	}
	if b, _ := os.ReadFile(onlyEntry(t, dir)); string(b) != sound {
		t.Fatal("the damaged entry was not written anew")
	}
}

// FuzzDecodeRewrite: a cache entry is bytes from disk. Decoding any of
// them never panics, and whatever decodes is exactly what encodes to
// those bytes (so a decoded entry is one the rewriter wrote, checksum
// and all). Break caught: the length check dropped (a short body panics
// slicing).
func FuzzDecodeRewrite(f *testing.F) {
	f.Add(encodeRewrite(instrument.Result{Yield: 3, Counter: "c", Stop: "s", Module: []byte("\x00asm\x01\x00\x00\x00")}))
	f.Add(encodeRewrite(instrument.Result{}))
	f.Add([]byte("cube-rw1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := decodeRewrite(b)
		if !ok {
			return
		}
		if again := encodeRewrite(r); string(again) != string(b) {
			t.Fatalf("decoded %x, which encodes to %x", b, again)
		}
	})
}
