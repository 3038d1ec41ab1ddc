package wal_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cubelinux/cube/engine/internal/base"
	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/internal/wal"
	"github.com/cubelinux/cube/engine/vfs"
)

// With 100-byte payloads a record is 124 bytes (136 sealed), and a segment
// of fixedSeg bytes holds exactly perSeg records.
const (
	perSeg   = 10
	fixedLen = 100
)

func recSize(c *crypt.Cipher) int64 {
	if c != nil {
		return recHeaderSize + fixedLen + crypt.Overhead
	}
	return recHeaderSize + fixedLen
}

func fixedSeg(c *crypt.Cipher) int64 { return segHeaderSize + perSeg*recSize(c) }

// recOff is the offset of the record lsn in its segment.
func recOff(c *crypt.Cipher, lsn uint64) int64 {
	return segHeaderSize + int64((lsn-1)%perSeg)*recSize(c)
}

func segOf(dir string, lsn uint64) string {
	first := (lsn-1)/perSeg*perSeg + 1
	return filepath.Join(dir, segName(first))
}

func segName(first uint64) string {
	b := []byte("00000000000000000000.wal")
	for i := 19; first > 0; i-- {
		b[i] = byte('0' + first%10)
		first /= 10
	}
	return string(b)
}

// writeFixed writes n 100-byte records, each waited for, so every record
// carries the previous one as synced.
func writeFixed(t *testing.T, opts wal.Options, n int) {
	t.Helper()
	opts.SegmentSize = fixedSeg(opts.Cipher)
	opts.NoPreallocate = true // no early roll into a spare: a fixed layout
	l, _, _ := open(t, opts, 0)
	for i := 1; i <= n; i++ {
		lsn, err := l.Append(fixedPayload(uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.WaitDurable(context.Background(), lsn); err != nil {
			t.Fatal(err)
		}
	}
	closeLog(t, l)
}

func fixedPayload(lsn uint64) []byte {
	p := bytes.Repeat([]byte{byte(lsn)}, fixedLen)
	binary.LittleEndian.PutUint64(p, lsn)
	return p
}

func checkFixed(t *testing.T, r *replayed, from, to uint64) {
	t.Helper()
	if len(r.lsns) != int(to-from+1) {
		t.Fatalf("replayed %d records, want %d..%d", len(r.lsns), from, to)
	}
	for i, lsn := range r.lsns {
		if lsn != from+uint64(i) || !bytes.Equal(r.payloads[lsn], fixedPayload(lsn)) {
			t.Fatalf("replayed record %d wrong (lsn %d)", i, lsn)
		}
	}
}

func flip(t *testing.T, fsys vfs.FS, path string, off int64) {
	t.Helper()
	b := readAll(t, fsys, path)
	writeAt(t, fsys, path, []byte{b[off] ^ 0x5a}, off)
}

func TestTornTailTruncated(t *testing.T) {
	for _, noPrealloc := range []bool{false, true} {
		t.Run(map[bool]string{false: "prealloc", true: "noprealloc"}[noPrealloc], func(t *testing.T) {
			fsys := vfs.NewMem()
			opts := wal.Options{FS: fsys, Dir: "w", NoPreallocate: noPrealloc, SegmentSize: 1 << 16}
			l, _, _ := open(t, opts, 0)
			last := appendPayloads(t, l, 1, 30)
			if err := l.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			// The log may have left its first segment for a preallocated
			// one; the earlier segments hold no zero tails.
			end := l.Size()
			closeLog(t, l)
			segs := segments(t, fsys, "w")
			for _, s := range segs[:len(segs)-1] {
				end -= int64(len(readAll(t, fsys, filepath.Join("w", s))))
			}
			path := filepath.Join("w", segs[len(segs)-1])
			// Half a record: a header that claims more than follows.
			torn := make([]byte, 40)
			binary.LittleEndian.PutUint32(torn[4:], 500)
			binary.LittleEndian.PutUint64(torn[8:], last+1)
			for i := 24; i < len(torn); i++ {
				torn[i] = 0xee
			}
			writeAt(t, fsys, path, torn, end)

			before := snapshot(t, fsys, "w")
			rep, err := wal.Verify(fsys, "w", nil, nil)
			if err != nil || rep.TornSegment != path || rep.TornOffset != end || rep.BytesDropped != int64(len(torn)) {
				t.Fatalf("Verify = %+v, %v; want torn at %s:%d, %d bytes", rep, err, path, end, len(torn))
			}
			sameSnapshot(t, before, snapshot(t, fsys, "w"))

			l, rep, r := open(t, opts, 0)
			checkReplay(t, r, 1, last)
			if rep.TornSegment != path || rep.TornOffset != end || rep.BytesDropped != int64(len(torn)) || rep.LastLSN != last {
				t.Fatalf("report %+v", rep)
			}
			if noPrealloc {
				if fi, err := fsys.Stat(path); err != nil || fi.Size() != end {
					t.Fatalf("segment not truncated to %d: %v %v", end, fi.Size(), err)
				}
			}
			appendPayloads(t, l, last+1, 5)
			closeLog(t, l)
			l, rep, r = open(t, opts, 0)
			checkReplay(t, r, 1, last+5)
			if rep.TornSegment != "" {
				t.Fatalf("torn tail reported again: %+v", rep)
			}
			closeLog(t, l)
		})
	}
}

func TestCorruptionRefused(t *testing.T) {
	const n = 45 // segments of 10: 1-10, 11-20, 21-30, 31-40, 41-45
	for _, tc := range []struct {
		name    string
		mangle  func(t *testing.T, fsys vfs.FS, dir string)
		file    string
		off     int64
		reason  string
		lostFst uint64
	}{
		{"flip in non-last segment", func(t *testing.T, fsys vfs.FS, dir string) {
			flip(t, fsys, segOf(dir, 14), recOff(nil, 14)+50)
		}, segName(11), recOff(nil, 14), "checksum", 14},
		{"flip in last segment before valid records", func(t *testing.T, fsys vfs.FS, dir string) {
			flip(t, fsys, segOf(dir, 42), recOff(nil, 42)+3)
		}, segName(41), recOff(nil, 42), "validates", 42},
		{"lsn gap", func(t *testing.T, fsys vfs.FS, dir string) {
			if err := fsys.Remove(segOf(dir, 25)); err != nil {
				t.Fatal(err)
			}
		}, segName(31), 0, "gap", 21},
		{"bad header", func(t *testing.T, fsys vfs.FS, dir string) {
			flip(t, fsys, segOf(dir, 33), 20)
		}, segName(31), 0, "header", 31},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			opts := wal.Options{FS: fsys, Dir: "w"}
			writeFixed(t, opts, n)
			opts.SegmentSize = fixedSeg(nil)
			tc.mangle(t, fsys, "w")
			before := snapshot(t, fsys, "w")
			check := func(err error) {
				t.Helper()
				var ce *base.CorruptionError
				// Breaking repairable() in open.go (returning st.corrupt
				// bare) fails the ErrRepairable check.
				if !errors.As(err, &ce) || !base.IsCorruption(err) || !errors.Is(err, wal.ErrRepairable) {
					t.Fatalf("error %v, want a CorruptionError that Repair mends", err)
				}
				if ce.File != filepath.Join("w", tc.file) || ce.Offset != tc.off || !strings.Contains(ce.Error(), tc.reason) {
					t.Fatalf("corruption %v, want %s at %d (%q)", ce, tc.file, tc.off, tc.reason)
				}
			}
			_, err := wal.Verify(fsys, "w", nil, nil)
			check(err)
			_, _, err = wal.Open(opts, 0, nil)
			check(err)
			sameSnapshot(t, before, snapshot(t, fsys, "w"))

			// With Repair the log is cut there, the cut bytes are kept, and
			// the report names the lost range.
			cutSeg := filepath.Join("w", tc.file)
			cutBytes := before[tc.file][tc.off:]
			opts.Repair = true
			l, rep, r := open(t, opts, 0)
			checkFixed(t, r, 1, tc.lostFst-1)
			if rep.Repaired == nil || rep.Repaired.File != cutSeg || rep.LostFirst != tc.lostFst || rep.LostLast != n {
				t.Fatalf("repair report %+v (repaired %v), want lost %d..%d", rep, rep.Repaired, tc.lostFst, n)
			}
			if len(rep.CutFiles) == 0 || !bytes.Equal(readAll(t, fsys, rep.CutFiles[0]), cutBytes) {
				t.Fatalf("cut files %v do not hold the cut bytes", rep.CutFiles)
			}
			for _, f := range rep.CutFiles {
				if !strings.Contains(f, ".cut-") {
					t.Fatalf("cut file name %s", f)
				}
			}
			lsn, err := l.Append(fixedPayload(tc.lostFst))
			if err != nil || lsn != tc.lostFst {
				t.Fatalf("Append after repair = %d, %v", lsn, err)
			}
			closeLog(t, l)
			opts.Repair = false
			l, rep, r = open(t, opts, 0)
			checkFixed(t, r, 1, tc.lostFst)
			if rep.Repaired != nil || rep.TornSegment != "" {
				t.Fatalf("repaired log reopened with %+v", rep)
			}
			closeLog(t, l)
		})
	}
}

// TestStaleBytesNeverValidate puts the records of an older log with the
// same LSNs at the very offsets a new log would write next: the salt of
// the new segment must reject them.
func TestStaleBytesNeverValidate(t *testing.T) {
	fsys := vfs.NewMem()
	opts := wal.Options{FS: fsys, Dir: "w", SegmentSize: 1 << 16}
	writeFixed(t, opts, 8) // an old log: LSN 1..8
	old := readAll(t, fsys, filepath.Join("w", segName(1)))
	for _, name := range segments(t, fsys, "w") {
		if err := fsys.Remove(filepath.Join("w", name)); err != nil {
			t.Fatal(err)
		}
	}
	writeFixed(t, opts, 3) // a new log in the same files: LSN 1..3
	path := filepath.Join("w", segName(1))
	end := recOff(nil, 4)
	writeAt(t, fsys, path, old[end:recOff(nil, 8)+recSize(nil)], end)

	opts.SegmentSize = fixedSeg(nil)
	l, rep, r := open(t, opts, 0)
	checkFixed(t, r, 1, 3)
	if rep.LastLSN != 3 || rep.TornSegment != path || rep.TornOffset != end {
		t.Fatalf("report %+v, want the stale records cut as a torn tail at %d", rep, end)
	}
	closeLog(t, l)
}

func TestEncryption(t *testing.T) {
	opts := func(fsys vfs.FS, c *crypt.Cipher) wal.Options {
		return wal.Options{FS: fsys, Dir: "w", Cipher: c, SegmentSize: fixedSeg(c)}
	}
	t.Run("wrong key changes nothing", func(t *testing.T) {
		fsys := vfs.NewMem()
		writeFixed(t, opts(fsys, key(1)), 25)
		// A torn tail Open would cut with the right key.
		last := segOf("w", 25)
		writeAt(t, fsys, last, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, recOff(key(1), 26))
		before := snapshot(t, fsys, "w")
		for _, c := range []*crypt.Cipher{key(2), nil} {
			for _, repair := range []bool{false, true} {
				o := opts(fsys, c)
				o.Repair = repair
				called := false
				_, _, err := wal.Open(o, 0, func(uint64, []byte) error { called = true; return nil })
				want := wal.ErrWrongKey
				if c == nil {
					want = wal.ErrNoKey
				}
				if !errors.Is(err, want) || called {
					t.Fatalf("Open(key %v, repair %v) = %v (replayed %v), want %v", c != nil, repair, err, called, want)
				}
				sameSnapshot(t, before, snapshot(t, fsys, "w"))
			}
		}
		if _, err := wal.Verify(fsys, "w", key(3), nil); !errors.Is(err, wal.ErrWrongKey) {
			t.Fatalf("Verify with wrong key: %v", err)
		}
		l, rep, r := open(t, opts(fsys, key(1)), 0)
		checkFixed(t, r, 1, 25)
		if rep.TornSegment != last {
			t.Fatalf("report %+v", rep)
		}
		closeLog(t, l)
	})
	t.Run("key on plain log", func(t *testing.T) {
		fsys := vfs.NewMem()
		writeFixed(t, opts(fsys, nil), 3)
		if _, _, err := wal.Open(opts(fsys, key(1)), 0, nil); !errors.Is(err, wal.ErrNotEncrypted) {
			t.Fatalf("Open = %v", err)
		}
	})
	t.Run("tampering", func(t *testing.T) {
		for _, lsn := range []uint64{13, 25} { // mid-log, and the very last record
			fsys := vfs.NewMem()
			c := key(1)
			writeFixed(t, opts(fsys, c), 25)
			path := segOf("w", lsn)
			b := readAll(t, fsys, path)
			off := recOff(c, lsn)
			rec := b[off : off+recSize(c)]
			rec[recHeaderSize+crypt.NonceSize+5] ^= 1 // a ciphertext byte
			salt := binary.LittleEndian.Uint32(b[12:16])
			binary.LittleEndian.PutUint32(rec, crc32.Update(salt, crc32.MakeTable(crc32.Castagnoli), rec[4:]))
			writeAt(t, fsys, path, rec, off)
			_, _, err := wal.Open(opts(fsys, c), 0, nil)
			var ce *base.CorruptionError
			if !errors.As(err, &ce) || ce.File != path || ce.Offset != off || !strings.Contains(ce.Reason, "authentication") {
				t.Fatalf("tampered record %d: %v", lsn, err)
			}
		}
	})
}

// TestCorruptionBeforeALaterSync: records appended behind one sync carry
// no proof of each other, but a record appended after that sync proves
// them all synced, so damage to one of them is corruption, not a torn
// tail, however many records of the group lie between (a server that
// commits many clients' writes behind one sync makes such groups).
// Break it caught: recovery looking only at the first valid record after
// the damage (records 43 and 44, appended before the sync) and cutting
// 42..45 as a torn tail.
func TestCorruptionBeforeALaterSync(t *testing.T) {
	fsys := vfs.NewMem()
	opts := wal.Options{FS: fsys, Dir: "w", Sync: wal.SyncNone, SegmentSize: fixedSeg(nil), NoPreallocate: true}
	l, _, _ := open(t, opts, 0)
	for i := uint64(1); i <= 44; i++ {
		if _, err := l.Append(fixedPayload(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(fixedPayload(45)); err != nil {
		t.Fatal(err)
	}
	closeLog(t, l)
	flip(t, fsys, segOf("w", 42), recOff(nil, 42)+50)
	_, err := wal.Verify(fsys, "w", nil, nil)
	var ce *base.CorruptionError
	if !errors.As(err, &ce) || ce.Offset != recOff(nil, 42) || !strings.Contains(ce.Error(), "validates") {
		t.Fatalf("Verify: %v, want corruption of record 42 proven by record 45", err)
	}
}
