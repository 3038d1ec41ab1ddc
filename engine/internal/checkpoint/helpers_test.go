package checkpoint_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine/internal/checkpoint"
	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/vfs"
)

func newCipher(tb testing.TB, b byte) *crypt.Cipher {
	tb.Helper()
	c, err := crypt.New(bytes.Repeat([]byte{b}, crypt.KeySize))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// seededRand returns a generator and logs its seed so a failure can be
// replayed.
func seededRand(tb testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	tb.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func randRecords(r *rand.Rand, n, maxLen int) [][]byte {
	recs := make([][]byte, n)
	for i := range recs {
		b := make([]byte, r.IntN(maxLen+1))
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		recs[i] = b
	}
	return recs
}

func writeFile(tb testing.TB, fs vfs.FS, path string, h checkpoint.Header, c *crypt.Cipher, recs [][]byte) checkpoint.Info {
	tb.Helper()
	w, err := checkpoint.Create(fs, path, h, c)
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Abort()
	for _, rec := range recs {
		if err := w.Add(rec); err != nil {
			tb.Fatal(err)
		}
	}
	info, err := w.Finish()
	if err != nil {
		tb.Fatal(err)
	}
	return info
}

// readAll reads every record (copied) of a file.
func readAll(fs vfs.FS, path string, c *crypt.Cipher) ([][]byte, checkpoint.Header, error) {
	r, h, err := checkpoint.Open(fs, path, c)
	if err != nil {
		return nil, h, err
	}
	defer r.Close()
	var out [][]byte
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, h, nil
		}
		if err != nil {
			return out, h, err
		}
		out = append(out, bytes.Clone(rec))
	}
}

func isNewer(err error) bool { return errors.Is(err, checkpoint.ErrNewerFormat) }

// memWith returns an in-memory FS holding one file.
func memWith(tb testing.TB, path string, data []byte) vfs.FS {
	tb.Helper()
	fs := vfs.NewMem()
	if err := fs.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	f, err := fs.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return fs
}
