package wasm

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzInstrument(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.wasm")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x0a\x05\x01\x03\x00\x01\x0b"))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := instrument(b)
		if err != nil {
			return
		}
		if len(out) < len(b) {
			t.Fatalf("instrumented module shrank: %d -> %d", len(b), len(out))
		}
		// Instrumenting is not idempotent, but it must parse its own output.
		if _, err := instrument(out); err != nil {
			t.Fatalf("cannot re-parse own output: %v", err)
		}
	})
}

func TestInstrumentAddsEntryCheck(t *testing.T) {
	// One function, no locals, body "end".
	in := []byte("\x00asm\x01\x00\x00\x00\x0a\x04\x01\x02\x00\x0b")
	out, err := instrument(in)
	if err != nil {
		t.Fatal(err)
	}
	want := "\x00asm\x01\x00\x00\x00\x0a\x07\x01\x05\x00\x03\x40\x0b\x0b"
	if string(out) != want {
		t.Fatalf("got %x, want %x", out, want)
	}
	for _, bad := range []string{"", "\x00asm", "\x00asx\x01\x00\x00\x00", "\x00asm\x02\x00\x00\x00", "\x00asm\x01\x00\x00\x00\x0a\x09\x01", "\x00asm\x01\x00\x00\x00\x0a\x04\x02\x02\x00\x0b"} {
		if _, err := instrument([]byte(bad)); err == nil {
			t.Errorf("%x: accepted", bad)
		}
	}
}
