// Package ddtest holds what the engine's data-driven decoder tests (the
// log's and the checkpoints', files under testdata/ run with
// github.com/cockroachdb/datadriven) share: the commands that damage bytes
// and the printing of a typed outcome. Only tests import it.
//
// Run a package's tests with -rewrite to write the expected outputs anew
// from what the code does; read the diff before committing it.
package ddtest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/cubelinux/cube/engine/internal/base"
	"github.com/cubelinux/cube/engine/internal/crypt"
)

// Mangle applies a damaging command to b, the bytes of one file, and
// says what it did. ok is false if d.Cmd is not one of these:
//
//	flip off=N [mask=M]    XOR the byte at N (negative: from the end) with M (default 1)
//	cut n=N                drop the last N bytes, as a crash during a write does
//	truncate size=N        keep only the first N bytes
//	set32 off=N val=V      write V as 4 little-endian bytes at N
//	zero off=N len=L       overwrite L bytes at N with zeros
func Mangle(t testing.TB, d *datadriven.TestData, b []byte) (out []byte, what string, ok bool) {
	t.Helper()
	at := func() int {
		off := Int(t, d, "off", 0)
		if off < 0 {
			off += len(b)
		}
		if off < 0 || off >= len(b) {
			d.Fatalf(t, "offset %d outside the %d-byte file", off, len(b))
		}
		return off
	}
	switch d.Cmd {
	case "flip":
		off, mask := at(), Int(t, d, "mask", 1)
		b[off] ^= byte(mask)
		return b, fmt.Sprintf("flipped byte %d with %#x", off, mask), true
	case "cut":
		n := min(Int(t, d, "n", 0), len(b))
		return b[:len(b)-n], fmt.Sprintf("cut %d bytes: %d left", n, len(b)-n), true
	case "truncate":
		n := min(Int(t, d, "size", 0), len(b))
		return b[:n], fmt.Sprintf("truncated to %d bytes", n), true
	case "set32":
		off := at()
		if off+4 > len(b) {
			d.Fatalf(t, "set32 at %d runs past the %d-byte file", off, len(b))
		}
		binary.LittleEndian.PutUint32(b[off:], uint32(Int(t, d, "val", 0)))
		return b, fmt.Sprintf("set 4 bytes at %d", off), true
	case "zero":
		off := at()
		n := min(Int(t, d, "len", 1), len(b)-off)
		clear(b[off : off+n])
		return b, fmt.Sprintf("zeroed %d bytes at %d", n, off), true
	}
	return b, "", false
}

// Int returns the integer argument key (decimal, or 0x hex), or def if
// the command does not have it.
func Int(t testing.TB, d *datadriven.TestData, key string, def int) int {
	t.Helper()
	arg, ok := d.Arg(key)
	if !ok {
		return def
	}
	if len(arg.Vals) != 1 {
		d.Fatalf(t, "%s wants one value", key)
	}
	n, err := strconv.ParseInt(arg.Vals[0], 0, 64)
	if err != nil {
		d.Fatalf(t, "%s=%s: %v", key, arg.Vals[0], err)
	}
	return int(n)
}

// Mark is a sentinel an outcome names when the error matches it.
type Mark struct {
	Name string
	Err  error
}

// checksums are the CRCs some reasons print; under a random per-file salt
// they change from run to run.
var checksums = regexp.MustCompile(`(stored|computed) 0x[0-9a-f]+`)

// Outcome prints what err is: "ok"; for corruption, the file's base name,
// the offset and the reason; otherwise the error's text. Then the marks
// it matches, so a test file shows its type, not only its words.
func Outcome(err error, marks ...Mark) string {
	if err == nil {
		return "ok"
	}
	var s string
	var ce *base.CorruptionError
	if errors.As(err, &ce) {
		s = fmt.Sprintf("corruption in %s at offset %d: %s", filepath.Base(ce.File), ce.Offset, checksums.ReplaceAllString(ce.Reason, "$1 0x…"))
	} else {
		s = "error: " + err.Error()
	}
	for _, m := range marks {
		if errors.Is(err, m.Err) {
			s += "\n  is " + m.Name
		}
	}
	return s
}

// Cipher is the cipher of the argument key=K: K repeated to a full key;
// nil if the command has no key.
func Cipher(t testing.TB, d *datadriven.TestData) *crypt.Cipher {
	t.Helper()
	var k string
	if !d.MaybeScanArgs(t, "key", &k) {
		return nil
	}
	if k == "" {
		d.Fatalf(t, "key= wants a value")
	}
	c, err := crypt.New(bytes.Repeat([]byte(k), crypt.KeySize/len(k)+1)[:crypt.KeySize])
	if err != nil {
		d.Fatalf(t, "key %q: %v", k, err)
	}
	return c
}
