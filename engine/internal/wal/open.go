package wal

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cubelinux/cube/engine/internal/base"
	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/vfs"
)

const lockName = "LOCK"

// Open opens the log in opts.Dir, creating it if needed, and recovers it:
// it calls replay, in LSN order, for every valid record with LSN > after
// (the checkpoint's LSN), then positions the writer after the last valid
// record. payload is only valid during the call.
//
// A torn tail (bad bytes at the end of the last segment that a crash
// during an unsynced write explains) is cut and described in the Report.
// Anything else that does not validate is a *base.CorruptionError (which
// also matches ErrRepairable when Repair would cut it); with
// opts.Repair the log is cut there instead (see Report). If Open returns
// an error, state built by replay must be discarded: it may have seen
// records before the bad spot.
//
// Nothing on disk changes before the whole log has been read and the key
// checked, so a wrong key (ErrWrongKey) or a refused corruption leaves the
// files as they were.
func Open(opts Options, after uint64, replay func(lsn uint64, payload []byte) error) (*Log, Report, error) {
	opts.normalize()
	if opts.FS == nil {
		return nil, Report{}, errors.New("wal: Options.FS is nil")
	}
	fs, dir := opts.FS, opts.Dir
	if err := mkdirDurable(fs, dir); err != nil {
		return nil, Report{}, fmt.Errorf("wal: create %s: %w", dir, err)
	}
	lock, err := fs.Lock(filepath.Join(dir, lockName))
	if err != nil {
		return nil, Report{}, fmt.Errorf("wal: lock %s: %w", dir, err)
	}
	l, rep, err := open(opts, lock, after, replay)
	if err != nil {
		lock.Close()
		return nil, rep, err
	}
	go l.run()
	return l, rep, nil
}

func open(opts Options, lock interface{ Close() error }, after uint64, replay func(uint64, []byte) error) (*Log, Report, error) {
	fs, dir := opts.FS, opts.Dir
	st, err := scan(fs, dir, opts.Cipher, after, replay)
	if err != nil {
		return nil, Report{}, err
	}
	rep := st.rep
	if st.corrupt != nil && !opts.Repair {
		return nil, rep, repairable(st.corrupt)
	}
	if len(st.segs) > 0 && st.segs[0].hdr.firstLSN > after+1 {
		return nil, rep, base.Corruptf(st.segs[0].path, 0, "log starts at LSN %d but the checkpoint is at %d: records are missing", st.segs[0].hdr.firstLSN, after)
	}

	// The key is good and the log is accepted: from here on, change disk.
	l := &Log{
		fs:       fs,
		dir:      dir,
		opts:     opts,
		cipher:   opts.Cipher,
		lock:     lock,
		durable:  make(chan struct{}),
		kick:     make(chan struct{}, 1),
		done:     make(chan struct{}),
		prepDone: make(chan error, 1),
	}
	fail := func(err error) (*Log, Report, error) {
		if l.f != nil {
			l.f.Close()
		}
		if l.prepping {
			l.prepStop.Store(true)
			<-l.prepDone
		}
		return nil, rep, err
	}
	segs := st.segs
	if st.corrupt != nil {
		if segs, err = repair(fs, dir, st, &rep); err != nil {
			return fail(err)
		}
	}
	if rep.TornSegment != "" {
		if err := cutTorn(fs, rep.TornSegment, rep.TornOffset, st.tornEnd, opts.NoPreallocate); err != nil {
			return fail(err)
		}
	}
	names, err := fs.List(dir)
	if err != nil {
		return fail(fmt.Errorf("wal: list %s: %w", dir, err))
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".tmp") {
			if err := fs.Remove(filepath.Join(dir, n)); err != nil {
				return fail(fmt.Errorf("wal: remove %s: %w", n, err))
			}
		}
	}

	next := st.next
	if len(segs) > 0 && next <= after {
		// Every record on disk is covered by the checkpoint and the log
		// ends before it: start over at after+1. Remove first, so that a
		// crash in between leaves no gap.
		for _, s := range segs {
			if err := fs.Remove(s.path); err != nil {
				return fail(fmt.Errorf("wal: remove %s: %w", s.path, err))
			}
		}
		if err := fs.SyncDir(dir); err != nil {
			return fail(fmt.Errorf("wal: sync dir %s: %w", dir, err))
		}
		segs = nil
	}
	if len(segs) == 0 {
		next = max(next, after+1)
		l.next = next
		l.salt = newSalt(0)
		if err := l.roll(next, l.salt); err != nil {
			return fail(err)
		}
		l.segFill = segHeaderSize
	} else {
		for _, s := range segs {
			l.segs = append(l.segs, segInfo{name: s.name, first: s.hdr.firstLSN, size: s.end})
			l.size.Add(s.end)
		}
		last := segs[len(segs)-1]
		f, err := fs.OpenReadWrite(last.path)
		if err != nil {
			return fail(fmt.Errorf("wal: open %s: %w", last.path, err))
		}
		l.f = f
		// What was read may only be in the page cache of a process that
		// crashed; make it durable before calling it synced.
		if err := f.Sync(); err != nil {
			return fail(fmt.Errorf("wal: fdatasync %s: %w", last.path, err))
		}
		l.fOff = last.end
		if size, err := f.Size(); err == nil && size >= opts.SegmentSize {
			l.curPrealloc = true
		}
		l.salt, l.segFill = last.hdr.salt, last.end
		l.next = next
		l.startPrep()
	}
	l.written.Store(l.next - 1)
	l.synced.Store(l.next - 1)
	return l, rep, nil
}

// repair cuts the log at st.corrupt: the cut bytes are copied to
// <segment>.cut-<offset> (whole later segments are renamed to
// <segment>.cut-0) and made durable before the segment is truncated.
func repair(fs vfs.FS, dir string, st *scanState, rep *Report) ([]scanned, error) {
	seg := st.segs[st.cutSeg]
	segs := st.segs[:st.cutSeg]
	cutName := func(path string, off int64) string { return fmt.Sprintf("%s.cut-%d", path, off) }
	if st.cutOff == 0 {
		if err := fs.Rename(seg.path, cutName(seg.path, 0)); err != nil {
			return nil, fmt.Errorf("wal: repair: %w", err)
		}
		rep.CutFiles = append(rep.CutFiles, cutName(seg.path, 0))
	} else {
		data, err := readFile(fs, seg.path, nil)
		if err != nil {
			return nil, err
		}
		dst := cutName(seg.path, st.cutOff)
		if err := writeFile(fs, dst, data[st.cutOff:]); err != nil {
			return nil, err
		}
		rep.CutFiles = append(rep.CutFiles, dst)
		seg.end = st.cutOff
		segs = append(segs, seg)
	}
	for _, s := range st.rest {
		if err := fs.Rename(s.path, cutName(s.path, 0)); err != nil {
			return nil, fmt.Errorf("wal: repair: %w", err)
		}
		rep.CutFiles = append(rep.CutFiles, cutName(s.path, 0))
	}
	if err := fs.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("wal: repair: sync dir: %w", err)
	}
	if st.cutOff > 0 {
		if err := truncate(fs, seg.path, st.cutOff); err != nil {
			return nil, err
		}
	}
	rep.Repaired = st.corrupt
	return segs, nil
}

// cutTorn removes the torn bytes [off, end) of the last segment: it
// overwrites them with zeros, keeping the file preallocated, or truncates.
func cutTorn(fs vfs.FS, path string, off, end int64, noPrealloc bool) error {
	if noPrealloc {
		return truncate(fs, path, off)
	}
	f, err := fs.OpenReadWrite(path)
	if err != nil {
		return fmt.Errorf("wal: cut torn tail of %s: %w", path, err)
	}
	defer f.Close()
	if end > off {
		if _, err := f.WriteAt(make([]byte, end-off), off); err != nil {
			return fmt.Errorf("wal: cut torn tail of %s: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("wal: cut torn tail of %s: %w", path, err)
	}
	return nil
}

func truncate(fs vfs.FS, path string, size int64) error {
	f, err := fs.OpenReadWrite(path)
	if err != nil {
		return fmt.Errorf("wal: truncate %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("wal: truncate %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("wal: truncate %s: %w", path, err)
	}
	return nil
}

func writeFile(fs vfs.FS, path string, data []byte) error {
	f, err := fs.Create(path)
	if err != nil {
		return fmt.Errorf("wal: create %s: %w", path, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return fmt.Errorf("wal: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("wal: sync %s: %w", path, err)
	}
	return f.Close()
}

// Verify reads every segment in fs/dir and checks every record (and, with
// c, its authentication) without changing anything. check, when not nil,
// sees each record's payload as replay would, so a payload the caller
// cannot decode is found offline too: a corruption error it returns is
// located at the record, as Open locates it. Verify returns the Report
// Open would make, and a *base.CorruptionError, ErrWrongKey, ErrNoKey or
// ErrNotEncrypted when Open would refuse the log.
func Verify(fs vfs.FS, dir string, c *crypt.Cipher, check func(lsn uint64, payload []byte) error) (Report, error) {
	st, err := scan(fs, dir, c, 0, check)
	if err != nil {
		return Report{}, err
	}
	if st.corrupt != nil {
		return st.rep, repairable(st.corrupt)
	}
	return st.rep, nil
}

// mkdirDurable creates dir and its missing parents, and fsyncs the parent
// of each directory it created: a new directory's entry is not durable
// until its parent is synced.
func mkdirDurable(fs vfs.FS, dir string) error {
	var created []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := fs.Stat(p); err == nil {
			break
		}
		created = append(created, p)
		if parent := filepath.Dir(p); parent == p {
			break
		}
	}
	if len(created) == 0 {
		return nil
	}
	if err := fs.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, p := range created {
		if err := fs.SyncDir(filepath.Dir(p)); err != nil {
			return err
		}
	}
	return nil
}
