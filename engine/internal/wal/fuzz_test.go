package wal_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cubelinux/cube/engine/internal/base"
	"github.com/cubelinux/cube/engine/internal/wal"
	"github.com/cubelinux/cube/engine/vfs"
)

// FuzzRecover mangles the segment files of a small log as the input says
// and opens it: Open never panics, and either recovers a gap-free prefix
// or reports a corruption; with Repair it always recovers.
func FuzzRecover(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 100, 0xff})              // flip in the first segment
	f.Add([]byte{2, 1, 20, 0x01})               // header of the last segment
	f.Add([]byte{1, 0x80, 0, 0, 2, 0x81, 3, 0}) // truncations
	f.Add([]byte{3, 0x40, 0, 7, 2, 0x40, 1, 0})
	f.Fuzz(recoverMangled)
}

// TestRecoverMangled runs FuzzRecover's check over random inputs.
func TestRecoverMangled(t *testing.T) {
	rng := seededRand(t)
	n := 300
	if testing.Short() {
		n = 50
	}
	for i := 0; i < n; i++ {
		ops := make([]byte, 4*rng.IntN(6))
		for j := range ops {
			ops[j] = byte(rng.Uint32())
		}
		if rng.IntN(2) == 0 && len(ops) > 0 {
			ops[1] &= 0x07 // offsets inside the small segments
		}
		t.Run(fmt.Sprintf("%x", ops), func(t *testing.T) { recoverMangled(t, ops) })
	}
}

func recoverMangled(t *testing.T, ops []byte) {
	{
		fsys := vfs.NewMem()
		opts := wal.Options{FS: fsys, Dir: "w", SegmentSize: 700, Sync: wal.SyncNone}
		l, _, err := wal.Open(opts, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		for lsn := uint64(1); lsn <= 20; lsn++ {
			if _, err := l.Append(payload(lsn)); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		segs := segments(t, fsys, "w")
		// Each op is 4 bytes: segment, then a 16-bit offset whose top bit
		// asks for a truncation instead of a byte change, then a value.
		for len(ops) >= 4 {
			path := filepath.Join("w", segs[int(ops[0])%len(segs)])
			off := int64(binary.BigEndian.Uint16(ops[1:3]))
			data := readAll(t, fsys, path)
			switch {
			case off&0x8000 != 0:
				if n := off & 0x7fff; n < int64(len(data)) {
					f, err := fsys.OpenReadWrite(path)
					if err != nil {
						t.Fatal(err)
					}
					if err := f.Truncate(n); err != nil {
						t.Fatal(err)
					}
					f.Close()
				}
			case off < int64(len(data)):
				writeAt(t, fsys, path, []byte{data[off] ^ ops[3]}, off)
			}
			ops = ops[4:]
		}
		check := func(repair bool) (err error) {
			o := opts
			o.Repair = repair
			next := uint64(1)
			l, rep, err := wal.Open(o, 0, func(lsn uint64, p []byte) error {
				if lsn != next || string(p) != string(payload(lsn)) {
					return fmt.Errorf("replayed lsn %d (want %d) with a wrong payload", lsn, next)
				}
				next++
				return nil
			})
			if err != nil {
				return err
			}
			if rep.LastLSN != next-1 {
				t.Fatalf("report LastLSN %d, replayed %d", rep.LastLSN, next-1)
			}
			if err := l.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			return nil
		}
		if err := check(false); err != nil && !base.IsCorruption(err) {
			t.Fatalf("Open: %v", err)
		}
		if err := check(true); err != nil {
			t.Fatalf("Open with Repair: %v", err)
		}
		if err := check(false); err != nil {
			t.Fatalf("Open after Repair: %v", err)
		}
	}
}
