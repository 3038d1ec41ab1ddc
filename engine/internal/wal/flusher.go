package wal

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/cubelinux/cube/engine/vfs"
)

// run is the flusher: the one goroutine that writes and fdatasyncs. Each
// round it takes everything pending (group commit), writes it with one
// write per segment touched, fdatasyncs when the mode asks for it, and
// publishes the written and synced LSNs.
func (l *Log) run() {
	defer close(l.done)
	var tick <-chan time.Time
	if l.opts.Sync == SyncInterval {
		t := time.NewTicker(l.opts.SyncInterval)
		defer t.Stop()
		tick = t.C
	}
	ticked := false
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	for {
		l.mu.Lock()
		for !l.hasWorkLocked(&ticked) {
			if l.err != nil || l.closing {
				l.mu.Unlock()
				l.shutdown()
				return
			}
			l.idle = true
			l.mu.Unlock()
			// SyncHere may write meanwhile.
			l.flushMu.Unlock()
			select {
			case <-l.kick:
			case <-tick:
				ticked = true
			}
			l.flushMu.Lock()
			l.mu.Lock()
			l.idle = false
		}
		needSync := l.opts.Sync == SyncAlways || l.closing || ticked || l.syncReq > l.synced.Load()
		if needSync {
			ticked = false
		}
		if err := l.roundLocked(needSync); err != nil {
			l.fail(err)
			l.shutdown()
			return
		}
	}
}

// roundLocked writes everything pending, fdatasyncs it if needSync, and
// publishes the written and synced LSNs. It is called with flushMu and mu
// held and unlocks mu.
func (l *Log) roundLocked(needSync bool) error {
	buf, brks := l.pending, l.breaks
	l.pending, l.breaks = l.flushBuf[:0], l.flushBreaks[:0]
	hi := l.next - 1
	l.mu.Unlock()

	err := l.writeBatch(buf, brks)
	l.flushBuf, l.flushBreaks = buf[:0], brks[:0]
	if err != nil {
		return err
	}
	l.written.Store(hi)
	if !needSync {
		return nil
	}
	if hi > l.synced.Load() {
		if err := l.syncFile(); err != nil {
			return err
		}
	}
	l.publish(hi)
	return nil
}

// hasWorkLocked reports whether the flusher has something to do now.
func (l *Log) hasWorkLocked(ticked *bool) bool {
	if l.err != nil {
		return false
	}
	appended := l.next - 1
	unsynced := appended > l.synced.Load()
	if !unsynced {
		*ticked = false
		return false
	}
	switch {
	case l.closing, l.syncReq > l.synced.Load():
		return true
	case len(l.pending) >= l.opts.BufferSize:
		return true
	case l.opts.Sync == SyncAlways:
		return len(l.pending) > 0
	case l.opts.Sync == SyncInterval:
		return *ticked
	}
	return false
}

// writeBatch writes framed records, starting new segments at the breaks.
// A segment is fdatasynced before the next one is created, so every
// segment but the last is always complete on disk.
func (l *Log) writeBatch(buf []byte, brks []segBreak) error {
	start := 0
	for _, br := range brks {
		if err := l.writeAt(buf[start:br.off]); err != nil {
			return err
		}
		if err := l.syncFile(); err != nil {
			return err
		}
		l.publish(br.first - 1)
		if err := l.roll(br.first, br.salt); err != nil {
			return err
		}
		start = br.off
	}
	return l.writeAt(buf[start:])
}

func (l *Log) writeAt(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	n, err := l.f.WriteAt(b, l.fOff)
	l.fOff += int64(n)
	l.size.Add(int64(n))
	l.unsynced += n
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return failure("write "+l.f.Name(), err)
	}
	return nil
}

func (l *Log) syncFile() error {
	if l.unsynced == 0 {
		return nil // every write counts into unsynced: nothing to do
	}
	start := time.Now()
	err := l.f.Sync()
	d := time.Since(start)
	if err != nil {
		return failure("fdatasync "+l.f.Name(), err)
	}
	l.syncs.Add(1)
	l.syncedBytes.Add(uint64(l.unsynced))
	if l.opts.OnSync != nil {
		l.opts.OnSync(d, l.unsynced)
	}
	l.unsynced = 0
	return nil
}

// publish makes lsn the synced LSN and wakes the waiters.
func (l *Log) publish(lsn uint64) {
	l.mu.Lock()
	if lsn > l.synced.Load() {
		l.synced.Store(lsn)
	}
	if l.waiters {
		close(l.durable)
		l.durable = make(chan struct{})
		l.waiters = false
	}
	l.mu.Unlock()
}

// fail records a fatal error and wakes every waiter.
func (l *Log) fail(err error) {
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	close(l.durable)
	l.durable = make(chan struct{})
	l.waiters = false
	l.mu.Unlock()
}

// shutdown releases the files when the flusher exits; flushMu is held.
func (l *Log) shutdown() {
	l.shut = true
	if l.prepping {
		l.prepStop.Store(true)
		<-l.prepDone
		l.prepping = false
	}
	var err error
	if l.f != nil {
		err = l.f.Close()
	}
	if l.lock != nil {
		if lerr := l.lock.Close(); err == nil {
			err = lerr
		}
	}
	l.mu.Lock()
	if l.err != nil {
		err = l.err
	}
	l.mu.Unlock()
	l.closeErr = err
}

// roll makes a new segment starting at first the current one.
func (l *Log) roll(first uint64, salt uint32) error {
	f, prealloc, err := l.createSegment(first, salt)
	if err != nil {
		return failure("create segment", err)
	}
	l.mu.Lock()
	l.curPrealloc = prealloc
	if prealloc {
		l.rollEarly = false
	}
	l.mu.Unlock()
	l.segMu.Lock()
	if n := len(l.segs); n > 0 {
		l.segs[n-1].size = l.fOff
	}
	l.segs = append(l.segs, segInfo{name: segmentName(first), first: first, size: segHeaderSize})
	l.segMu.Unlock()
	old := l.f
	l.f, l.fOff = f, segHeaderSize
	l.size.Add(segHeaderSize)
	if old != nil {
		// Its contents are synced; a close error loses nothing.
		_ = old.Close()
	}
	l.startPrep()
	return nil
}

// createSegment makes the segment file for first and returns it open for
// writing. The file only gets its final name once its header is durable
// (write to a temporary name, fdatasync, rename, fsync the directory), so
// a segment on disk always has a valid header.
func (l *Log) createSegment(first uint64, salt uint32) (f vfs.File, prealloc bool, err error) {
	path := filepath.Join(l.dir, segmentName(first))
	src := path + ".tmp"
	if l.prepping {
		perr := <-l.prepDone
		l.prepping = false
		if perr == nil {
			if err := l.fs.Rename(filepath.Join(l.dir, spareName), src); err == nil {
				f, _ = l.fs.OpenReadWrite(src)
				prealloc = f != nil
			}
		}
	}
	if f == nil {
		// No spare: zero-filling here would stall every commit behind
		// it, so this segment simply grows by appending (and is left
		// early once a spare is ready, see startPrep).
		if f, err = l.fs.Create(src); err != nil {
			return nil, false, err
		}
	}
	hdr := encodeSegHeader(segHeader{version: formatVersion, flags: l.flags(), salt: salt, firstLSN: first}, l.cipher)
	if _, err := f.WriteAt(hdr, 0); err != nil {
		f.Close()
		return nil, false, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, false, err
	}
	if err := f.Close(); err != nil {
		return nil, false, err
	}
	if err := l.fs.Rename(src, path); err != nil {
		return nil, false, err
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return nil, false, err
	}
	f, err = l.fs.OpenReadWrite(path)
	return f, prealloc, err
}

func (l *Log) flags() uint16 {
	if l.cipher != nil {
		return flagEncrypted
	}
	return 0
}

// startPrep zero-fills the next segment's file in the background, so that
// a roll only writes a header.
func (l *Log) startPrep() {
	if l.opts.NoPreallocate || l.prepping {
		return
	}
	l.prepping = true
	go func() {
		err := l.prepare()
		if err == nil {
			l.mu.Lock()
			if !l.curPrealloc {
				// Leave the growing segment for the spare: syncs of
				// overwrites are cheaper than of appends.
				l.rollEarly = true
			}
			l.mu.Unlock()
		}
		l.prepDone <- err
	}()
}

func (l *Log) prepare() error {
	name := filepath.Join(l.dir, spareName)
	f, err := l.fs.Create(name)
	if err != nil {
		return err
	}
	if err := zeroFill(f, l.opts.SegmentSize, &l.prepStop); err != nil {
		f.Close()
		if errors.Is(err, errPrepStopped) {
			// Half a spare is no spare: Open would remove it anyway.
			_ = l.fs.Remove(name)
		}
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// errPrepStopped ends a zero-fill the log no longer wants.
var errPrepStopped = errors.New("wal: zero-fill stopped: the log is closing")

// zeroFill writes zeros over [0, size) so that later writes overwrite
// allocated blocks. With stop it gives up between chunks once stop is set.
func zeroFill(f vfs.File, size int64, stop *atomic.Bool) error {
	chunk := make([]byte, min(size, 256<<10))
	for off := int64(0); off < size; {
		if stop != nil && stop.Load() {
			return errPrepStopped
		}
		n := min(int64(len(chunk)), size-off)
		w, err := f.WriteAt(chunk[:n], off)
		if err == nil && int64(w) < n {
			err = io.ErrShortWrite
		}
		if err != nil {
			return fmt.Errorf("zero-fill %s: %w", f.Name(), err)
		}
		off += n
	}
	return nil
}
