package wal

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/vfs"
)

// Log is an open write-ahead log. Its methods are safe for concurrent use.
type Log struct {
	fs     vfs.FS
	dir    string
	opts   Options
	cipher *crypt.Cipher
	lock   io.Closer

	// flushMu is held by whoever writes and fdatasyncs: the flusher, or
	// a caller of SyncHere. It guards the fields below "Owned by the
	// writer" and is taken before mu, never after.
	flushMu sync.Mutex
	shut    bool // the files are closed (under flushMu)

	mu      sync.Mutex
	next    uint64     // LSN the next Append gets
	pending []byte     // framed records not yet handed to the flusher
	breaks  []segBreak // segment boundaries inside pending
	segFill int64      // bytes of the segment receiving appends, pending included
	salt    uint32     // salt of the segment receiving appends
	err     error      // fatal error; set once
	closing bool       // Close was called
	// rollEarly asks Append to start a new segment: the current one is
	// not preallocated and a preallocated spare is ready.
	rollEarly   bool
	curPrealloc bool          // the current segment was zero-filled ahead
	idle        bool          // the flusher waits for a kick
	syncReq     uint64        // Sync asked for fdatasync up to this LSN
	waiters     bool          // someone waits on durable
	durable     chan struct{} // closed and replaced when synced advances or the log fails
	kick        chan struct{} // wakes an idle flusher; capacity 1
	done        chan struct{} // closed when the flusher exits
	closeErr    error

	written     atomic.Uint64
	synced      atomic.Uint64
	size        atomic.Int64
	syncs       atomic.Uint64
	syncedBytes atomic.Uint64

	// Owned by the writer: whoever holds flushMu.
	f           vfs.File
	fOff        int64
	flushBuf    []byte
	flushBreaks []segBreak
	unsynced    int // bytes written since the last fdatasync
	prepping    bool
	prepDone    chan error
	// prepStop asks a zero-fill in progress to give up: Close need not
	// wait for 64 MiB of zeros nobody will write into (a short-lived
	// process, such as one CLI command, would otherwise pay for a whole
	// spare on every open). Set only by shutdown and a failed open.
	prepStop atomic.Bool

	segMu sync.Mutex
	segs  []segInfo // segments on disk, oldest first
}

// segBreak marks where, inside a batch of framed records, a new segment
// starts.
type segBreak struct {
	off   int
	first uint64
	salt  uint32
}

type segInfo struct {
	name  string // file name in dir
	first uint64
	size  int64 // logical bytes: header and records
}

// Stats are cumulative counters of a Log.
type Stats struct {
	Syncs       uint64 // fdatasyncs done by the flusher and Sync
	SyncedBytes uint64 // bytes those fdatasyncs covered
	Written     uint64 // LSN written to the OS
	Synced      uint64 // LSN durable
}

// Append copies payload into the log buffer and returns its LSN. It does no
// I/O and guarantees no durability: the record is durable once
// WaitDurable(ctx, lsn) returns nil in SyncAlways, after the next interval
// sync in SyncInterval, and after Sync or Close in SyncNone.
//
// # Errors
// ErrTooLarge, ErrClosed, or an error wrapping ErrFailed once the log failed.
func (l *Log) Append(payload []byte) (uint64, error) {
	return l.append(payload, true)
}

// AppendDeferred is Append for a caller that will make the record durable
// itself with SyncHere: in SyncAlways it does not wake the flusher, whose
// round would only race the caller's. A WaitDurable for the record still
// wakes it, so nothing waits forever if the caller never syncs.
func (l *Log) AppendDeferred(payload []byte) (uint64, error) {
	return l.append(payload, false)
}

func (l *Log) append(payload []byte, kick bool) (uint64, error) {
	if len(payload) > MaxPayload {
		return 0, fmt.Errorf("%w: %d bytes", ErrTooLarge, len(payload))
	}
	n := int64(recHeaderSize + len(payload))
	if l.cipher != nil {
		n += crypt.Overhead
	}
	l.mu.Lock()
	if l.err != nil || l.closing {
		err := l.err
		if err == nil {
			err = ErrClosed
		}
		l.mu.Unlock()
		return 0, err
	}
	if (l.segFill+n > l.opts.SegmentSize || l.rollEarly) && l.segFill > segHeaderSize {
		l.rollEarly = false
		l.salt = newSalt(l.salt)
		l.breaks = append(l.breaks, segBreak{off: len(l.pending), first: l.next, salt: l.salt})
		l.segFill = segHeaderSize
	}
	lsn := l.next
	l.next++
	l.pending = appendRecord(l.pending, l.salt, lsn, l.synced.Load(), payload, l.cipher)
	l.segFill += n
	if l.idle && ((kick && l.opts.Sync == SyncAlways) || len(l.pending) >= l.opts.BufferSize) {
		l.idle = false
		l.wake()
	}
	l.mu.Unlock()
	return lsn, nil
}

// WaitDurable blocks until the record lsn is durable as the sync mode
// defines it. In SyncAlways that is after an fdatasync covering lsn; in
// SyncInterval and SyncNone it returns at once (see SyncMode for the loss
// bounds). It returns nil for an LSN already durable even after the log
// failed.
//
// # Errors
// ctx.Err(), ErrNotAppended, or an error wrapping ErrFailed.
func (l *Log) WaitDurable(ctx context.Context, lsn uint64) error {
	if lsn <= l.synced.Load() {
		return nil
	}
	if l.opts.Sync != SyncAlways {
		l.mu.Lock()
		err := l.err
		if err == nil && lsn >= l.next {
			err = fmt.Errorf("%w: %d", ErrNotAppended, lsn)
		}
		l.mu.Unlock()
		return err
	}
	return l.waitSynced(ctx, lsn)
}

func (l *Log) waitSynced(ctx context.Context, lsn uint64) error {
	for {
		l.mu.Lock()
		if lsn <= l.synced.Load() {
			l.mu.Unlock()
			return nil
		}
		if l.err != nil {
			err := l.err
			l.mu.Unlock()
			return err
		}
		if lsn >= l.next {
			l.mu.Unlock()
			return fmt.Errorf("%w: %d", ErrNotAppended, lsn)
		}
		if l.flusherDone() {
			l.mu.Unlock()
			return ErrClosed
		}
		if l.idle && len(l.pending) > 0 {
			// Appended without a kick (AppendDeferred).
			l.idle = false
			l.wake()
		}
		l.waiters = true
		ch := l.durable
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *Log) flusherDone() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// Sync writes and fdatasyncs everything appended before the call, in any
// sync mode, and returns when it is durable.
func (l *Log) Sync(ctx context.Context) error {
	l.mu.Lock()
	target := l.next - 1
	if target > l.syncReq {
		l.syncReq = target
	}
	if l.idle {
		l.idle = false
		l.wake()
	}
	l.mu.Unlock()
	if target == 0 {
		return l.Err()
	}
	return l.waitSynced(ctx, target)
}

// SyncHere writes and fdatasyncs everything appended before the call on
// the calling goroutine, in any sync mode, and returns once it is durable.
// It is Sync for a caller whose thread has nothing better to do meanwhile
// (the daemon's event loop, which answers nobody until the sync is done):
// the flusher's wake-up and the waiter's cost more than the sync itself
// at one small write per round trip. If the flusher is writing, SyncHere
// waits for its round and then syncs what is left.
//
// # Errors
// ErrClosed, or an error wrapping ErrFailed once the log failed (a failure
// here fails the log, as one in the flusher does).
func (l *Log) SyncHere() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	switch {
	case l.err != nil:
		err := l.err
		l.mu.Unlock()
		return err
	case l.shut:
		l.mu.Unlock()
		return ErrClosed
	case l.next-1 <= l.synced.Load():
		l.mu.Unlock()
		return nil
	}
	if err := l.roundLocked(true); err != nil {
		l.fail(err)
		l.wake() // the flusher shuts down on seeing the failure
		return l.Err()
	}
	return nil
}

// Written returns the highest LSN handed to the OS.
func (l *Log) Written() uint64 { return l.written.Load() }

// Synced returns the highest durable LSN.
func (l *Log) Synced() uint64 { return l.synced.Load() }

// Err returns the error that failed the log, or nil.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Stats returns the log's counters.
func (l *Log) Stats() Stats {
	return Stats{
		Syncs:       l.syncs.Load(),
		SyncedBytes: l.syncedBytes.Load(),
		Written:     l.written.Load(),
		Synced:      l.synced.Load(),
	}
}

// Size returns the bytes of log on disk: segment headers and records
// written, not counting preallocated zeros. The engine checkpoints when it
// grows.
func (l *Log) Size() int64 { return l.size.Load() }

// RemoveBefore deletes the segments all of whose records have LSN <= lsn,
// then fsyncs the directory. Call it once a checkpoint covering lsn is
// durable. The segment receiving appends is never removed.
func (l *Log) RemoveBefore(lsn uint64) error {
	l.segMu.Lock()
	defer l.segMu.Unlock()
	n := 0
	for n+1 < len(l.segs) && l.segs[n+1].first-1 <= lsn {
		n++
	}
	if n == 0 {
		return nil
	}
	for i := 0; i < n; i++ {
		if err := l.fs.Remove(filepath.Join(l.dir, l.segs[i].name)); err != nil {
			l.segs = l.segs[i:]
			return fmt.Errorf("wal: remove segment: %w", err)
		}
		l.size.Add(-l.segs[i].size)
	}
	l.segs = append(l.segs[:0], l.segs[n:]...)
	if err := l.fs.SyncDir(l.dir); err != nil {
		return fmt.Errorf("wal: sync dir %s: %w", l.dir, err)
	}
	return nil
}

// Close writes and fdatasyncs everything appended, then closes the files.
// Appends after Close fail with ErrClosed. If ctx ends first Close returns
// ctx.Err() and the files are closed when the flusher finishes.
func (l *Log) Close(ctx context.Context) error {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		select {
		case <-l.done:
			return l.closeErr
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	l.closing = true
	if l.idle {
		l.idle = false
		l.wake()
	}
	l.mu.Unlock()
	select {
	case <-l.done:
		return l.closeErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wake kicks the idle flusher. The send never blocks: a token already
// waiting wakes it just as well.
func (l *Log) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}
