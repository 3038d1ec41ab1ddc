//go:build unix

package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/tidwall/wal"
	"golang.org/x/sys/unix"
)

// entry is the Raft entry at index i in term t, every field set.
func entry(i, t uint64) *raft.Log {
	l := &raft.Log{Index: i, Term: t, Type: raft.LogCommand,
		Data:       []byte(fmt.Sprintf("data of %d in term %d", i, t)),
		AppendedAt: time.Unix(1700000000, int64(i)).UTC()}
	if i%3 == 0 {
		l.Extensions = []byte(batchExt)
	}
	if i%5 == 0 {
		l.Type = raft.LogConfiguration
	}
	return l
}

func entries(from, to, term uint64) []*raft.Log {
	var ls []*raft.Log
	for i := from; i <= to; i++ {
		ls = append(ls, entry(i, term))
	}
	return ls
}

func openTestStore(t *testing.T, dir string) *walStore {
	t.Helper()
	s, err := openWALStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// wantLog checks that s holds exactly first..last, each entry as
// want(index) gives it.
func wantLog(t *testing.T, s raft.LogStore, first, last uint64, want func(i uint64) *raft.Log) {
	t.Helper()
	f, err1 := s.FirstIndex()
	l, err2 := s.LastIndex()
	if err1 != nil || err2 != nil || f != first || l != last {
		t.Fatalf("log is %d..%d (%v, %v), want %d..%d", f, l, err1, err2, first, last)
	}
	for i := first; i <= last && i > 0; i++ {
		var got raft.Log
		if err := s.GetLog(i, &got); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		w := want(i)
		if got.Index != w.Index || got.Term != w.Term || got.Type != w.Type || !bytes.Equal(got.Data, w.Data) ||
			!bytes.Equal(got.Extensions, w.Extensions) || !got.AppendedAt.Equal(w.AppendedAt) {
			t.Fatalf("entry %d is term %d type %v data %.40q ext %q at %v, want term %d type %v data %.40q ext %q at %v",
				i, got.Term, got.Type, got.Data, got.Extensions, got.AppendedAt, w.Term, w.Type, w.Data, w.Extensions, w.AppendedAt)
		}
	}
	var got raft.Log
	if err := s.GetLog(last+1, &got); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("entry %d past the end: %v, want ErrLogNotFound", last+1, err)
	}
	if first > 1 {
		if err := s.GetLog(first-1, &got); !errors.Is(err, raft.ErrLogNotFound) {
			t.Fatalf("entry %d before the start: %v, want ErrLogNotFound", first-1, err)
		}
	}
}

// TestWALStoreKeepsEntries: entries stored come back whole, in this
// process and after a reopen, and Raft's three kinds of deletion (the
// head after a snapshot, a follower's tail the leader overrides, and
// everything when a snapshot is installed, then an append after the
// gap) leave the log Raft expects, also after a reopen. Breaks seen
// failing: reset not writing the new base (after the reopen the log
// starts at 1 again); DeleteRange of a tail truncating one entry too
// many.
func TestWALStoreKeepsEntries(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir)
	wantLog(t, s, 0, 0, nil)
	if err := s.StoreLogs(entries(1, 100, 1)); err != nil {
		t.Fatal(err)
	}
	for i := uint64(101); i <= 120; i++ {
		if err := s.StoreLog(entry(i, 1)); err != nil {
			t.Fatal(err)
		}
	}
	inTerm := func(term func(i uint64) uint64) func(uint64) *raft.Log {
		return func(i uint64) *raft.Log { return entry(i, term(i)) }
	}
	one := inTerm(func(uint64) uint64 { return 1 })
	wantLog(t, s, 1, 120, one)

	// A snapshot at 50: the head goes.
	if err := s.DeleteRange(1, 50); err != nil {
		t.Fatal(err)
	}
	wantLog(t, s, 51, 120, one)
	// The leader overrides 101..120 with its own term.
	if err := s.DeleteRange(101, 120); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLogs(entries(101, 110, 2)); err != nil {
		t.Fatal(err)
	}
	twoAfter100 := inTerm(func(i uint64) uint64 { return 1 + min(1, i/101) })
	wantLog(t, s, 51, 110, twoAfter100)
	if err := s.StoreLogs(entries(200, 201, 2)); err == nil {
		t.Fatal("an append after a gap in a log that is not empty was taken")
	}
	if err := s.DeleteRange(60, 70); err == nil {
		t.Fatal("a deletion from the middle was taken")
	}
	s.Close()
	s = openTestStore(t, dir)
	wantLog(t, s, 51, 110, twoAfter100)

	// A snapshot at 1000 installed: everything goes, then the log
	// goes on after the gap.
	if err := s.DeleteRange(51, 110); err != nil {
		t.Fatal(err)
	}
	wantLog(t, s, 0, 0, nil)
	if err := s.StoreLogs(entries(1001, 1010, 3)); err != nil {
		t.Fatal(err)
	}
	three := inTerm(func(uint64) uint64 { return 3 })
	wantLog(t, s, 1001, 1010, three)
	s.Close()
	s = openTestStore(t, dir)
	defer s.Close()
	wantLog(t, s, 1001, 1010, three)
	if err := s.StoreLogs(entries(1011, 1011, 3)); err != nil {
		t.Fatal(err)
	}
	wantLog(t, s, 1001, 1011, three)
}

// TestWALStoreResetStopped: a reset (Raft emptying the log, then an
// append after a gap) stopped between its two steps, as by a crash,
// leaves a log that reads right once reopened: empty, and the append
// Raft sends again is taken. Break seen failing: reset writing the new
// base before it removes the old wal (the old entries came back
// numbered from the new base, and read as corrupt).
func TestWALStoreResetStopped(t *testing.T) {
	defer func() { resetHook = nil }()
	dir := t.TempDir()
	s := openTestStore(t, dir)
	if err := s.StoreLogs(entries(1, 20, 1)); err != nil {
		t.Fatal(err)
	}
	resetHook = func() error { return errors.New("stopped here") }
	if err := s.DeleteRange(1, 20); err == nil {
		t.Fatal("a reset stopped half way succeeded")
	}
	resetHook = nil
	s.Close()
	s = openTestStore(t, dir)
	defer func() { s.Close() }()
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	for i := first; i <= last && i > 0; i++ {
		var l raft.Log
		if err := s.GetLog(i, &l); err != nil || l.Index != i {
			t.Fatalf("after a stopped reset the log is %d..%d, and entry %d reads as %d, %v", first, last, i, l.Index, err)
		}
	}
	if err := s.StoreLogs(entries(501, 510, 2)); err != nil {
		t.Fatal(err)
	}
	wantLog(t, s, 501, 510, func(i uint64) *raft.Log { return entry(i, 2) })
}

// tailFile is the path of the store's last segment.
func tailFile(t *testing.T, dir string) string {
	t.Helper()
	name, err := tailSegment(filepath.Join(dir, walDir))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, walDir, name)
}

func appendBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestWALStoreCutsTornTail: an append cut short by a crash (never
// acknowledged: StoreLogs had not returned) is dropped as the log
// opens, whether its frame is cut short or whole with bytes that fail
// the entry's CRC (zeros a crash left, or part of a frame); the entries
// before it stay, and the log appends after them. Breaks seen failing:
// open without cutTornFrame (tidwall/wal refuses to open); open
// without the CRC check of the tail (the zeros came back as entries).
func TestWALStoreCutsTornTail(t *testing.T) {
	cases := map[string][]byte{
		"frame cut short": {100, 'x', 'y'},
		"zeros":           make([]byte, 7),
		"bad checksum":    append([]byte{9}, encodeEntry(nil, entry(11, 1))[:9]...),
	}
	for name, torn := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTestStore(t, dir)
			if err := s.StoreLogs(entries(1, 10, 1)); err != nil {
				t.Fatal(err)
			}
			s.Close()
			appendBytes(t, tailFile(t, dir), torn)
			s = openTestStore(t, dir)
			defer s.Close()
			wantLog(t, s, 1, 10, func(i uint64) *raft.Log { return entry(i, 1) })
			if err := s.StoreLogs(entries(11, 12, 1)); err != nil {
				t.Fatal(err)
			}
			wantLog(t, s, 1, 12, func(i uint64) *raft.Log { return entry(i, 1) })
		})
	}
}

// TestWALStoreRefusesCorruption: an entry that fails its CRC before the
// tail is corruption, not a torn append: reading it is an error, not
// another entry's bytes. Break seen failing: decodeEntry without the
// CRC check (the flipped byte came back as data).
func TestWALStoreRefusesCorruption(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir)
	if err := s.StoreLogs(entries(1, 10, 1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	path := tailFile(t, dir)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(b, []byte("data of 4 "))
	b[at] ^= 0x20
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s = openTestStore(t, dir)
	defer s.Close()
	var l raft.Log
	if err := s.GetLog(4, &l); !errors.Is(err, errLogCorrupt) {
		t.Fatalf("corrupt entry 4 read as %q, %v", l.Data, err)
	}
	if err := s.GetLog(5, &l); err != nil {
		t.Fatal(err)
	}
}

// TestWALStoreSegments: the store knows when an append started a new
// segment file, whose name it then syncs in the directory: each file
// tidwall/wal made must be one the store counted, through appends,
// truncations and a reopen. Breaks seen failing: appended not setting
// the tail to zero at a new segment; truncated not measuring the new
// tail; appended never reporting a new segment.
func TestWALStoreSegments(t *testing.T) {
	defer func(n int) { segmentSize = n }(segmentSize)
	segmentSize = 4096
	dir := t.TempDir()
	s := openTestStore(t, dir)
	defer func() { s.Close() }()
	files := func() int {
		ents, err := os.ReadDir(filepath.Join(dir, walDir))
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	had := files() // before the store counted any
	store := func(ls []*raft.Log) {
		t.Helper()
		if err := s.StoreLogs(ls); err != nil {
			t.Fatal(err)
		}
		if got := files(); got != had+s.started {
			t.Fatalf("after appending %d..%d: %d segment files, the store counted %d new ones after %d", ls[0].Index, ls[len(ls)-1].Index, got, s.started, had)
		}
	}
	next := uint64(1)
	for round := range 40 {
		n := uint64(1 + round%7*9)
		store(entries(next, next+n-1, 1))
		next += n
	}
	if s.started < 5 {
		t.Fatalf("%d segments started: the test needs more", s.started)
	}
	// A tail truncation rewrites the tail segment: measure it again.
	if err := s.DeleteRange(next-30, next-1); err != nil {
		t.Fatal(err)
	}
	next -= 30
	had = files() - s.started
	for range 10 {
		store(entries(next, next+20, 2))
		next += 21
	}
	s.Close()
	s = openTestStore(t, dir)
	had = files()
	for range 10 {
		store(entries(next, next+20, 3))
		next += 21
	}
}

// TestMigrateLogs: a node whose Raft log is in raft.db (a build before
// walStore) starts with it moved over, entry for entry, and raft.db's
// log emptied; a node stopped half way through the move finishes it.
// Breaks seen failing: migrateLogs copying from raft.db's first entry
// again after a stop half way (the append does not follow the log);
// deleting before copying.
func TestMigrateLogs(t *testing.T) {
	for _, half := range []bool{false, true} {
		t.Run(fmt.Sprintf("stopped-half-way=%v", half), func(t *testing.T) {
			dir := t.TempDir()
			old, err := raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer old.Close()
			if err := old.StoreLogs(entries(1, 1000, 4)); err != nil {
				t.Fatal(err)
			}
			if err := old.DeleteRange(1, 200); err != nil { // compacted once
				t.Fatal(err)
			}
			if err := old.SetUint64([]byte("CurrentTerm"), 4); err != nil {
				t.Fatal(err)
			}
			s := openTestStore(t, filepath.Join(dir, "raft-log"))
			defer func() { s.Close() }()
			if half {
				if err := s.StoreLogs(entries(201, 640, 4)); err != nil {
					t.Fatal(err)
				}
			}
			if err := migrateLogs(old, s); err != nil {
				t.Fatal(err)
			}
			four := func(i uint64) *raft.Log { return entry(i, 4) }
			wantLog(t, s, 201, 1000, four)
			wantLog(t, old, 0, 0, nil)
			if term, err := old.GetUint64([]byte("CurrentTerm")); err != nil || term != 4 {
				t.Fatalf("term after the move: %d, %v", term, err)
			}
			// Starting again moves nothing.
			if err := migrateLogs(old, s); err != nil {
				t.Fatal(err)
			}
			s.Close()
			s = openTestStore(t, filepath.Join(dir, "raft-log"))
			wantLog(t, s, 201, 1000, four)
		})
	}
}

// FuzzDecodeEntry: any bytes a log file holds decode to an entry or an
// error, never a panic, and what encodeEntry wrote decodes to itself.
func FuzzDecodeEntry(f *testing.F) {
	f.Add(encodeEntry(nil, entry(3, 7)))
	f.Add(encodeEntry(nil, &raft.Log{}))
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var l raft.Log
		if err := decodeEntry(b, &l); err != nil {
			if !errors.Is(err, errLogCorrupt) {
				t.Fatalf("error %v is not errLogCorrupt", err)
			}
			return
		}
		again := encodeEntry(nil, &l)
		var m raft.Log
		if err := decodeEntry(again, &m); err != nil {
			t.Fatal(err)
		}
		if m.Index != l.Index || m.Term != l.Term || m.Type != l.Type || !bytes.Equal(m.Data, l.Data) ||
			!bytes.Equal(m.Extensions, l.Extensions) || !m.AppendedAt.Equal(l.AppendedAt) {
			t.Fatalf("%+v re-encoded came back as %+v", l, m)
		}
	})
}

// TestWALStoreSyncsEachAppend: StoreLogs returns only after an fsync.
// Raft counts an entry as held once StoreLogs returns, and a process
// kill keeps what it wrote in the page cache, so no kill test can see
// a missing sync: this runs appends in a child process under strace
// and counts the syncs. Break seen failing: walOptions with NoSync
// (0 syncs for 20 appends).
func TestWALStoreSyncsEachAppend(t *testing.T) {
	const appends = 20
	if dir := os.Getenv("CUBE_WALSTORE_CHILD"); dir != "" {
		s, err := openWALStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		for i := uint64(1); i <= appends; i++ {
			if err := s.StoreLogs(entries(i, i, 1)); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("strace is missing (.ci/install.d/strace.sh installs it)")
		}
		t.Skip("needs strace")
	}
	out := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, "-f", "-qq", "-e", "trace=fsync,fdatasync,sync_file_range", "-e", "signal=none", "-o", out,
		os.Args[0], "-test.run", "^TestWALStoreSyncsEachAppend$", "-test.count", "1")
	cmd.Env = append(os.Environ(), "CUBE_WALSTORE_CHILD="+t.TempDir())
	if b, err := cmd.CombinedOutput(); err != nil {
		if bytes.Contains(b, []byte("PTRACE")) || bytes.Contains(b, []byte("ptrace")) {
			t.Skipf("strace cannot trace here: %s", b)
		}
		t.Fatalf("child: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if syncs := bytes.Count(b, []byte("sync(")); syncs < appends {
		t.Fatalf("%d appends made %d syncs:\n%s", appends, syncs, b)
	}
}

// TestWALStoreFailedWrite: after a write the disk refused, an append
// the store takes is what it reads back, now and after a restart, and
// the log reopens as its files hold it. The store refuses every write
// after a failed one until the node restarts, since tidwall/wal keeps
// in memory an append it failed to write. The disk is made to refuse by
// a file size limit (RLIMIT_FSIZE), in a child process, as it applies
// to the whole process. Break seen failing: StoreLogs without the
// failed mark (the next append was taken, and read back as the refused
// entry's data; after the restart it was gone).
func TestWALStoreFailedWrite(t *testing.T) {
	if dir := os.Getenv("CUBE_WALSTORE_FSIZE"); dir != "" {
		signal.Ignore(syscall.SIGXFSZ)
		s := openTestStore(t, dir)
		if err := s.StoreLogs(entries(1, 10, 1)); err != nil {
			t.Fatal(err)
		}
		big := entry(11, 1)
		big.Data = bytes.Repeat([]byte("refused "), 512)
		var lim unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatal(err)
		}
		was := lim.Cur
		lim.Cur = uint64(s.tail + 100)
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
			t.Skipf("cannot limit file sizes: %v", err)
		}
		if err := s.StoreLogs([]*raft.Log{big}); err == nil {
			t.Fatal("an append past the file size limit was taken")
		}
		lim.Cur = was
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatal(err)
		}
		one := func(i uint64) *raft.Log { return entry(i, 1) }
		last := uint64(10)
		if err := s.StoreLogs(entries(11, 11, 1)); err == nil {
			last = 11 // taken: it must read back as itself
		}
		wantLog(t, s, 1, last, one)
		s.Close()
		s = openTestStore(t, dir)
		defer s.Close()
		wantLog(t, s, 1, last, one)
		if err := s.StoreLogs(entries(last+1, last+2, 1)); err != nil {
			t.Fatal(err)
		}
		wantLog(t, s, 1, last+2, one)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestWALStoreFailedWrite$", "-test.count", "1", "-test.v")
	cmd.Env = append(os.Environ(), "CUBE_WALSTORE_FSIZE="+t.TempDir())
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, b)
	}
	if bytes.Contains(b, []byte("--- SKIP")) {
		t.Skipf("child skipped:\n%s", b)
	}
}

// TestWALStoreLeaderSyncsAfter: a leader's append of commands returns
// before its sync (see durability), and waitDurable returns only once a
// sync begun after it has finished; a follower's append, and a
// leader's append of anything but commands, is durable when StoreLogs
// returns; a truncation lowers what is durable; a failed deferred sync
// fails the waits and every later append. Breaks seen failing:
// syncDeferred marking the log durable without syncing ("durable
// through 6 with no sync since the append"); StoreLogs marking a
// deferred append durable at once ("durable through 6 while its sync
// was held"); a leader's configuration change deferred too ("durable
// through 6 after the configuration change at 7 returned"); a failed
// sync ignored ("waitDurable(6) after a failed sync: <nil>").
func TestWALStoreLeaderSyncsAfter(t *testing.T) {
	var syncs atomic.Int32
	syncWAL = func(l *wal.Log) error { syncs.Add(1); return l.Sync() }
	defer func() { syncWAL = (*wal.Log).Sync }()
	s := openTestStore(t, t.TempDir())
	t.Cleanup(func() { s.Close() })
	held, release := holdDeferredSyncs(t)
	leading := false
	s.leading = func() bool { return leading }
	cmds := func(from, to uint64) []*raft.Log {
		ls := entries(from, to, 1)
		for _, l := range ls {
			l.Type = raft.LogCommand
		}
		return ls
	}

	if err := s.StoreLogs(cmds(1, 3)); err != nil {
		t.Fatal(err)
	}
	if d := s.Durable(); d != 3 {
		t.Fatalf("a follower's append returned durable through %d, not 3", d)
	}

	leading = true
	before := syncs.Load()
	if err := s.StoreLogs(cmds(4, 6)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(5 * time.Second):
		t.Fatal("no deferred sync began in 5s")
	}
	if d := s.Durable(); d != 3 {
		t.Fatalf("durable through %d while its sync was held", d)
	}
	waited := make(chan error, 1)
	go func() { waited <- s.waitDurable(6, nil) }()
	select {
	case err := <-waited:
		t.Fatalf("waitDurable(6) returned (%v) while the sync was held", err)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waitDurable(6) did not return in 5s after the sync went on")
	}
	if syncs.Load() == before {
		t.Fatal("durable through 6 with no sync since the append")
	}

	// Deferred syncs are held again: a configuration change must not
	// need one.
	_, release = holdDeferredSyncs(t)
	cfg := entry(7, 1)
	cfg.Type = raft.LogConfiguration
	if err := s.StoreLogs([]*raft.Log{cfg}); err != nil {
		t.Fatal(err)
	}
	if d := s.Durable(); d != 7 {
		t.Fatalf("durable through %d after the configuration change at 7 returned", d)
	}
	release()
	if err := s.DeleteRange(6, 7); err != nil {
		t.Fatal(err)
	}
	if d := s.Durable(); d != 5 {
		t.Fatalf("durable through %d after 6..7 were deleted", d)
	}

	syncWAL = func(*wal.Log) error { return errors.New("the disk is gone") }
	if err := s.StoreLogs(cmds(6, 6)); err != nil {
		t.Fatal(err)
	}
	if err := s.waitDurable(6, nil); err == nil || !strings.Contains(err.Error(), "the disk is gone") {
		t.Fatalf("waitDurable(6) after a failed sync: %v", err)
	}
	if err := s.StoreLogs(cmds(7, 7)); err == nil {
		t.Fatal("an append after a failed sync was taken")
	}
}

// holdDeferredSyncs makes every deferred sync of a walStore wait before
// it syncs, until release; held has a value once one waits. The wait
// holds the store's lock, which closing it takes: the test's cleanup
// releases them, so register a store's Close before calling this.
func holdDeferredSyncs(t *testing.T) (held <-chan struct{}, release func()) {
	h, hold := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(hold) }) }
	deferredSyncHook = func() {
		select {
		case h <- struct{}{}:
		default:
		}
		<-hold
	}
	t.Cleanup(func() { release(); deferredSyncHook = nil })
	return h, release
}
