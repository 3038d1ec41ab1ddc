package wal_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine/internal/wal"
	"github.com/cubelinux/cube/engine/vfs"
)

// TestSyncHereBesideTheFlusher: callers that append without a kick and
// sync on their own goroutine, beside writers that wait for the flusher,
// across segment rollovers. Every record SyncHere or WaitDurable
// acknowledged is synced when they return and replayed after a reopen.
// Breaks caught: SyncHere not taking flushMu (the race detector sees two
// writers on the segment's offset: run with -race), waitSynced not
// kicking an idle flusher for a deferred append (the deferred-only
// WaitDurable below times out).
func TestSyncHereBesideTheFlusher(t *testing.T) {
	const writers, each = 8, 60
	fsys := vfs.NewMem()
	opts := wal.Options{FS: fsys, Dir: "w", SegmentSize: 2048, NoPreallocate: true}
	l, _, _ := open(t, opts, 0)
	var mu sync.Mutex
	got := map[uint64]string{}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				p := fmt.Sprintf("writer %d record %d", w, i)
				var lsn uint64
				var err error
				if w%2 == 0 {
					if lsn, err = l.AppendDeferred([]byte(p)); err == nil {
						err = l.SyncHere()
					}
				} else if lsn, err = l.Append([]byte(p)); err == nil {
					err = l.WaitDurable(context.Background(), lsn)
				}
				if err != nil {
					t.Error(err)
					return
				}
				if s := l.Synced(); s < lsn {
					t.Errorf("acknowledged %d with Synced %d", lsn, s)
				}
				mu.Lock()
				got[lsn] = p
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	// A deferred append nobody syncs still becomes durable for a waiter.
	lsn, err := l.AppendDeferred([]byte("deferred, then waited for"))
	if err != nil {
		t.Fatal(err)
	}
	got[lsn] = "deferred, then waited for"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.WaitDurable(ctx, lsn); err != nil {
		t.Fatalf("WaitDurable of a deferred append: %v", err)
	}
	if err := l.SyncHere(); err != nil {
		t.Fatalf("SyncHere with nothing to sync: %v", err)
	}
	closeLog(t, l)
	if err := l.SyncHere(); !errors.Is(err, wal.ErrClosed) {
		t.Errorf("SyncHere after Close: %v, want ErrClosed", err)
	}

	var r replayed
	l, _, err = wal.Open(opts, 0, r.fn)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog(t, l)
	if len(r.lsns) != len(got) {
		t.Fatalf("replayed %d records, want %d", len(r.lsns), len(got))
	}
	for lsn, p := range got {
		if string(r.payloads[lsn]) != p {
			t.Fatalf("lsn %d: replayed %q, want %q", lsn, r.payloads[lsn], p)
		}
	}
	if segs := segments(t, fsys, "w"); len(segs) < 3 {
		t.Errorf("%d segments: the test meant to cross rollovers", len(segs))
	}
}

// TestSyncHereFailureFailsTheLog: an fdatasync that fails in SyncHere
// fails the log as one in the flusher does: SyncHere, later appends and
// waiters all get ErrFailed, and nothing past the failure is called
// durable. Break caught: SyncHere returning the error without l.fail
// (the next Append succeeds).
func TestSyncHereFailureFailsTheLog(t *testing.T) {
	walSyncs := func(op vfs.Op) bool { return op.Kind == vfs.OpSync && strings.HasSuffix(op.Path, ".wal") }
	fsys := vfs.NewFaulty(vfs.NewMem(), vfs.Filter(walSyncs, vfs.FailAfter(vfs.OpSync, 3, syscall.EIO)))
	l, _, _ := open(t, wal.Options{FS: fsys, Dir: "w", NoPreallocate: true}, 0)
	var err error
	var lsn uint64
	for i := 0; i < 10 && err == nil; i++ {
		if lsn, err = l.AppendDeferred([]byte("x")); err == nil {
			err = l.SyncHere()
		}
	}
	if !errors.Is(err, wal.ErrFailed) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("SyncHere over a failing disk: %v, want ErrFailed wrapping EIO", err)
	}
	if l.Synced() >= lsn {
		t.Errorf("Synced %d covers %d, whose sync failed", l.Synced(), lsn)
	}
	if _, err := l.Append([]byte("y")); !errors.Is(err, wal.ErrFailed) {
		t.Errorf("Append after a failed SyncHere: %v, want ErrFailed", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.WaitDurable(ctx, lsn); !errors.Is(err, wal.ErrFailed) {
		t.Errorf("WaitDurable after a failed SyncHere: %v, want ErrFailed", err)
	}
	if err := l.SyncHere(); !errors.Is(err, wal.ErrFailed) {
		t.Errorf("second SyncHere: %v, want ErrFailed", err)
	}
	if err := l.Close(ctx); !errors.Is(err, wal.ErrFailed) {
		t.Errorf("Close: %v, want ErrFailed", err)
	}
}
