package wal_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine/internal/wal"
	"github.com/cubelinux/cube/engine/vfs"
)

// BenchmarkRawFdatasync is the floor for SyncAlways: a bare loop of one
// 128-byte write and one fdatasync, appending to a file (append) or
// overwriting a zero-filled one (overwrite, what preallocation buys).
func BenchmarkRawFdatasync(b *testing.B) {
	for _, mode := range []string{"append", "overwrite"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			fsys := vfs.OS()
			f, err := fsys.Create(filepath.Join(b.TempDir(), "raw"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, 128)
			if mode == "overwrite" {
				zero := make([]byte, 1<<20)
				for off := int64(0); off < int64(b.N*len(buf)+len(zero)); off += int64(len(zero)) {
					if _, err := f.WriteAt(zero, off); err != nil {
						b.Fatal(err)
					}
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := f.WriteAt(buf, int64(i*len(buf))); err != nil {
					b.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "syncs/s")
		})
	}
}

// BenchmarkAppend measures Append alone: SyncNone, 100-byte payloads.
func BenchmarkAppend(b *testing.B) {
	b.ReportAllocs()
	l, _, err := wal.Open(wal.Options{FS: vfs.OS(), Dir: b.TempDir(), Sync: wal.SyncNone}, 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := make([]byte, 100)
	b.SetBytes(int64(len(p)))
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := l.Append(p); err != nil {
			b.Fatal(err)
		}
		if i%8192 == 8191 {
			// Append does no I/O; keep the disk out of the measurement
			// so the buffer does not grow without bound meanwhile.
			b.StopTimer()
			if err := l.Sync(ctx); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.StopTimer()
	if err := l.Close(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAppendSyncAlways measures acknowledged records: Append then
// WaitDurable, from 1, 8 and 64 goroutines sharing the group commit.
func BenchmarkAppendSyncAlways(b *testing.B) {
	for _, writers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			b.ReportAllocs()
			dir := b.TempDir()
			l, _, err := wal.Open(wal.Options{FS: vfs.OS(), Dir: dir, SegmentSize: 16 << 20}, 0, nil)
			if err != nil {
				b.Fatal(err)
			}
			p := make([]byte, 100)
			ctx := context.Background()
			// Warm up until the log has left its first segment for a
			// preallocated one: the steady state.
			for deadline := time.Now().Add(10 * time.Second); len(segments(b, vfs.OS(), dir)) < 2; {
				lsn, err := l.Append(p)
				if err == nil {
					err = l.WaitDurable(ctx, lsn)
				}
				if err != nil || time.Now().After(deadline) {
					b.Fatalf("warm-up: %v", err)
				}
			}
			syncs0 := l.Stats().Syncs
			var wg sync.WaitGroup
			b.ResetTimer()
			for w := 0; w < writers; w++ {
				n := b.N / writers
				if w < b.N%writers {
					n++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < n; i++ {
						lsn, err := l.Append(p)
						if err == nil {
							err = l.WaitDurable(ctx, lsn)
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			st := l.Stats()
			b.ReportMetric(float64(b.N)/float64(max(st.Syncs-syncs0, 1)), "records/sync")
			if err := l.Close(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}
