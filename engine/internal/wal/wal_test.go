package wal_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine/internal/base"
	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/internal/wal"
	"github.com/cubelinux/cube/engine/vfs"
)

func TestRoundTripRollovers(t *testing.T) {
	for _, tc := range []struct {
		name       string
		fs         func(t *testing.T) (vfs.FS, string)
		cipher     *crypt.Cipher
		noPrealloc bool
		mode       wal.SyncMode
	}{
		{"mem", memDir, nil, false, wal.SyncNone},
		{"mem/noprealloc", memDir, nil, true, wal.SyncNone},
		{"mem/encrypted", memDir, key(1), false, wal.SyncNone},
		{"mem/always", memDir, nil, false, wal.SyncAlways},
		{"mem/interval", memDir, nil, true, wal.SyncInterval},
		{"os", osDir, nil, false, wal.SyncNone},
		{"os/encrypted/noprealloc", osDir, key(2), true, wal.SyncNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, dir := tc.fs(t)
			opts := wal.Options{FS: fsys, Dir: dir, SegmentSize: 1024, Cipher: tc.cipher,
				NoPreallocate: tc.noPrealloc, Sync: tc.mode, SyncInterval: time.Millisecond}
			l, rep, r := open(t, opts, 0)
			if len(r.lsns) != 0 || rep.LastLSN != 0 {
				t.Fatalf("fresh log replayed %d records, report %+v", len(r.lsns), rep)
			}
			last := appendPayloads(t, l, 1, 600)
			if tc.mode == wal.SyncAlways {
				if err := l.WaitDurable(context.Background(), last); err != nil {
					t.Fatal(err)
				}
			}
			closeLog(t, l)
			if n := len(segments(t, fsys, dir)); n < 20 {
				t.Fatalf("%d segments, want many rollovers", n)
			}
			if rep, err := wal.Verify(fsys, dir, tc.cipher, nil); err != nil || rep.LastLSN != last || rep.TornSegment != "" {
				t.Fatalf("Verify = %+v, %v", rep, err)
			}

			l, rep, r = open(t, opts, 0)
			checkReplay(t, r, 1, last)
			if rep.FirstLSN != 1 || rep.LastLSN != last || rep.TornSegment != "" {
				t.Fatalf("report %+v", rep)
			}
			if l.Synced() != last || l.Written() != last {
				t.Fatalf("after open Synced %d Written %d, want %d", l.Synced(), l.Written(), last)
			}
			// Continue the log, then replay only after a checkpoint.
			last = appendPayloads(t, l, last+1, 300)
			closeLog(t, l)
			l, _, r = open(t, opts, 450)
			checkReplay(t, r, 451, last)
			closeLog(t, l)
		})
	}
}

func memDir(t *testing.T) (vfs.FS, string) { return vfs.NewMem(), "db/wal" }
func osDir(t *testing.T) (vfs.FS, string)  { return vfs.OS(), filepath.Join(t.TempDir(), "wal") }

func TestBigRecordGetsOwnSegment(t *testing.T) {
	fsys := vfs.NewMem()
	opts := wal.Options{FS: fsys, Dir: "w", SegmentSize: 256, Sync: wal.SyncAlways}
	l, _, _ := open(t, opts, 0)
	big := make([]byte, 5000)
	for i := range big {
		big[i] = byte(i)
	}
	for i := 0; i < 3; i++ {
		lsn, err := l.Append(big)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.WaitDurable(context.Background(), lsn); err != nil {
			t.Fatal(err)
		}
	}
	closeLog(t, l)
	l, rep, r := open(t, opts, 0)
	defer closeLog(t, l)
	if len(r.lsns) != 3 || rep.LastLSN != 3 || string(r.payloads[2]) != string(big) {
		t.Fatalf("replayed %v, report %+v", r.lsns, rep)
	}
}

func TestGroupCommitConcurrent(t *testing.T) {
	const writers, each = 64, 40
	fsys := vfs.NewMem()
	var syncs atomic.Int64
	opts := wal.Options{FS: fsys, Dir: "w", SegmentSize: 4096, OnSync: func(d time.Duration, n int) {
		syncs.Add(1)
		if n <= 0 {
			t.Errorf("OnSync with %d bytes", n)
		}
		time.Sleep(200 * time.Microsecond) // a disk is slow: let batches form
	}}
	l, _, _ := open(t, opts, 0)
	var mu sync.Mutex
	got := map[uint64][]byte{}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				p := []byte(fmt.Sprintf("writer %d record %d", w, i))
				lsn, err := l.Append(p)
				if err != nil {
					t.Error(err)
					return
				}
				if err := l.WaitDurable(context.Background(), lsn); err != nil {
					t.Error(err)
					return
				}
				if s := l.Synced(); s < lsn {
					t.Errorf("WaitDurable(%d) returned with Synced %d", lsn, s)
				}
				mu.Lock()
				got[lsn] = p
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	st := l.Stats()
	closeLog(t, l)
	n := uint64(writers * each)
	if len(got) != int(n) {
		t.Fatalf("%d distinct LSNs, want %d", len(got), n)
	}
	if st.Syncs >= n/2 {
		t.Errorf("%d syncs for %d records: no group commit", st.Syncs, n)
	}
	if st.Syncs == 0 || uint64(syncs.Load()) != st.Syncs || st.SyncedBytes == 0 {
		t.Errorf("stats %+v, OnSync called %d times", st, syncs.Load())
	}
	t.Logf("%d records, %d syncs", n, st.Syncs)
	var r replayed
	l, _, err := wal.Open(opts, 0, r.fn)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog(t, l)
	if len(r.lsns) != int(n) {
		t.Fatalf("replayed %d, want %d", len(r.lsns), n)
	}
	for lsn, p := range got {
		if string(r.payloads[lsn]) != string(p) {
			t.Fatalf("lsn %d: replayed %q, want %q", lsn, r.payloads[lsn], p)
		}
	}
}

func TestSyncModes(t *testing.T) {
	ctx := context.Background()
	t.Run("interval", func(t *testing.T) {
		opts := wal.Options{FS: vfs.NewMem(), Dir: "w", Sync: wal.SyncInterval, SyncInterval: 5 * time.Millisecond, SegmentSize: 4096}
		l, _, _ := open(t, opts, 0)
		defer closeLog(t, l)
		lsn, _ := l.Append([]byte("x"))
		start := time.Now()
		if err := l.WaitDurable(ctx, lsn); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > time.Millisecond {
			t.Errorf("WaitDurable blocked in SyncInterval")
		}
		deadline := time.Now().Add(5 * time.Second)
		for l.Synced() < lsn {
			if time.Now().After(deadline) {
				t.Fatal("interval sync never happened")
			}
			time.Sleep(time.Millisecond)
		}
	})
	t.Run("none", func(t *testing.T) {
		opts := wal.Options{FS: vfs.NewMem(), Dir: "w", Sync: wal.SyncNone, BufferSize: 1000, SegmentSize: 1 << 20, NoPreallocate: true}
		l, _, _ := open(t, opts, 0)
		defer closeLog(t, l)
		lsn, _ := l.Append([]byte("x"))
		if err := l.WaitDurable(ctx, lsn); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
		if l.Written() != 0 || l.Synced() != 0 {
			t.Fatalf("small append written %d synced %d in SyncNone", l.Written(), l.Synced())
		}
		var last uint64
		for i := 0; i < 20; i++ {
			last, _ = l.Append(make([]byte, 100))
		}
		deadline := time.Now().Add(5 * time.Second)
		for l.Written() == 0 {
			if time.Now().After(deadline) {
				t.Fatal("buffer over BufferSize never written")
			}
			time.Sleep(time.Millisecond)
		}
		if l.Synced() != 0 || l.Stats().Syncs != 0 {
			t.Fatalf("SyncNone synced: %+v", l.Stats())
		}
		if err := l.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if l.Synced() != last || l.Written() != last {
			t.Fatalf("after Sync synced %d written %d, want %d", l.Synced(), l.Written(), last)
		}
	})
	t.Run("always-without-wait", func(t *testing.T) {
		// Appends alone are made durable by the flusher in SyncAlways.
		opts := wal.Options{FS: vfs.NewMem(), Dir: "w", SegmentSize: 4096}
		l, _, _ := open(t, opts, 0)
		defer closeLog(t, l)
		lsn, _ := l.Append([]byte("x"))
		deadline := time.Now().Add(5 * time.Second)
		for l.Synced() < lsn {
			if time.Now().After(deadline) {
				t.Fatal("never synced")
			}
			time.Sleep(100 * time.Microsecond)
		}
	})
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	fsys := vfs.NewMem()
	opts := wal.Options{FS: fsys, Dir: "w", SegmentSize: 4096}
	l, _, _ := open(t, opts, 0)
	if _, _, err := wal.Open(opts, 0, nil); !errors.Is(err, vfs.ErrLocked) {
		t.Errorf("second Open: %v, want ErrLocked", err)
	}
	if _, err := l.Append(make([]byte, wal.MaxPayload+1)); !errors.Is(err, wal.ErrTooLarge) {
		t.Errorf("huge Append: %v", err)
	}
	if err := l.WaitDurable(ctx, 5); !errors.Is(err, wal.ErrNotAppended) {
		t.Errorf("WaitDurable(unappended): %v", err)
	}
	lsn, _ := l.Append([]byte("a"))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := l.WaitDurable(cctx, lsn); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("WaitDurable(canceled): %v", err)
	}
	closeLog(t, l)
	if _, err := l.Append([]byte("b")); !errors.Is(err, wal.ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	if err := l.WaitDurable(ctx, lsn); err != nil {
		t.Errorf("WaitDurable of a durable lsn after Close: %v", err)
	}
	if err := l.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, _, err := wal.Open(wal.Options{Dir: "x"}, 0, nil); err == nil {
		t.Error("Open without FS succeeded")
	}
	// A replay error stops Open.
	boom := errors.New("boom")
	if _, _, err := wal.Open(opts, 0, func(uint64, []byte) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Open with failing replay: %v", err)
	}
	// And releases the lock.
	l2, _, _ := open(t, opts, 0)
	closeLog(t, l2)
}

func TestRemoveBeforeAndSize(t *testing.T) {
	fsys := vfs.NewMem()
	opts := wal.Options{FS: fsys, Dir: "w", SegmentSize: 512, Sync: wal.SyncNone}
	l, _, _ := open(t, opts, 0)
	size0 := l.Size()
	last := appendPayloads(t, l, 1, 200)
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	size1 := l.Size()
	if size1 <= size0 {
		t.Fatalf("Size %d after appends, %d before", size1, size0)
	}
	before := len(segments(t, fsys, "w"))
	if err := l.RemoveBefore(100); err != nil {
		t.Fatal(err)
	}
	after := len(segments(t, fsys, "w"))
	if after >= before || l.Size() >= size1 {
		t.Fatalf("RemoveBefore(100): segments %d -> %d, size %d -> %d", before, after, size1, l.Size())
	}
	closeLog(t, l)
	// Every record > 100 is still there; the first segment left starts at
	// or below 101.
	l, rep, r := open(t, opts, 100)
	checkReplay(t, r, 101, last)
	if rep.FirstLSN > 101 {
		t.Fatalf("RemoveBefore(100) removed record %d..", rep.FirstLSN)
	}
	if err := l.RemoveBefore(last); err != nil {
		t.Fatal(err)
	}
	if n := len(segments(t, fsys, "w")); n != 1 {
		t.Fatalf("RemoveBefore(last) left %d segments, want the current one", n)
	}
	lsn, err := l.Append(payload(last + 1))
	if err != nil || lsn != last+1 {
		t.Fatalf("Append after RemoveBefore: %d %v", lsn, err)
	}
	closeLog(t, l)
	l, _, r = open(t, opts, last)
	checkReplay(t, r, last+1, last+1)
	closeLog(t, l)
}

func TestOpenAfterBeyondLog(t *testing.T) {
	fsys := vfs.NewMem()
	opts := wal.Options{FS: fsys, Dir: "w", SegmentSize: 4096}
	l, _, _ := open(t, opts, 0)
	appendPayloads(t, l, 1, 10)
	closeLog(t, l)
	// A checkpoint at 20 covers more than the log holds.
	l, _, r := open(t, opts, 20)
	if len(r.lsns) != 0 {
		t.Fatalf("replayed %v", r.lsns)
	}
	if lsn, err := l.Append(payload(21)); err != nil || lsn != 21 {
		t.Fatalf("Append = %d, %v; want 21", lsn, err)
	}
	closeLog(t, l)
	l, _, r = open(t, opts, 20)
	checkReplay(t, r, 21, 21)
	closeLog(t, l)
	// Without that checkpoint, records 1..20 are missing.
	// Repair cannot bring them back, so the error must not say it can.
	if _, _, err := wal.Open(opts, 0, nil); !base.IsCorruption(err) || errors.Is(err, wal.ErrRepairable) {
		t.Fatalf("Open(after=0) of a log starting at 21: %v", err)
	}
}

// TestPreallocatedSegments checks that the log moves into zero-filled
// segments and that their zero tails read as a clean end.
func TestPreallocatedSegments(t *testing.T) {
	fsys := vfs.NewMem()
	const segSize = 64 << 10
	opts := wal.Options{FS: fsys, Dir: "w", SegmentSize: segSize}
	l, _, _ := open(t, opts, 0)
	ctx := context.Background()
	lsn := uint64(0)
	deadline := time.Now().Add(10 * time.Second)
	for {
		lsn = appendPayloads(t, l, lsn+1, 1)
		if err := l.WaitDurable(ctx, lsn); err != nil {
			t.Fatal(err)
		}
		segs := segments(t, fsys, "w")
		fi, err := fsys.Stat(filepath.Join("w", segs[len(segs)-1]))
		if err != nil {
			t.Fatal(err)
		}
		if len(segs) >= 2 && fi.Size() == segSize {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never moved into a preallocated segment: %d segments, last %d bytes", len(segs), fi.Size())
		}
		time.Sleep(100 * time.Microsecond)
	}
	// Fill past a rollover, which must reuse the next spare.
	lsn = appendPayloads(t, l, lsn+1, 1000)
	if err := l.WaitDurable(ctx, lsn); err != nil {
		t.Fatal(err)
	}
	closeLog(t, l)
	if rep, err := wal.Verify(fsys, "w", nil, nil); err != nil || rep.TornSegment != "" || rep.LastLSN != lsn {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
	l, rep, r := open(t, opts, 0)
	checkReplay(t, r, 1, lsn)
	if rep.TornSegment != "" {
		t.Fatalf("zero tail reported as torn: %+v", rep)
	}
	closeLog(t, l)
}

// TestCloseDoesNotWaitForTheSpare: Close stops the background zero-fill
// of the next segment instead of waiting for all of it, and leaves no half
// spare behind. Each 256 KiB chunk of the spare takes 2 ms here, so a
// whole 64 MiB spare is 256 chunks (half a second); a Close right after
// Open must stop it within a chunk or two. It caught Close waiting for the
// whole fill (the stop flag not set in shutdown): every chunk was written,
// which cost each short-lived process (one CLI command) a whole spare.
func TestCloseDoesNotWaitForTheSpare(t *testing.T) {
	var chunks atomic.Int64
	fsys := vfs.NewFaulty(vfs.NewMem(), vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpWrite && strings.HasSuffix(op.Path, "prealloc.tmp") {
			chunks.Add(1)
			time.Sleep(2 * time.Millisecond)
		}
		return nil
	}))
	const seg = 64 << 20
	opts := wal.Options{FS: fsys, Dir: "w", SegmentSize: seg, Sync: wal.SyncAlways}
	l, _, _ := open(t, opts, 0)
	appendPayloads(t, l, 1, 3)
	closeLog(t, l)
	if n := chunks.Load(); n >= seg/(256<<10) {
		t.Fatalf("Close waited for the whole spare: %d chunks written", n)
	}
	names, err := fsys.List("w")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n == "prealloc.tmp" {
			t.Fatalf("a stopped spare was left behind: %v", names)
		}
	}
	// The log reopens with its records, and a log left open long enough
	// still gets its spare.
	l, rep, r := open(t, opts, 0)
	if rep.LastLSN != 3 || len(r.lsns) != 3 {
		t.Fatalf("reopened: last %d, replayed %v", rep.LastLSN, r.lsns)
	}
	appendPayloads(t, l, 4, 1)
	closeLog(t, l)
}
