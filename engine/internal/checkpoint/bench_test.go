package checkpoint_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cubelinux/cube/engine/internal/checkpoint"
	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/vfs"
)

const benchRecords = 1 << 20 // ~1 M records of 40 bytes

func benchRecord(i int) []byte {
	rec := make([]byte, 40)
	for j := range rec {
		rec[j] = byte(i*31 + j)
	}
	return rec
}

// BenchmarkWrite writes a file of 1 M 40-byte records per op, fsync
// included.
func BenchmarkWrite(b *testing.B) {
	for _, enc := range []bool{false, true} {
		b.Run(encName(enc), func(b *testing.B) {
			var c *crypt.Cipher
			if enc {
				c = newCipher(b, 1)
			}
			dir := b.TempDir()
			rec := benchRecord(1)
			b.SetBytes(benchRecords * int64(len(rec)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				path := filepath.Join(dir, fmt.Sprintf("w%d.ckpt", i))
				w, err := checkpoint.Create(vfs.OS(), path, checkpoint.Header{Kind: checkpoint.Base, LSN: 1}, c)
				if err != nil {
					b.Fatal(err)
				}
				for range benchRecords {
					if err := w.Add(rec); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := w.Finish(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				os.Remove(path)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.N)*benchRecords/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkRead reads a file of 1 M 40-byte records per op, every
// checksum and seal checked.
func BenchmarkRead(b *testing.B) {
	for _, enc := range []bool{false, true} {
		b.Run(encName(enc), func(b *testing.B) {
			var c *crypt.Cipher
			if enc {
				c = newCipher(b, 1)
			}
			path := filepath.Join(b.TempDir(), "r.ckpt")
			w, err := checkpoint.Create(vfs.OS(), path, checkpoint.Header{Kind: checkpoint.Base, LSN: 1}, c)
			if err != nil {
				b.Fatal(err)
			}
			for i := range benchRecords {
				w.Add(benchRecord(i))
			}
			if _, err := w.Finish(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(benchRecords * 40)
			b.ReportAllocs()
			for b.Loop() {
				r, _, err := checkpoint.Open(vfs.OS(), path, c)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					rec, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil || len(rec) != 40 {
						b.Fatal(err)
					}
					n++
				}
				r.Close()
				if n != benchRecords {
					b.Fatalf("%d records", n)
				}
			}
			b.ReportMetric(float64(b.N)*benchRecords/b.Elapsed().Seconds(), "records/s")
		})
	}
}

func encName(enc bool) string {
	if enc {
		return "encrypted"
	}
	return "plain"
}
