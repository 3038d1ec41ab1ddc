package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cubelinux/cube/engine/curve"
	"github.com/cubelinux/cube/engine/internal/base"
	"github.com/cubelinux/cube/engine/internal/checkpoint"
	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/internal/wal"
	"github.com/cubelinux/cube/engine/vfs"
)

// DB is an open data directory. It is safe for concurrent use.
type DB struct {
	dir    string
	opts   Options
	fs     vfs.FS
	lock   io.Closer
	cipher *crypt.Cipher
	log    *wal.Log

	mu     sync.RWMutex // guards the namespace registry
	byName map[string]*Namespace
	byID   map[uint64]*Namespace
	nextID uint64
	nsLSN  uint64 // LSN of the last namespace create or drop
	drops  []drop // namespaces dropped since the last checkpoint
	enc    opEncoder
	repl   atomic.Pointer[replicating] // set by SetReplicator; read on every write

	ckptMu   sync.Mutex // one checkpoint at a time
	manifest checkpoint.Manifest
	ckptSize struct{ base, deltas int64 }
	lastCkpt time.Time

	stats   stats
	failed  atomic.Pointer[error]
	closed  atomic.Bool
	stop    chan struct{}
	bgDone  chan struct{}
	seals   sync.WaitGroup // background seals (index.sealBackground): Close waits for them
	closeMu sync.Mutex
}

type drop struct{ id, lsn uint64 }

func walDir(dir string) string  { return filepath.Join(dir, "wal") }
func ckptDir(dir string) string { return filepath.Join(dir, "checkpoint") }

// Open opens (creating if needed) the data directory dir and recovers its
// state: the base checkpoint, the deltas after it, then the log's tail. A
// torn log tail is cut and reported in Stats().Recovery; any other damage
// fails with a *CorruptionError naming the file and offset (and matching
// ErrCorruption), unless
// Options.Repair is set.
//
// The directory and everything the store keeps in it are its owner's
// alone: directories 0700, files 0600, whatever the umask. An existing
// directory with looser modes is tightened (and the change logged); if
// that is not allowed, Open fails saying so.
//
// Errors: ErrNoStore if Options.MustExist is set and dir holds no store;
// ErrLocked if another process has dir open; ErrWrongKey if the
// encryption key does not match; ErrNewerFormat if a newer cube wrote it.
// None of these changes anything on disk.
func Open(dir string, o Options) (*DB, error) {
	o = o.withDefaults()
	db := &DB{
		dir: dir, opts: o, fs: o.FS,
		byName: map[string]*Namespace{}, byID: map[uint64]*Namespace{}, nextID: 1,
		stop: make(chan struct{}), bgDone: make(chan struct{}),
	}
	db.stats.init()
	start := o.Clock()
	if o.MustExist {
		if _, err := db.fs.List(dir); err != nil {
			return nil, fmt.Errorf("%w at %s: %w", ErrNoStore, dir, err)
		}
		if _, exists, err := readFormat(db.fs, dir); err != nil {
			return nil, err
		} else if !exists {
			return nil, fmt.Errorf("%w at %s: the directory has no %s file", ErrNoStore, dir, formatFile)
		}
	}
	if err := db.fs.MkdirAll(dir, dirPerm); err != nil {
		return nil, fmt.Errorf("engine: create %s: %w", dir, err)
	}
	lock, err := db.fs.Lock(filepath.Join(dir, "LOCK"))
	if err != nil {
		if errors.Is(err, vfs.ErrLocked) {
			return nil, fmt.Errorf("%w: %s (%w)", ErrLocked, dir, err)
		}
		return nil, fmt.Errorf("engine: lock %s: %w", dir, err)
	}
	db.lock = lock
	if err := db.open(start); err != nil {
		if db.log != nil {
			db.log.Close(context.Background())
		}
		lock.Close()
		return nil, err
	}
	go db.background()
	return db, nil
}

func (db *DB) open(start time.Time) error {
	o := db.opts
	if o.EncryptionKey != nil {
		c, err := crypt.New(o.EncryptionKey)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadOptions, err)
		}
		db.cipher = c
	}
	// An unfinished rekey is finished, or refused, first (rekey.go).
	if err := db.resumeRekey(); err != nil {
		return err
	}
	f, exists, err := readFormat(db.fs, db.dir)
	if err != nil {
		return err
	}
	if exists {
		if err := f.checkKey(db.dir, db.cipher); err != nil {
			return err
		}
	} else {
		if err := db.fs.MkdirAll(walDir(db.dir), dirPerm); err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		if err := db.fs.MkdirAll(ckptDir(db.dir), dirPerm); err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		for _, d := range []string{db.dir, filepath.Dir(db.dir)} {
			if err := db.fs.SyncDir(d); err != nil {
				return fmt.Errorf("engine: sync %s: %w", d, err)
			}
		}
		if err := writeFormat(db.fs, db.dir, db.cipher); err != nil {
			return err
		}
	}
	// After the key check, so that a refused open changes nothing; before
	// anything else is read or written.
	changed, err := tighten(db.fs, db.dir)
	if err != nil {
		return err
	}
	if len(changed) > 0 {
		o.Logger.Warn("engine: made the data directory private (owner only)", "dir", db.dir, "changed", changed)
	}
	rep := RecoveryReport{}
	if err := db.loadCheckpoints(&rep); err != nil {
		return err
	}
	var d opDecoder
	var op op
	records := 0
	log, wrep, err := wal.Open(wal.Options{
		FS: db.fs, Dir: walDir(db.dir), SegmentSize: o.SegmentSize,
		Sync: wal.SyncMode(o.Sync), SyncInterval: o.SyncInterval,
		Cipher: db.cipher, Repair: o.Repair, OnSync: db.stats.onSync,
	}, db.manifest.LSN, func(lsn uint64, payload []byte) error {
		records++
		d = opDecoder{b: payload}
		for {
			more, err := d.next(&op)
			if err != nil {
				return badOp(err) // the log names the segment and offset
			}
			if !more {
				return nil
			}
			if err := db.applyRecovered(&op, lsn); err != nil {
				return err
			}
		}
	})
	if err != nil {
		return db.translate(err)
	}
	db.log = log
	rep.LogFirstLSN, rep.LogLastLSN, rep.Records = wrep.FirstLSN, wrep.LastLSN, records
	rep.TornSegment, rep.TornOffset, rep.BytesDropped = wrep.TornSegment, wrep.TornOffset, wrep.BytesDropped
	if wrep.Repaired != nil {
		rep.Repaired = wrep.Repaired.Error()
		rep.LostFirst, rep.LostLast, rep.CutFiles = wrep.LostFirst, wrep.LostLast, wrep.CutFiles
	}
	rep.Duration = db.opts.Clock().Sub(start)
	db.stats.recovery = rep
	db.lastCkpt = db.opts.Clock()
	if rep.TornSegment != "" || rep.Repaired != "" {
		o.Logger.Warn("engine: recovered with loss", "report", rep.String())
	} else {
		o.Logger.Info("engine: recovered", "report", rep.String())
	}
	return nil
}

// translate puts an error from reading the store's files in the engine's
// words: which store, and for corruption what to do. The causes stay
// matchable through it (errors.Is, errors.As): the *CorruptionError, the
// formats' sentinels, an errno.
func (db *DB) translate(err error) error {
	if errors.Is(err, wal.ErrWrongKey) || errors.Is(err, checkpoint.ErrWrongKey) {
		return fmt.Errorf("%w: %w", ErrWrongKey, err)
	}
	return fmt.Errorf("engine: open %s: %w%s", db.dir, err, advice(err))
}

// advice says what to do about a corruption that Open refuses. The log
// says it itself (wal.ErrRepairable) of the damage Options.Repair cuts
// out; the rest Repair cannot mend.
func advice(err error) string {
	if !IsCorruption(err) || errors.Is(err, wal.ErrRepairable) {
		return ""
	}
	return "; Repair mends only the log: restore the data directory from a backup"
}

// applyRecovered applies an op read back from a checkpoint or the log.
func (db *DB) applyRecovered(o *op, lsn uint64) error {
	switch o.kind {
	case opNSCreate:
		if _, ok := db.byID[o.ns]; ok {
			return nil // checkpoints repeat namespaces
		}
		if o.maxValue > 1<<40 || checkName("namespace", o.name) != nil {
			return base.Corruptf("", 0, "bad namespace %q", o.name)
		}
		ns, err := newNamespace(db, o.ns, o.name, NamespaceOptions{Dims: o.dims, Curve: curve.Kind(o.curve &^ curveGeo), Geo: o.curve&curveGeo != 0, MaxValueSize: int(o.maxValue)})
		if err != nil {
			return base.Corruptf("", 0, "namespace %q: %w", o.name, err)
		}
		if old, ok := db.byName[o.name]; ok {
			delete(db.byID, old.id)
		}
		ns.created = lsn
		ns.lastLSN.Store(lsn)
		db.byName[o.name], db.byID[o.ns] = ns, ns
		db.nextID = max(db.nextID, o.ns+1)
		db.nsLSN = max(db.nsLSN, lsn)
		return nil
	case opNSDrop:
		if ns, ok := db.byID[o.ns]; ok {
			delete(db.byID, o.ns)
			delete(db.byName, ns.name)
			ns.dropped.Store(true)
			db.drops = append(db.drops, drop{o.ns, lsn})
		}
		db.nsLSN = max(db.nsLSN, lsn)
		return nil
	}
	ns, ok := db.byID[o.ns]
	if !ok {
		return base.Corruptf("", 0, "op on unknown namespace id %d", o.ns)
	}
	if o.dims != 0 && o.dims != ns.dims {
		return base.Corruptf("", 0, "op with %d dims on namespace %q of %d", o.dims, ns.name, ns.dims)
	}
	// Under the lock, though nothing else reads the store yet: a write
	// may hand a batch to a background seal, which installs under it.
	ns.mu.Lock()
	ns.apply(o, lsn, true)
	ns.mu.Unlock()
	return nil
}

// writable fails once the store is closed or its log has failed.
func (db *DB) writable() error {
	if db.closed.Load() {
		return ErrClosed
	}
	if p := db.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// logFailed records a fatal log error: the store turns read-only.
func (db *DB) logFailed(err error) error {
	if errors.Is(err, wal.ErrClosed) && db.closed.Load() {
		return ErrClosed
	}
	e := fmt.Errorf("%w: %w", ErrFailed, err)
	db.failed.CompareAndSwap(nil, &e)
	return *db.failed.Load()
}

// waitDurable waits until the write at lsn is as durable as the sync mode
// promises.
func (db *DB) waitDurable(ctx context.Context, lsn uint64) error {
	if err := db.log.WaitDurable(ctx, lsn); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return db.logFailed(err)
	}
	return nil
}

// Durable reports whether the write at lsn is as durable as the sync mode
// promises: in SyncAlways once a log sync covered it, in the other modes
// at once. See Namespace.UpdateDeferred.
func (db *DB) Durable(lsn uint64) bool {
	return db.opts.Sync != SyncAlways || lsn <= db.log.Synced()
}

// WaitDurable waits until Durable(lsn). It fails if ctx is done first or
// the log failed (an error wrapping ErrFailed).
func (db *DB) WaitDurable(ctx context.Context, lsn uint64) error {
	return db.waitVisible(ctx, lsn)
}

// waitVisible lets a reader that saw the write at lsn go on once that
// write cannot be lost. Only SyncAlways promises that; the other modes
// trade it away with their loss window.
func (db *DB) waitVisible(ctx context.Context, lsn uint64) error {
	if db.opts.Sync != SyncAlways || lsn <= db.log.Synced() {
		return nil
	}
	return db.waitDurable(ctx, lsn)
}

// CreateNamespace creates a namespace. Its options are fixed for its life.
// It returns after the creation is durable (per the sync mode).
func (db *DB) CreateNamespace(ctx context.Context, name string, o NamespaceOptions) (*Namespace, error) {
	if err := checkName("namespace", name); err != nil {
		return nil, err
	}
	if o.Geo && o.Dims == 0 {
		o.Dims = 2
	}
	if o.Dims < 1 || o.Dims > MaxDims {
		return nil, fmt.Errorf("%w: dims %d (must be 1..%d)", ErrBadOptions, o.Dims, MaxDims)
	}
	if o.MaxValueSize < 0 {
		return nil, fmt.Errorf("%w: negative MaxValueSize", ErrBadOptions)
	}
	if rp := db.replicator(); rp != nil {
		return db.createReplicated(ctx, rp, name, o)
	}
	db.mu.Lock()
	if err := db.writable(); err != nil {
		db.mu.Unlock()
		return nil, err
	}
	if _, ok := db.byName[name]; ok {
		db.mu.Unlock()
		return nil, fmt.Errorf("%w: %q", ErrNamespaceExists, name)
	}
	ns, err := newNamespace(db, db.nextID, name, o)
	if err != nil {
		db.mu.Unlock()
		return nil, err
	}
	db.enc.reset()
	db.enc.nsCreate(ns.id, name, ns.dims, ns.curveByte(), uint64(ns.maxValue))
	lsn, err := db.log.Append(db.enc.b)
	if err != nil {
		db.mu.Unlock()
		return nil, db.logFailed(err)
	}
	db.nextID++
	db.nsLSN = lsn
	ns.created = lsn
	ns.lastLSN.Store(lsn)
	db.byName[name], db.byID[ns.id] = ns, ns
	db.mu.Unlock()
	if err := db.waitDurable(ctx, lsn); err != nil {
		return nil, err
	}
	return ns, nil
}

// Namespace returns the namespace called name, or ErrNoNamespace.
//
// A namespace that exists, or is missing, only because of a create or drop
// not yet durable is an observation a crash could undo: in SyncAlways mode
// Namespace then waits for that create or drop to reach the disk (one
// fsync already under way; it returns at once otherwise).
func (db *DB) Namespace(name string) (*Namespace, error) {
	db.mu.RLock()
	ns, ok := db.byName[name]
	lsn := db.nsLSN // a miss may be any drop's doing
	if ok {
		lsn = ns.created
	}
	db.mu.RUnlock()
	if err := db.waitRegistry(lsn); err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %q (create it first)", ErrNoNamespace, name)
	}
	return ns, nil
}

// waitRegistry waits until the namespace creates and drops up to lsn are
// durable. It takes no ctx: it waits only for syncs the writers of those
// records are already waiting on, and the log ends every wait when it fails
// or closes.
func (db *DB) waitRegistry(lsn uint64) error {
	return db.waitVisible(context.Background(), lsn)
}

// Namespaces describes every namespace, sorted by name. Like Namespace,
// it waits for creates and drops it sees to be durable. The counts in
// each NamespaceInfo are statistics: they may include writes still on
// their way to the disk.
func (db *DB) Namespaces() []NamespaceInfo {
	db.mu.RLock()
	lsn := db.nsLSN
	db.mu.RUnlock()
	// An error here is the log's failure, which every write reports; a
	// list is still the best answer to give.
	_ = db.waitRegistry(lsn)
	return db.namespaceInfos()
}

// namespaceInfos lists the namespaces as they are in memory, without
// waiting: Stats reports it, and a monitor must not queue behind an fsync.
func (db *DB) namespaceInfos() []NamespaceInfo {
	db.mu.RLock()
	list := make([]*Namespace, 0, len(db.byName))
	for _, ns := range db.byName {
		list = append(list, ns)
	}
	db.mu.RUnlock()
	out := make([]NamespaceInfo, len(list))
	for i, ns := range list {
		out[i] = ns.Info()
	}
	slices.SortFunc(out, func(a, b NamespaceInfo) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// DropNamespace deletes a namespace and everything in it. It waits for the
// namespace's current writer, and returns once the drop is durable.
func (db *DB) DropNamespace(ctx context.Context, name string) error {
	if rp := db.replicator(); rp != nil {
		return db.dropReplicated(ctx, rp, name)
	}
	db.mu.Lock()
	ns, ok := db.byName[name]
	if !ok {
		db.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrNoNamespace, name)
	}
	if err := db.writable(); err != nil {
		db.mu.Unlock()
		return err
	}
	ns.wmu.Lock()
	ns.mu.Lock()
	db.enc.reset()
	db.enc.nsDrop(ns.id)
	lsn, err := db.log.Append(db.enc.b)
	if err == nil {
		ns.dropped.Store(true)
		delete(db.byName, name)
		delete(db.byID, ns.id)
		db.drops = append(db.drops, drop{ns.id, lsn})
		db.nsLSN = lsn
	}
	ns.mu.Unlock()
	ns.wmu.Unlock()
	db.mu.Unlock()
	if err != nil {
		return db.logFailed(err)
	}
	return db.waitDurable(ctx, lsn)
}

// Sync makes every write so far durable, whatever the sync mode.
func (db *DB) Sync(ctx context.Context) error {
	if err := db.log.Sync(ctx); err != nil {
		return db.logFailed(err)
	}
	return nil
}

// SyncHere makes every write committed so far durable, writing and
// syncing the log on the calling goroutine rather than waiting for the
// log's own writer: for a caller that gathers UpdateDeferred commits and
// has nothing else to do until they are durable.
func (db *DB) SyncHere() error {
	if err := db.log.SyncHere(); err != nil {
		return db.logFailed(err)
	}
	return nil
}

// Err reports the fatal error that turned the store read-only, if any.
func (db *DB) Err() error {
	if p := db.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// Dir returns the data directory.
func (db *DB) Dir() string { return db.dir }

// background triggers checkpoints by log size and by time.
func (db *DB) background() {
	defer close(db.bgDone)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-db.stop:
			return
		case <-t.C:
		}
		if db.Err() != nil {
			continue
		}
		due := db.log.Size() >= db.opts.CheckpointLogSize
		if iv := db.opts.CheckpointInterval; iv > 0 && db.opts.Clock().Sub(db.lastCheckpoint()) >= iv {
			due = true
		}
		if due {
			if _, err := db.Checkpoint(context.Background()); err != nil {
				db.opts.Logger.Error("engine: checkpoint failed", "err", err)
			}
		}
	}
}

// Close checkpoints, syncs and closes the log, and releases the directory.
// Writes still running fail with ErrClosed.
func (db *DB) Close() error {
	db.closeMu.Lock()
	defer db.closeMu.Unlock()
	if db.closed.Load() {
		return nil
	}
	close(db.stop)
	<-db.bgDone
	var errs []error
	if db.Err() == nil {
		if _, err := db.Checkpoint(context.Background()); err != nil {
			errs = append(errs, err)
		}
	}
	db.closed.Store(true)
	// Take every writer lock so nothing is mid-append when the log closes.
	db.mu.Lock()
	for _, ns := range db.byID {
		ns.wmu.Lock()
		defer ns.wmu.Unlock()
	}
	db.mu.Unlock()
	if err := db.log.Close(context.Background()); err != nil && db.Err() == nil {
		errs = append(errs, fmt.Errorf("engine: close log: %w", err))
	}
	if err := db.lock.Close(); err != nil {
		errs = append(errs, fmt.Errorf("engine: unlock: %w", err))
	}
	// A background seal's work was taken by the checkpoint's seal, or
	// is for an index no one reads any more; it ends without the writer
	// locks, but must not outlive the store.
	db.seals.Wait()
	return errors.Join(errs...)
}
