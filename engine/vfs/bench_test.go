package vfs_test

import (
	"path/filepath"
	"testing"

	"github.com/cubelinux/cube/engine/vfs"
)

const benchRecord = 128

// BenchmarkMemFS_WriteSync appends a small record and syncs it, in 4 MiB
// segments: the cost MemFS adds to a crash test per acknowledged write.
func BenchmarkMemFS_WriteSync(b *testing.B) {
	fsys := vfs.NewMem()
	f, err := fsys.Create("/wal")
	if err != nil {
		b.Fatal(err)
	}
	rec := pattern(benchRecord, 1)
	var size int
	b.ReportAllocs()
	b.SetBytes(benchRecord)
	for b.Loop() {
		if size >= 4<<20 { // rotate segments, as a log does
			f.Close()
			if f, err = fsys.Create("/wal"); err != nil {
				b.Fatal(err)
			}
			size = 0
		}
		if _, err := f.Write(rec); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		size += benchRecord
	}
}

// BenchmarkOSAppendSync is the raw floor of a durable append on this
// machine: write 128 bytes at the end of a file, then fdatasync, which must
// also commit the new size to the file system journal.
func BenchmarkOSAppendSync(b *testing.B) {
	fsys := vfs.OS()
	f, err := fsys.Create(filepath.Join(b.TempDir(), "wal"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	rec := pattern(benchRecord, 1)
	b.ReportAllocs()
	b.SetBytes(benchRecord)
	for b.Loop() {
		if _, err := f.Write(rec); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOSOverwriteSync is the floor of a durable write into a file
// that was zero-filled and synced beforehand, as a log that preallocates
// its segments does: fdatasync then has data to flush but no size or
// block-allocation metadata to commit.
func BenchmarkOSOverwriteSync(b *testing.B) {
	const segment = 16 << 20 // wraps around; big enough that the disk cache does not merge writes
	fsys := vfs.OS()
	f, err := fsys.Create(filepath.Join(b.TempDir(), "wal"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zeros := make([]byte, 1<<20)
	for off := int64(0); off < segment; off += int64(len(zeros)) {
		if _, err := f.WriteAt(zeros, off); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	rec := pattern(benchRecord, 1)
	var off int64
	b.ReportAllocs()
	b.SetBytes(benchRecord)
	for b.Loop() {
		if _, err := f.WriteAt(rec, off); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		off = (off + benchRecord) % segment
	}
}
