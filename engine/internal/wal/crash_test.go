package wal_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/internal/wal"
	"github.com/cubelinux/cube/engine/vfs"
)

// model tracks what the test appended and what the log acknowledged.
type model struct {
	mu       sync.Mutex
	payloads map[uint64][]byte // every LSN Append handed out
	acked    uint64            // highest LSN whose WaitDurable returned nil
	torn     int               // recoveries that cut a torn tail
	lost     uint64            // appended records that did not survive
}

func (m *model) add(lsn uint64, p []byte) {
	m.mu.Lock()
	m.payloads[lsn] = p
	m.mu.Unlock()
}

func (m *model) ack(lsn uint64) {
	m.mu.Lock()
	m.acked = max(m.acked, lsn)
	m.mu.Unlock()
}

// recover opens the log and checks that it replays a gap-free prefix that
// holds every acknowledged record, with the payloads appended. It forgets
// appended records that did not survive, as their LSNs will be reused.
func (m *model) recover(t *testing.T, opts wal.Options) *wal.Log {
	t.Helper()
	next := uint64(1)
	l, rep, err := wal.Open(opts, 0, func(lsn uint64, p []byte) error {
		if lsn != next {
			return fmt.Errorf("replayed lsn %d, want %d", lsn, next)
		}
		next++
		m.mu.Lock()
		want, ok := m.payloads[lsn]
		m.mu.Unlock()
		if !ok || string(want) != string(p) {
			return fmt.Errorf("lsn %d: replayed %q, appended %q (known %v)", lsn, p, want, ok)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("recovery: %v", err)
	}
	last := next - 1
	if rep.LastLSN != last {
		t.Fatalf("report LastLSN %d, replayed up to %d", rep.LastLSN, last)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if last < m.acked {
		t.Fatalf("acknowledged record %d lost: log recovered up to %d (report %+v)", m.acked, last, rep)
	}
	if rep.TornSegment != "" {
		m.torn++
	}
	for lsn := range m.payloads {
		if lsn > last {
			delete(m.payloads, lsn)
			m.lost++
		}
	}
	m.acked = last
	return l
}

// TestCrashKeepsAcknowledged runs writers against a MemFS and pulls the
// plug at random moments, several times per log: after each crash the log
// must recover a prefix of LSNs, without gaps, holding every record whose
// WaitDurable returned (SyncAlways), or that Sync covered.
//
// Deliberate breaks this test was seen to catch (each made, run, failed,
// restored):
//   - f.Sync() dropped from the flusher (Log.syncFile): "acknowledged
//     record N lost";
//   - WaitDurable returning at once in SyncAlways (the wait before
//     acknowledging dropped): "acknowledged record N lost".
func TestCrashKeepsAcknowledged(t *testing.T) {
	rng := seededRand(t)
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	var torn, recs int
	var lost uint64
	defer func() { t.Logf("%d records survived, %d unacknowledged lost, %d torn tails cut", recs, lost, torn) }()
	for round := 0; round < rounds; round++ {
		mem := vfs.NewMem()
		// A disk takes time to sync: crashes then land between a write and
		// its fdatasync, where torn and partly kept writes happen.
		slow := vfs.InjectorFunc(func(op vfs.Op) error {
			if op.Kind == vfs.OpSync {
				time.Sleep(time.Duration(50+rand.IntN(300)) * time.Microsecond)
			}
			return nil
		})
		fsys := vfs.NewFaulty(mem, slow)
		var cipher *crypt.Cipher
		if rng.IntN(4) == 0 {
			cipher = key(7)
		}
		mode := []wal.SyncMode{wal.SyncAlways, wal.SyncAlways, wal.SyncInterval, wal.SyncNone}[rng.IntN(4)]
		opts := wal.Options{
			FS: fsys, Dir: "db/wal", Sync: mode, Cipher: cipher,
			SegmentSize:   int64(256 + rng.IntN(4096)),
			NoPreallocate: rng.IntN(2) == 0,
			SyncInterval:  time.Millisecond,
			BufferSize:    1 + rng.IntN(2000),
		}
		m := &model{payloads: map[uint64][]byte{}}
		for cycle := 0; cycle < 4; cycle++ {
			l := m.recover(t, opts)
			crashWhileWriting(t, rng, mem, l, m, mode)
		}
		l := m.recover(t, opts)
		closeLog(t, l)
		torn, lost, recs = torn+m.torn, lost+m.lost, recs+len(m.payloads)
	}
}

func crashWhileWriting(t *testing.T, rng *rand.Rand, fsys *vfs.MemFS, l *wal.Log, m *model, mode wal.SyncMode) {
	writers := 1 + rng.IntN(6)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < writers; w++ {
		wg.Add(1)
		seed := rng.Uint64()
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 1))
			ctx := context.Background()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := []byte(fmt.Sprintf("w%d-%d-%s", seed%1000, i, strings.Repeat("x", r.IntN(300))))
				lsn, err := l.Append(p)
				if err != nil {
					return
				}
				m.add(lsn, p)
				switch {
				case mode == wal.SyncAlways:
					if l.WaitDurable(ctx, lsn) != nil {
						return
					}
					m.ack(lsn)
				case r.IntN(20) == 0:
					if l.Sync(ctx) != nil {
						return
					}
					m.ack(lsn)
				}
			}
		}()
	}
	time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
	fsys.Crash(rng)
	close(stop)
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Close(ctx); err == nil && l.Written() > 0 {
		// Closing after the crash must not claim success for writes the
		// crash killed, unless there was nothing left to write.
		if l.Synced() < l.Written() {
			t.Errorf("Close after crash returned nil with synced %d < written %d", l.Synced(), l.Written())
		}
	}
}

func TestFsyncEIOIsFatal(t *testing.T) {
	rng := seededRand(t)
	mem := vfs.NewMem()
	walSyncs := func(op vfs.Op) bool { return op.Kind == vfs.OpSync && strings.HasSuffix(op.Path, ".wal") }
	fsys := vfs.NewFaulty(mem, vfs.Filter(walSyncs, vfs.FailAfter(vfs.OpSync, 5, syscall.EIO)))
	opts := wal.Options{FS: fsys, Dir: "w", SegmentSize: 1 << 20}
	m := &model{payloads: map[uint64][]byte{}}
	l := m.recover(t, opts)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				p := []byte(fmt.Sprintf("w%d-%d", w, i))
				lsn, err := l.Append(p)
				if err != nil {
					errs <- err
					return
				}
				m.add(lsn, p)
				if err := l.WaitDurable(context.Background(), lsn); err != nil {
					errs <- err
					return
				}
				m.ack(lsn)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, wal.ErrFailed) || !errors.Is(err, syscall.EIO) {
			t.Errorf("writer error %v, want ErrFailed wrapping EIO", err)
		}
	}
	if err := l.Err(); !errors.Is(err, wal.ErrFailed) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("Err() = %v", err)
	}
	if _, err := l.Append([]byte("late")); !errors.Is(err, wal.ErrFailed) {
		t.Fatalf("Append after failure: %v", err)
	}
	if err := l.Sync(context.Background()); !errors.Is(err, wal.ErrFailed) {
		t.Fatalf("Sync after failure: %v", err)
	}
	if err := l.Close(context.Background()); !errors.Is(err, wal.ErrFailed) {
		t.Fatalf("Close after failure: %v", err)
	}
	if m.acked == 0 {
		t.Fatal("nothing acknowledged before the injected EIO")
	}
	mem.Crash(rng)
	opts.FS = mem
	l = m.recover(t, opts)
	closeLog(t, l)
}

func TestWriteFaultsAreFatal(t *testing.T) {
	for _, tc := range []struct {
		name string
		inj  func(*rand.Rand) vfs.Injector
		want error
	}{
		{"enospc", func(*rand.Rand) vfs.Injector { return vfs.ENOSPCAfterBytes(20000) }, syscall.ENOSPC},
		{"short-write", func(r *rand.Rand) vfs.Injector { return vfs.ShortWrite(0.02, r) }, io.ErrShortWrite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := seededRand(t)
			mem := vfs.NewMem()
			var armed atomic.Bool // faults only once the log is open
			inj := vfs.Filter(func(vfs.Op) bool { return armed.Load() }, tc.inj(rng))
			opts := wal.Options{FS: vfs.NewFaulty(mem, inj), Dir: "w", SegmentSize: 2048, NoPreallocate: true}
			m := &model{payloads: map[uint64][]byte{}}
			l := m.recover(t, opts)
			armed.Store(true)
			var err error
			for i := 0; i < 100000; i++ {
				p := []byte(fmt.Sprintf("record %d %s", i, strings.Repeat("y", rng.IntN(100))))
				var lsn uint64
				if lsn, err = l.Append(p); err != nil {
					break
				}
				m.add(lsn, p)
				if err = l.WaitDurable(context.Background(), lsn); err != nil {
					break
				}
				m.ack(lsn)
			}
			if !errors.Is(err, wal.ErrFailed) || !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want ErrFailed wrapping %v", err, tc.want)
			}
			l.Close(context.Background())
			mem.Crash(rng)
			opts.FS = mem
			l = m.recover(t, opts)
			closeLog(t, l)
		})
	}
}
