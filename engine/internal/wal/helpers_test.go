package wal_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/internal/wal"
	"github.com/cubelinux/cube/engine/vfs"
)

var seedFlag = flag.Uint64("seed", 0, "seed for random tests (0: from the clock)")

// Format constants from doc.go, used by tests that poke at the bytes.
const (
	segHeaderSize = 64
	recHeaderSize = 24
)

func seededRand(t testing.TB) *rand.Rand {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -seed=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// payload is the deterministic payload of lsn, of varying length.
func payload(lsn uint64) []byte {
	n := int(lsn*37%211) + 8
	p := make([]byte, n)
	binary.LittleEndian.PutUint64(p, lsn)
	for i := 8; i < n; i++ {
		p[i] = byte(lsn) + byte(i)
	}
	return p
}

func key(b byte) *crypt.Cipher {
	c, err := crypt.New(bytes.Repeat([]byte{b}, crypt.KeySize))
	if err != nil {
		panic(err)
	}
	return c
}

type replayed struct {
	lsns     []uint64
	payloads map[uint64][]byte
}

func (r *replayed) fn(lsn uint64, p []byte) error {
	r.lsns = append(r.lsns, lsn)
	if r.payloads == nil {
		r.payloads = map[uint64][]byte{}
	}
	r.payloads[lsn] = bytes.Clone(p)
	return nil
}

func open(t testing.TB, opts wal.Options, after uint64) (*wal.Log, wal.Report, *replayed) {
	t.Helper()
	var r replayed
	l, rep, err := wal.Open(opts, after, r.fn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l, rep, &r
}

func closeLog(t testing.TB, l *wal.Log) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// appendPayloads appends payload(lsn) for n consecutive LSNs and checks
// that Append hands them out in order.
func appendPayloads(t testing.TB, l *wal.Log, from uint64, n int) uint64 {
	t.Helper()
	lsn := from
	for i := 0; i < n; i++ {
		got, err := l.Append(payload(lsn))
		if err != nil {
			t.Fatalf("Append %d: %v", lsn, err)
		}
		if got != lsn {
			t.Fatalf("Append returned lsn %d, want %d", got, lsn)
		}
		lsn++
	}
	return lsn - 1
}

// checkReplay checks that r holds exactly from..to with their payloads.
func checkReplay(t testing.TB, r *replayed, from, to uint64) {
	t.Helper()
	if want := int(to - from + 1); to < from && len(r.lsns) != 0 || to >= from && len(r.lsns) != want {
		t.Fatalf("replayed %d records, want %d..%d", len(r.lsns), from, to)
	}
	for i, lsn := range r.lsns {
		if lsn != from+uint64(i) {
			t.Fatalf("replayed lsn %d at %d, want %d", lsn, i, from+uint64(i))
		}
		if !bytes.Equal(r.payloads[lsn], payload(lsn)) {
			t.Fatalf("payload of lsn %d differs", lsn)
		}
	}
}

func segments(t testing.TB, fsys vfs.FS, dir string) []string {
	t.Helper()
	names, err := fsys.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var segs []string
	for _, n := range names {
		if strings.HasSuffix(n, ".wal") {
			segs = append(segs, n)
		}
	}
	return segs
}

func readAll(t testing.TB, fsys vfs.FS, path string) []byte {
	t.Helper()
	f, err := fsys.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeAt(t testing.TB, fsys vfs.FS, path string, b []byte, off int64) {
	t.Helper()
	f, err := fsys.OpenReadWrite(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// snapshot returns every file of dir with its bytes.
func snapshot(t testing.TB, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	names, err := fsys.List(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, n := range names {
		m[n] = readAll(t, fsys, filepath.Join(dir, n))
	}
	return m
}

func sameSnapshot(t testing.TB, a, b map[string][]byte) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("files changed: %d before, %d after", len(a), len(b))
	}
	for n, data := range a {
		if !bytes.Equal(data, b[n]) {
			t.Fatalf("file %s changed", n)
		}
	}
}
