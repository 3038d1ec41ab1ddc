package wasm

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cubelinux/cube/vm/wasm/internal/instrument"
)

// rewriteCache keeps instrument.Rewrite's output on disk, beside wazero's
// compilation cache, so that compiling a module seen before (after a
// restart of the daemon, say) skips the rewriter: for a Go guest of 2.6
// MB that is ~20 ms of the ~120 ms a Compile takes from a warm cache.
//
// An entry is named by the SHA-256 of the module as given and the stack
// budget, the two inputs of Rewrite, and holds the rewritten module with
// its SHA-256, checked on every load: a damaged entry (a torn write, a bad
// disk) is ignored and written anew, never compiled, since a flipped byte
// can leave a valid module that behaves differently. Entries are written
// to a temporary file and renamed, so readers see a whole entry or none.
// Like wazero's own cache, the directory must be kept from other writers:
// whoever can write it can change what programs do.
type rewriteCache struct {
	dir string // "" disables the cache
}

// rewriteVersion names the directory of the entries: bump it whenever
// Rewrite's output changes for the same input, so that entries of an
// older rewriter are never used.
const rewriteVersion = "cube-rewrite-v1"

// rewriteMagic starts every entry.
var rewriteMagic = []byte("cube-rw1")

func newRewriteCache(cacheDir string) (rewriteCache, error) {
	if cacheDir == "" {
		return rewriteCache{}, nil
	}
	dir := filepath.Join(cacheDir, rewriteVersion)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return rewriteCache{}, err
	}
	return rewriteCache{dir: dir}, nil
}

// rewrite returns Rewrite(code, budget), from the cache when it holds a
// sound entry.
func (c rewriteCache) rewrite(code []byte, budget uint32) (instrument.Result, error) {
	if c.dir == "" {
		return instrument.Rewrite(code, budget)
	}
	sum := sha256.Sum256(code)
	path := filepath.Join(c.dir, hex.EncodeToString(sum[:])+"-"+strconv.FormatUint(uint64(budget), 10))
	if b, err := os.ReadFile(path); err == nil {
		if r, ok := decodeRewrite(b); ok {
			return r, nil
		}
	}
	r, err := instrument.Rewrite(code, budget)
	if err != nil {
		return r, err
	}
	_ = c.store(path, encodeRewrite(r)) // a cache that cannot be written only costs time
	return r, nil
}

func (c rewriteCache) store(path string, b []byte) error {
	f, err := os.CreateTemp(c.dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// An entry: magic, then Yield (u32), the lengths of Counter, Stop and
// Module (u32 each), the SHA-256 of everything after it, then Counter,
// Stop and Module. All integers little-endian.
const rewriteHeader = 8 + 4*4 + sha256.Size

func encodeRewrite(r instrument.Result) []byte {
	b := make([]byte, rewriteHeader, rewriteHeader+len(r.Counter)+len(r.Stop)+len(r.Module))
	copy(b, rewriteMagic)
	binary.LittleEndian.PutUint32(b[8:], r.Yield)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(r.Counter)))
	binary.LittleEndian.PutUint32(b[16:], uint32(len(r.Stop)))
	binary.LittleEndian.PutUint32(b[20:], uint32(len(r.Module)))
	b = append(b, r.Counter...)
	b = append(b, r.Stop...)
	b = append(b, r.Module...)
	sum := sha256.Sum256(b[rewriteHeader:])
	copy(b[24:], sum[:])
	return b
}

func decodeRewrite(b []byte) (instrument.Result, bool) {
	if len(b) < rewriteHeader || !bytes.Equal(b[:8], rewriteMagic) {
		return instrument.Result{}, false
	}
	nc := uint64(binary.LittleEndian.Uint32(b[12:]))
	ns := uint64(binary.LittleEndian.Uint32(b[16:]))
	nm := uint64(binary.LittleEndian.Uint32(b[20:]))
	body := b[rewriteHeader:]
	if nc+ns+nm != uint64(len(body)) {
		return instrument.Result{}, false
	}
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], b[24:rewriteHeader]) {
		return instrument.Result{}, false
	}
	return instrument.Result{
		Yield:   binary.LittleEndian.Uint32(b[8:]),
		Counter: string(body[:nc]),
		Stop:    string(body[nc : nc+ns]),
		Module:  body[nc+ns:],
	}, true
}
