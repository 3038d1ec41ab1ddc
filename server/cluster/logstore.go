package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/tidwall/wal"
)

// walStore is Raft's log on tidwall/wal: segment files an entry is
// appended to, and one fsync per StoreLogs, where a bbolt commit wrote
// several pages of its B+tree and synced twice (RATIONALE: "Raft's log
// store").
//
// tidwall/wal numbers its entries from 1 without gaps; a Raft log
// starts anywhere after a snapshot is installed. A raft index is the
// wal's index plus base, which the file "base" holds. When Raft empties
// the log (DeleteRange over all of it, after a snapshot install) and
// then writes after a gap, the store starts a new wal with a new base.
//
// An entry is a CRC-32C of the rest, a format byte (entryFormat), then
// the entry's index and term (uvarints), type (a byte), append time (a
// varint of Unix nanoseconds, 0 for none), extensions (a uvarint length
// and the bytes), then its data. tidwall/wal checks only its own
// framing, so the CRC is what tells a torn tail (a crash during an
// append that was never acknowledged) from an entry: opening the store
// cuts such a tail off.
type walStore struct {
	dir  string
	mu   sync.RWMutex // writers, and a reset, exclude readers of log and base
	log  *wal.Log
	base uint64
	// tail is the size of the wal's last segment, kept as tidwall/wal
	// keeps it, to know when an append started a new segment file,
	// whose name the directory must then hold durably.
	tail int
	// started counts the segments appends started (for tests).
	started int
	// failed is set once a write failed: tidwall/wal keeps in memory
	// an append it failed to write, so only a reopen, which reads what
	// the files hold, makes the log whole again.
	failed error
	// leading reports whether Raft's leader is appending (nil: never).
	// Its appends of commands are synced after StoreLogs returns (see
	// durability).
	leading func() bool
	// syncing is set from a deferred sync's start until it takes mu.
	syncing bool

	dmu sync.Mutex
	// durable is the Raft index through which the log is on disk: every
	// entry up to it that the log holds. Set under mu and dmu.
	durable uint64
	// synced is closed, and replaced, whenever durable grows or a
	// deferred sync fails.
	synced chan struct{}
	// closed is set by Close, under mu and dmu.
	closed bool
	// broken is failed, for waitDurable (under dmu).
	broken error
}

// durability: a leader's log is synced beside its replication.
//
// hashicorp/raft writes a leader's new entries to its log, and only
// once StoreLogs returns sends them to the followers, which write and
// sync them in turn: two syncs one after the other in every commit. Raft
// allows the leader to sync its own copy while the followers sync
// theirs (the Raft thesis, §10.2.1), provided that an entry counts as
// committed only once a majority holds it durably, the leader
// included. hashicorp/raft counts the leader's copy when StoreLogs
// returns, so this store makes the leader's commands durable after it
// returns and cube withholds what Raft's commit would let out until the
// leader's copy is on disk:
//
//   - the FSM applies an entry only once it is durable here
//     (waitDurable), and a proposer learns its entry's fate from the
//     FSM, so no write is acknowledged before a majority holds it
//     durably, this node among them;
//   - the commit index sent to followers is at most what is durable
//     here (transport.clamp), so no follower applies an entry that
//     might yet be lost with the leader's page cache.
//
// An entry Raft counted as committed, whose leader crashed before its
// own sync, was applied nowhere and acknowledged to no one: losing it
// loses nothing anyone saw. Followers still sync before they answer,
// and a leader's other entries (its no-ops, barriers, and
// configuration changes, on whose commit Raft itself acts) are synced
// before StoreLogs returns.

var (
	_ raft.LogStore          = (*walStore)(nil)
	_ raft.MonotonicLogStore = (*walStore)(nil)
)

const (
	walDir   = "log"
	baseFile = "base"
)

// segmentSize is the size past which tidwall/wal starts a new segment.
// It keeps its last segment in memory. A variable for tests.
var segmentSize = 16 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// entryFormat is the version of an entry's encoding in walStore.
const entryFormat = 1

// errLogCorrupt: an entry of Raft's log failed its check, not at the
// tail.
var errLogCorrupt = errors.New("cluster: Raft's log is corrupt")

func walOptions() *wal.Options {
	return &wal.Options{
		SegmentSize:      segmentSize,
		SegmentCacheSize: 2,
		AllowEmpty:       true,
		NoSync:           true, // StoreLogs syncs (see durability)
		NoCopy:           true, // decode copies what it keeps
		DirPerms:         0o700,
		FilePerms:        0o600,
	}
}

// openWALStore opens (or creates) the log in dir.
func openWALStore(dir string) (*walStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return nil, err
	}
	s := &walStore{dir: dir, synced: make(chan struct{})}
	b, err := os.ReadFile(filepath.Join(dir, baseFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if s.base, err = strconv.ParseUint(string(b), 10, 64); err != nil {
			return nil, fmt.Errorf("%w: %s holds %q, not an index", errLogCorrupt, filepath.Join(dir, baseFile), b)
		}
	}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

// open opens the wal and drops a torn tail.
func (s *walStore) open() error {
	l, err := wal.Open(filepath.Join(s.dir, walDir), walOptions())
	if errors.Is(err, wal.ErrCorrupt) {
		// tidwall/wal refuses a segment whose last frame is cut short.
		if err = cutTornFrame(filepath.Join(s.dir, walDir)); err == nil {
			l, err = wal.Open(filepath.Join(s.dir, walDir), walOptions())
		}
	}
	if err != nil {
		return fmt.Errorf("cluster: open Raft's log in %s: %w", s.dir, err)
	}
	s.log = l
	// The log's directory and its segment files, by name: tidwall/wal
	// syncs neither.
	err = syncDir(filepath.Join(s.dir, walDir))
	if err == nil {
		err = syncDir(s.dir)
	}
	if err == nil {
		err = s.measureTail()
	}
	if err != nil {
		l.Close()
		return err
	}
	// Frames that are whole but fail their CRC at the tail are an append
	// that was cut short (zeros a crash left, say); anywhere else, such
	// a frame is corruption, which reading it reports. They are cut in
	// one truncation: each rewrites the tail segment.
	first, last := s.bounds()
	keep := last
	for ; keep >= first && keep > 0; keep-- {
		b, err := l.Read(keep)
		if err != nil {
			l.Close()
			return fmt.Errorf("cluster: read the tail of Raft's log in %s: %w", s.dir, err)
		}
		if _, ok := checkEntry(b); ok {
			break
		}
	}
	if keep < last {
		if err = l.TruncateBack(keep); err == nil {
			err = s.truncated()
		}
		if err != nil {
			l.Close()
			return fmt.Errorf("cluster: cut the torn tail of Raft's log in %s: %w", s.dir, err)
		}
	}
	// A leader's entries appended before a crash, and not yet synced,
	// are read back from the page cache: durable from here on.
	if err := syncWAL(l); err != nil {
		l.Close()
		return fmt.Errorf("cluster: sync Raft's log in %s: %w", s.dir, err)
	}
	s.lowerDurable(0)
	if first, last := s.bounds(); last >= first {
		s.setDurable(last + s.base)
	} else {
		s.setDurable(s.base)
	}
	return nil
}

// measureTail sets s.tail from the last segment file.
func (s *walStore) measureTail() error {
	name, err := tailSegment(filepath.Join(s.dir, walDir))
	if err != nil {
		return err
	}
	fi, err := os.Stat(filepath.Join(s.dir, walDir, name))
	if err != nil {
		return err
	}
	s.tail = int(fi.Size())
	return nil
}

// truncated makes a truncation's renames durable and measures the new
// tail.
func (s *walStore) truncated() error {
	if err := syncDir(filepath.Join(s.dir, walDir)); err != nil {
		return err
	}
	return s.measureTail()
}

// appended advances s.tail over frames of the given sizes as
// tidwall/wal's writeBatch does, and reports whether it started a new
// segment: at the start of a batch when the tail is past segmentSize,
// and after a frame that takes it to segmentSize.
func (s *walStore) appended(sizes []int) (cycled bool) {
	if s.tail > segmentSize {
		s.tail, cycled = 0, true
	}
	for _, n := range sizes {
		s.tail += n
		if s.tail >= segmentSize {
			s.tail, cycled = 0, true
		}
	}
	return cycled
}

// bounds returns the wal's first and last index (last < first: empty).
func (s *walStore) bounds() (first, last uint64) {
	first, _ = s.log.FirstIndex()
	last, _ = s.log.LastIndex()
	return first, last
}

// raftBounds returns the log's first and last Raft index, 0 and 0 for
// an empty log.
func (s *walStore) raftBounds() (first, last uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	first, last = s.bounds()
	if last < first {
		return 0, 0
	}
	return first + s.base, last + s.base
}

// FirstIndex implements raft.LogStore: 0 for an empty log.
func (s *walStore) FirstIndex() (uint64, error) {
	first, _ := s.raftBounds()
	return first, nil
}

// LastIndex implements raft.LogStore: 0 for an empty log.
func (s *walStore) LastIndex() (uint64, error) {
	_, last := s.raftBounds()
	return last, nil
}

// GetLog implements raft.LogStore.
func (s *walStore) GetLog(index uint64, out *raft.Log) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if index <= s.base {
		return raft.ErrLogNotFound
	}
	b, err := s.log.Read(index - s.base)
	if errors.Is(err, wal.ErrNotFound) {
		return raft.ErrLogNotFound
	}
	if err != nil {
		return err
	}
	if err := decodeEntry(b, out); err != nil {
		return err
	}
	if out.Index != index {
		return fmt.Errorf("%w: entry %d holds index %d", errLogCorrupt, index, out.Index)
	}
	return nil
}

// StoreLog implements raft.LogStore.
func (s *walStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs implements raft.LogStore: one append and one fsync.
func (s *walStore) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return s.failed
	}
	first, last := s.bounds()
	if next := logs[0].Index; next != last+s.base+1 {
		if last >= first {
			return fmt.Errorf("cluster: Raft's log ends at %d, cannot append %d", last+s.base, next)
		}
		if err := s.reset(next - 1); err != nil {
			return s.fail(err)
		}
	}
	var b wal.Batch
	var buf []byte
	sizes := make([]int, len(logs))
	for i, l := range logs {
		buf = encodeEntry(buf[:0], l)
		b.Write(l.Index-s.base, buf)
		sizes[i] = uvarintLen(uint64(len(buf))) + len(buf)
	}
	if err := s.log.WriteBatch(&b); err != nil {
		return s.fail(err)
	}
	if s.appended(sizes) {
		s.started++
		// A new segment: tidwall/wal synced the one before, not the new
		// one's name.
		if err := syncDir(filepath.Join(s.dir, walDir)); err != nil {
			return s.fail(err)
		}
	}
	if s.leading != nil && allCommands(logs) && s.leading() {
		s.syncLater()
		return nil
	}
	if err := syncWAL(s.log); err != nil {
		return s.fail(err)
	}
	s.setDurable(logs[len(logs)-1].Index)
	return nil
}

// syncWAL syncs the wal's files; a variable for tests.
var syncWAL = (*wal.Log).Sync

func allCommands(logs []*raft.Log) bool {
	for _, l := range logs {
		if l.Type != raft.LogCommand {
			return false
		}
	}
	return true
}

// syncLater has a goroutine sync what was appended (see durability).
// The caller holds mu. One already started has not taken mu yet (it
// clears syncing before it lets go of mu), so it syncs this append too.
func (s *walStore) syncLater() {
	if !s.syncing {
		s.syncing = true
		go s.syncDeferred()
	}
}

// syncDeferred syncs the log, holding mu: appends wait meanwhile, as
// they would for tidwall/wal's own lock.
func (s *walStore) syncDeferred() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncing = false
	if s.failed != nil || s.closed {
		return
	}
	_, last := s.bounds()
	if deferredSyncHook != nil {
		deferredSyncHook()
	}
	if err := syncWAL(s.log); err != nil {
		s.fail(err)
		return
	}
	s.setDurable(last + s.base)
}

// deferredSyncHook, for tests, runs in a deferred sync before it syncs.
var deferredSyncHook func()

// setDurable records that the log is durable through index. The
// caller holds mu.
func (s *walStore) setDurable(index uint64) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if index > s.durable {
		s.durable = index
		s.signal()
	}
}

// lowerDurable caps durable at index, after a truncation or a reset.
// The caller holds mu.
func (s *walStore) lowerDurable(index uint64) {
	s.dmu.Lock()
	s.durable = min(s.durable, index)
	s.dmu.Unlock()
}

// signal wakes waitDurable's callers. The caller holds dmu.
func (s *walStore) signal() {
	close(s.synced)
	s.synced = make(chan struct{})
}

// waitDurable returns once the log is durable through index, or why
// it never will be: the log failed or closed, or stop was closed.
func (s *walStore) waitDurable(index uint64, stop <-chan struct{}) error {
	for {
		s.dmu.Lock()
		durable, ch, broken, closed := s.durable, s.synced, s.broken, s.closed
		s.dmu.Unlock()
		switch {
		case durable >= index:
			return nil
		case broken != nil:
			return broken
		case closed:
			return fmt.Errorf("cluster: Raft's log in %s closed before entry %d was durable", s.dir, index)
		}
		select {
		case <-ch:
		case <-stop:
			return raft.ErrRaftShutdown
		}
	}
}

// Durable returns the Raft index through which the log is on disk.
func (s *walStore) Durable() uint64 {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	return s.durable
}

// fail marks the log failed by err: every later write returns it, and
// so does every wait for an entry not yet durable. The caller holds mu.
func (s *walStore) fail(err error) error {
	s.failed = fmt.Errorf("cluster: Raft's log in %s failed; restart the node, which reopens it as its files hold it: %w", s.dir, err)
	s.dmu.Lock()
	s.broken = s.failed
	s.signal()
	s.dmu.Unlock()
	return s.failed
}

func uvarintLen(x uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], x)
}

// DeleteRange implements raft.LogStore. Raft deletes a head (after a
// snapshot), a tail (a follower's entries the leader overrides), or
// everything (a snapshot installed).
func (s *walStore) DeleteRange(from, to uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return s.failed
	}
	first, last := s.bounds()
	if last < first {
		return nil
	}
	lo, hi := first+s.base, last+s.base
	from, to = max(from, lo), min(to, hi)
	var err error
	switch {
	case from > to:
		return nil
	case from == lo && to == hi:
		err = s.reset(to)
	case from == lo:
		if err = s.log.TruncateFront(to + 1 - s.base); err == nil {
			err = s.truncated()
		}
	case to == hi:
		s.lowerDurable(from - 1)
		if err = s.log.TruncateBack(from - 1 - s.base); err == nil {
			err = s.truncated()
		}
	default:
		return fmt.Errorf("cluster: Raft's log cannot delete %d..%d from the middle of %d..%d", from, to, lo, hi)
	}
	if err != nil {
		return s.fail(err)
	}
	return nil
}

// reset empties the log; the next entry is base+1. The old wal goes
// first: if this stops half way, the log is empty under its old base,
// which the next append resets again.
func (s *walStore) reset(base uint64) error {
	if err := s.log.Close(); err != nil && !errors.Is(err, wal.ErrClosed) {
		return err
	}
	if err := os.RemoveAll(filepath.Join(s.dir, walDir)); err != nil {
		return err
	}
	if resetHook != nil {
		if err := resetHook(); err != nil {
			return err
		}
	}
	if err := writeFileDurable(filepath.Join(s.dir, baseFile), []byte(strconv.FormatUint(base, 10))); err != nil {
		return err
	}
	s.base = base
	return s.open()
}

// resetHook, for tests, runs between reset's two steps: a crash there
// must leave a log that reads right.
var resetHook func() error

// IsMonotonic implements raft.MonotonicLogStore: the log has no gaps,
// so Raft empties it when it installs a snapshot rather than keep a
// trailing part before the gap.
func (s *walStore) IsMonotonic() bool { return true }

// Close closes the log. What a leader appended and had not synced is
// synced first.
func (s *walStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dmu.Lock()
	s.closed = true
	s.signal()
	s.dmu.Unlock()
	var err error
	if s.failed == nil {
		err = syncWAL(s.log)
	}
	if e := s.log.Close(); err == nil {
		err = e
	}
	return err
}

func encodeEntry(dst []byte, l *raft.Log) []byte {
	dst = append(dst, 0, 0, 0, 0, entryFormat)
	dst = binary.AppendUvarint(dst, l.Index)
	dst = binary.AppendUvarint(dst, l.Term)
	dst = append(dst, byte(l.Type))
	var at int64
	if !l.AppendedAt.IsZero() {
		at = l.AppendedAt.UnixNano()
	}
	dst = binary.AppendVarint(dst, at)
	dst = binary.AppendUvarint(dst, uint64(len(l.Extensions)))
	dst = append(dst, l.Extensions...)
	dst = append(dst, l.Data...)
	binary.LittleEndian.PutUint32(dst, crc32.Checksum(dst[4:], castagnoli))
	return dst
}

// checkEntry returns b past its CRC, and whether the CRC holds.
func checkEntry(b []byte) ([]byte, bool) {
	if len(b) < 4 || binary.LittleEndian.Uint32(b) != crc32.Checksum(b[4:], castagnoli) {
		return nil, false
	}
	return b[4:], true
}

func decodeEntry(b []byte, out *raft.Log) error {
	b, ok := checkEntry(b)
	if !ok {
		return fmt.Errorf("%w: an entry fails its checksum", errLogCorrupt)
	}
	if len(b) == 0 || b[0] != entryFormat {
		return fmt.Errorf("%w: an entry of an unknown format (a newer cube wrote it?)", errLogCorrupt)
	}
	b = b[1:]
	var vals [3]uint64
	for i := range vals {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return fmt.Errorf("%w: an entry's header is cut short", errLogCorrupt)
		}
		vals[i], b = v, b[n:]
		if i == 1 {
			if len(b) == 0 {
				return fmt.Errorf("%w: an entry's header is cut short", errLogCorrupt)
			}
			out.Type, b = raft.LogType(b[0]), b[1:]
			at, n := binary.Varint(b)
			if n <= 0 {
				return fmt.Errorf("%w: an entry's header is cut short", errLogCorrupt)
			}
			out.AppendedAt, b = time.Time{}, b[n:]
			if at != 0 {
				out.AppendedAt = time.Unix(0, at)
			}
		}
	}
	if vals[2] > uint64(len(b)) {
		return fmt.Errorf("%w: an entry's extensions run past its end", errLogCorrupt)
	}
	out.Index, out.Term = vals[0], vals[1]
	out.Extensions = cloneOrNil(b[:vals[2]])
	out.Data = cloneOrNil(b[vals[2]:])
	return nil
}

func cloneOrNil(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// cutTornFrame cuts the last segment of the wal in dir at its last
// whole frame. tidwall/wal names segments by their first index, 20
// digits; the last in name order is the tail.
func cutTornFrame(dir string) error {
	tail, err := tailSegment(dir)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, tail)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	off := 0
	for off < len(b) {
		size, n := binary.Uvarint(b[off:])
		if n <= 0 || size > uint64(len(b)-off-n) {
			break
		}
		off += n + int(size)
	}
	if off == len(b) {
		return fmt.Errorf("%w: segment %s reads whole", errLogCorrupt, path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(int64(off)); err != nil {
		return err
	}
	return f.Sync()
}

// tailSegment names the last segment of the wal in dir.
func tailSegment(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var tail string
	for _, e := range ents {
		if n := e.Name(); len(n) == 20 && !e.IsDir() && n > tail {
			tail = n
		}
	}
	if tail == "" {
		return "", fmt.Errorf("%w: %s holds no segment", errLogCorrupt, dir)
	}
	return tail, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// writeFileDurable replaces path with data: a temporary file, synced,
// renamed over it, and the directory synced.
func writeFileDurable(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// migrateLogs moves the entries a build before walStore kept in bbolt
// (raft.db, which still holds Raft's term and vote) into logs. Copied
// first, each batch synced, then deleted from bbolt: a node stopped
// half way copies the rest when it starts again, or deletes what
// bbolt still holds.
func migrateLogs(old raft.LogStore, logs *walStore) error {
	first, err := old.FirstIndex()
	if err != nil {
		return err
	}
	last, err := old.LastIndex()
	if err != nil || last == 0 {
		return err
	}
	have, err := logs.LastIndex()
	if err != nil {
		return err
	}
	if have != 0 && have+1 < first {
		return fmt.Errorf("cluster: Raft's log ends at %d and raft.db's log starts at %d: remove one of them", have, first)
	}
	const batch = 256
	for i := max(first, have+1); i <= last; {
		var ls []*raft.Log
		for ; i <= last && len(ls) < batch; i++ {
			l := new(raft.Log)
			if err := old.GetLog(i, l); err != nil {
				return fmt.Errorf("cluster: read entry %d of raft.db's log: %w", i, err)
			}
			ls = append(ls, l)
		}
		if err := logs.StoreLogs(ls); err != nil {
			return fmt.Errorf("cluster: move Raft's log out of raft.db: %w", err)
		}
	}
	return old.DeleteRange(first, last)
}
