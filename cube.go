package cube

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/plugins"
)

// Options configure Open. The zero value is a durable store on the
// operating system's file system.
type Options struct {
	// Engine configures the store: file system, sync mode, encryption,
	// checkpoints. See engine.Options. The four fields after it say the
	// same for callers that do not import engine: each that is not zero
	// takes the place of Engine's field of the same name.
	Engine engine.Options
	// Sync is the durability mode (the zero value is SyncAlways).
	Sync SyncMode
	// EncryptionKey (32 bytes) opens or makes an encrypted store; see
	// ReadKeyFile.
	EncryptionKey []byte
	// CheckpointInterval: a checkpoint this long after the last if
	// anything changed; negative disables the timer (zero: the engine's
	// default).
	CheckpointInterval time.Duration
	// MustExist refuses, with ErrNoStore, a directory that holds no store
	// instead of making one there, so that a mistyped path creates
	// nothing.
	MustExist bool
	// Repair lets Open cut corrupt log bytes out (copied beside the log
	// first, and reported in StoreInfo().Recovery) instead of refusing
	// the store: the writes from the damage on are lost. Damage anywhere
	// else is refused still.
	Repair bool
	// Logger receives notices; nil discards them.
	Logger *slog.Logger
	// CacheDir holds the WASM compilation cache: programs' compiled code,
	// in clear. "" means <dir>/cache/wasm when the engine uses the
	// operating system's file system, and an in-memory cache when Engine.FS
	// is set (tests) or a key is (EncryptionKey): an encrypted store
	// leaves no plaintext code on disk, at the cost of compiling each
	// program again after every Open (and Open removes a cache left in
	// <dir>/cache/wasm). Set it explicitly to keep a cache on disk for an
	// encrypted store (on a disk you trust with the code).
	CacheDir string
	// Limits are the defaults for programs' zero Limits fields, and the
	// limits of Eval and Session. Zero fields take vm's defaults
	// (vm.DefaultTimeout, ...).
	Limits Limits
	// TelemetryInterval is how often program telemetry is written to the
	// store: zero means plugins.DefaultTelemetryInterval (10 s), negative
	// only at Close. A crash loses at most one interval of counters.
	TelemetryInterval time.Duration
	// JSWorker is the command that starts a JavaScript worker process (a
	// program that calls jsproc.Serve on its standard input and output, as
	// "cube __js-worker" does). When set, JavaScript runs in worker
	// processes whose memory and time limits the kernel enforces, so no
	// script can make this process grow or stall: set it when the code is
	// not yours (cube serve does). Empty runs JavaScript in this process.
	JSWorker []string
}

// ProgOptions configure one program: read-only or not, and its limits.
// See plugins.ProgOptions.
type ProgOptions = plugins.ProgOptions

// ProgramInfo describes a registered program, telemetry included. See
// plugins.ProgramInfo.
type ProgramInfo = plugins.ProgramInfo

// Telemetry is a program's run counters and latency. See
// plugins.Telemetry.
type Telemetry = plugins.Telemetry

// Stats is a point-in-time view of the store and its programs.
type Stats struct {
	Store    StoreInfo
	Programs []ProgramInfo // every namespace's, sorted by namespace and name
}

// StoreInfo is a point-in-time view of the store: every namespace, the
// log and its fsyncs, recent checkpoints, the last recovery. The figures
// are statistics, read without waiting: they may count writes not yet
// durable.
type StoreInfo struct {
	Namespaces  []NamespaceInfo
	Sync        string // the sync mode: "always", "interval" or "none"
	WrittenLSN  uint64 // log records handed to the OS
	SyncedLSN   uint64 // log records known durable
	LogBytes    int64  // bytes of log on disk
	Syncs       int64  // fdatasyncs of the log
	SyncLatency Latency
	Checkpoints []CheckpointInfo // the most recent, oldest first
	Recovery    RecoveryReport
	Err         string // why the store is read-only, if it is
}

// DB is an open cube: the store and its programs. It is safe for
// concurrent use.
type DB struct {
	eng  *engine.DB
	reg  *plugins.Registry
	opts Options
}

// Open opens or creates the data directory dir. See engine.Open for what
// recovery does and which errors it returns. Programs are not loaded
// until first used; each is compiled on its first run.
func Open(dir string, o Options) (*DB, error) {
	o.Engine = o.engine()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Engine.Logger == nil {
		o.Engine.Logger = o.Logger
	}
	if o.CacheDir == "" && o.Engine.FS == nil && o.Engine.EncryptionKey == nil {
		o.CacheDir = defaultCacheDir(dir)
	}
	eng, err := engine.Open(dir, o.Engine)
	if err != nil {
		return nil, err
	}
	if o.CacheDir == "" && o.Engine.FS == nil {
		// Encrypted: a cache left from the store's plain days (a rekey
		// done with engine.Rekey rather than Rekey) is compiled code in
		// clear. After the key check, so that a refused open changes
		// nothing.
		stale := defaultCacheDir(dir)
		if removed, err := removeCache(stale); err != nil {
			o.Logger.Warn("cube: cannot remove the WASM compilation cache (compiled code in clear) beside an encrypted store; remove it yourself", "dir", stale, "err", err)
		} else if removed {
			o.Logger.Warn("cube: removed the WASM compilation cache (compiled code in clear) beside an encrypted store", "dir", stale)
		}
	}
	reg, err := plugins.New(context.Background(), eng, plugins.Options{
		Logger:            o.Logger,
		CacheDir:          o.CacheDir,
		Limits:            o.Limits,
		TelemetryInterval: o.TelemetryInterval,
		Clock:             o.Engine.Clock,
		JSWorker:          o.JSWorker,
	})
	if err != nil {
		eng.Close()
		return nil, fmt.Errorf("cube: %w", err)
	}
	return &DB{eng: eng, reg: reg, opts: o}, nil
}

// engine is o.Engine with the root fields that are set in place of its
// own.
func (o Options) engine() engine.Options {
	e := o.Engine
	if o.Sync != 0 {
		e.Sync = o.Sync
	}
	if o.EncryptionKey != nil {
		e.EncryptionKey = o.EncryptionKey
	}
	if o.CheckpointInterval != 0 {
		e.CheckpointInterval = o.CheckpointInterval
	}
	if o.MustExist {
		e.MustExist = true
	}
	if o.Repair {
		e.Repair = true
	}
	return e
}

// Dir returns the data directory.
func (db *DB) Dir() string { return db.eng.Dir() }

// CreateNamespace creates a namespace. Its options are fixed for its
// life. It returns after the creation is durable (per the sync mode).
//
// # Errors
//
// ErrNamespaceExists, ErrBadName, ErrBadOptions.
func (db *DB) CreateNamespace(ctx context.Context, name string, o NamespaceOptions) (*Namespace, error) {
	return namespaceOf(db.eng.CreateNamespace(ctx, name, o))
}

// Namespace returns the namespace called name, or ErrNoNamespace. A
// namespace that exists, or is missing, only because of a create or drop
// not yet durable waits for it to reach the disk (SyncAlways).
func (db *DB) Namespace(name string) (*Namespace, error) { return namespaceOf(db.eng.Namespace(name)) }

// Namespaces describes every namespace, sorted by name.
func (db *DB) Namespaces() []NamespaceInfo { return db.eng.Namespaces() }

// DropNamespace deletes a namespace with everything in it, programs
// included.
func (db *DB) DropNamespace(ctx context.Context, name string) error {
	if err := db.eng.DropNamespace(ctx, name); err != nil {
		return err
	}
	db.reg.Forget(name)
	return nil
}

// Prog validates, compiles and registers a program in namespace ns under
// name, replacing any earlier version atomically, and returns its
// description (Version is the content hash). Registering the same code
// and options again writes nothing. Durable on return like any write. See
// plugins.Registry.Prog for the errors.
func (db *DB) Prog(ctx context.Context, ns, name string, kind Kind, code []byte, o ProgOptions) (ProgramInfo, error) {
	return db.reg.Prog(ctx, ns, name, kind, code, o)
}

// Progs describes the programs of namespace ns, sorted by name.
func (db *DB) Progs(ns string) ([]ProgramInfo, error) { return db.reg.Progs(ns) }

// ProgInfo describes one program, telemetry included, or fails with
// ErrNoProgram.
func (db *DB) ProgInfo(ns, name string) (ProgramInfo, error) { return db.reg.ProgInfo(ns, name) }

// Unprog removes a program and its telemetry; durable on return.
func (db *DB) Unprog(ctx context.Context, ns, name string) error {
	return db.reg.Unprog(ctx, ns, name)
}

// Run runs a registered program with args: a read-only program on a
// snapshot, a read-write one as one transaction that commits only if it
// succeeds, as durably as the sync mode promises.
//
// # Errors
//
// ErrNoProgram, ErrNoNamespace; an *Error for a failed run (KindOf tells
// a trap, a timeout, a limit, the guest's own error); the store's errors
// (ErrFailed).
func (db *DB) Run(ctx context.Context, ns, name string, args []byte) (Result, error) {
	r, err := db.reg.Run(ctx, ns, name, args)
	return resultOf(r), err
}

// Eval runs an ad-hoc JavaScript script in namespace ns as one read-write
// transaction and returns its completion value (Output, and its Type for
// display). cube.args holds args. Nothing of the script outlives it; see
// Session for a scope that does.
func (db *DB) Eval(ctx context.Context, ns, script string, args []byte) (Completion, error) {
	c, err := db.reg.Eval(ctx, ns, script, args)
	return completionOf(c), err
}

// Session returns a JavaScript session on namespace ns that keeps its
// state between Evals; Close it when done. ns need not exist yet: Eval
// fails with ErrNoNamespace until it does. With ns "" its scripts run
// outside any namespace: plain JavaScript works and cube's calls fail
// saying so.
func (db *DB) Session(ns string) *Session { return (*Session)(db.reg.Session(ns)) }

// Durable reports whether the log position until, from
// Namespace.UpdateDeferred or GetDeferred, is as durable as the sync mode
// promises.
func (db *DB) Durable(until uint64) bool { return db.eng.Durable(until) }

// WaitDurable waits until Durable(until). It fails if ctx is done first, or
// with an error wrapping ErrFailed if the log failed.
func (db *DB) WaitDurable(ctx context.Context, until uint64) error {
	return db.eng.WaitDurable(ctx, until)
}

// SyncHere makes every write committed so far durable by writing and
// syncing the log on the calling goroutine, so that Durable is true for
// every position returned before the call. It is for a server that
// gathers UpdateDeferred commits from many clients and answers none of
// them until they are durable: doing the sync itself saves the wake-ups
// of handing it to the log's writer and waiting. It fails with an error
// wrapping ErrFailed if the log failed (the store is read-only then).
func (db *DB) SyncHere() error { return db.eng.SyncHere() }

// Stats returns the store's statistics and every program's telemetry.
func (db *DB) Stats() Stats {
	return Stats{Store: db.StoreInfo(), Programs: db.reg.All()}
}

// StoreInfo returns the store's statistics alone, without the programs'
// (which Stats gathers from every namespace).
func (db *DB) StoreInfo() StoreInfo { return StoreInfo(db.eng.Stats()) }

// Checkpoint writes a checkpoint now: a delta with what changed since the
// last one, or a new base. Writers pause only while the namespaces are
// sealed. It returns a zero CheckpointInfo when nothing changed.
func (db *DB) Checkpoint(ctx context.Context) (CheckpointInfo, error) {
	return db.eng.Checkpoint(ctx)
}

// Close writes the programs' telemetry, closes the sandboxes, then
// checkpoints and closes the store.
func (db *DB) Close() error {
	err := db.reg.Close(context.Background())
	if cerr := db.eng.Close(); cerr != nil {
		return cerr
	}
	return err
}
