package engine_test

import (
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// openStore opens the store at dir, as engine.Open does, and when the test
// ends closes it and runs engine.Verify on the directory it leaves,
// failing the test on any finding: every test that writes a store also
// checks that what it wrote reads back whole, as bbolt's test DB checks
// itself on Close. A refused Open registers nothing.
//
// Each store is verified once per test, after every store the test
// opened on it is closed (cleanups run last-registered first, and the
// check is registered by the first Open), with the key of the last Open.
// A test that damages a store on purpose passes noVerify; one whose
// store's file system dies with its process (incarnation, a sync gate)
// passes verifyOn with the file system underneath.
//
// Seen catching: the checkpoint writer dropping its second record while
// counting it (a footer that does not match its file) failed 18 top-level
// tests, 10 of them only through this check; without it 8 failed, those
// that reopen after a checkpoint.
func openStore(t testing.TB, dir string, o engine.Options, opts ...storeOpt) (*engine.DB, error) {
	t.Helper()
	db, err := engine.Open(dir, o)
	if err != nil {
		return nil, err
	}
	s := storeSetup{fsys: o.FS}
	for _, opt := range opts {
		opt(&s)
	}
	c := storeCheckFor(t, s.fsys, dir)
	c.key = o.EncryptionKey
	if s.noVerify != "" {
		c.skip = s.noVerify
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil && c.skip == "" {
			t.Errorf("close %s when the test ended: %v", dir, err)
		}
	})
	return db, nil
}

// mustOpen is openStore failing the test when Open fails.
func mustOpen(t testing.TB, dir string, o engine.Options, opts ...storeOpt) *engine.DB {
	t.Helper()
	db, err := openStore(t, dir, o, opts...)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return db
}

// A storeOpt changes the check openStore registers.
type storeOpt func(*storeSetup)

type storeSetup struct {
	fsys     vfs.FS
	noVerify string
}

// noVerify leaves the store unchecked when the test ends: for a test that
// damages it on purpose and leaves it so. why says what damage.
func noVerify(why string) storeOpt {
	return func(s *storeSetup) { s.noVerify = why }
}

// verifyOn makes the check read the store through fsys: the MemFS under
// a wrapper that fails every operation once its incarnation is dead.
func verifyOn(fsys vfs.FS) storeOpt {
	return func(s *storeSetup) { s.fsys = fsys }
}

// storeCheck is the end-of-test check of one store of one test.
type storeCheck struct {
	key  []byte // as the last Open gave it
	skip string // why it is not checked, or ""
}

type storeKey struct {
	t    testing.TB
	fsys vfs.FS // nil: the operating system's
	dir  string
}

var storeChecks sync.Map // storeKey -> *storeCheck

// storeCheckFor returns the check of fsys:dir in t, registering it (and
// the Verify that runs it when t ends) the first time.
func storeCheckFor(t testing.TB, fsys vfs.FS, dir string) *storeCheck {
	k := storeKey{t, fsys, dir}
	v, loaded := storeChecks.LoadOrStore(k, &storeCheck{})
	c := v.(*storeCheck)
	if loaded {
		return c
	}
	t.Cleanup(func() {
		storeChecks.Delete(k)
		if c.skip != "" || t.Failed() {
			return // a failed test's store may be half-written; its failure says why
		}
		if _, err := engine.Verify(dir, engine.VerifyOptions{FS: fsys, EncryptionKey: c.key}); err != nil {
			t.Errorf("engine.Verify(%s) when the test ended: %v", dir, err)
		}
	})
	return c
}

// incarnation wraps mem for one life of a store. After kill, every
// operation it tries fails, as a dead process does nothing more; call kill
// before crashing mem. syncDelay makes each sync take a moment, as on a
// disk, so that a write acknowledged before its sync is caught by a crash.
func incarnation(mem *vfs.MemFS, syncDelay time.Duration) (fs vfs.FS, kill func()) {
	dead := new(atomic.Bool)
	fs = vfs.NewFaulty(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if dead.Load() {
			return syscall.EIO
		}
		if syncDelay > 0 && op.Kind == vfs.OpSync {
			time.Sleep(syncDelay)
		}
		return nil
	}))
	return fs, func() { dead.Store(true) }
}
