package cube

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/plugins"
	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/js"
)

// Options configure Open. The zero value is a durable store on the
// operating system's file system.
type Options struct {
	// Engine configures the store: file system, sync mode, encryption,
	// checkpoints. See engine.Options.
	Engine engine.Options
	// Logger receives notices; nil discards them.
	Logger *slog.Logger
	// CacheDir holds the WASM compilation cache. "" means <dir>/cache/wasm
	// when the engine uses the operating system's file system, and an
	// in-memory cache when Engine.FS is set (tests).
	CacheDir string
	// Limits are the defaults for programs' zero Limits fields, and the
	// limits of Eval and Session. Zero fields take vm's defaults
	// (vm.DefaultTimeout, ...).
	Limits vm.Limits
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

// Session is a JavaScript scope kept between Evals (the REPL's, a server
// connection's). See plugins.Session.
type Session = plugins.Session

// Stats is a point-in-time view of the store and its programs.
type Stats struct {
	Engine   engine.Stats
	Programs []ProgramInfo // every namespace's, sorted by namespace and name
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
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Engine.Logger == nil {
		o.Engine.Logger = o.Logger
	}
	if o.CacheDir == "" && o.Engine.FS == nil {
		o.CacheDir = filepath.Join(dir, "cache", "wasm")
	}
	eng, err := engine.Open(dir, o.Engine)
	if err != nil {
		return nil, err
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

// Engine returns the underlying store.
func (db *DB) Engine() *engine.DB { return db.eng }

// Registry returns the program registry.
func (db *DB) Registry() *plugins.Registry { return db.reg }

// CreateNamespace creates a namespace; see engine.DB.CreateNamespace.
func (db *DB) CreateNamespace(ctx context.Context, name string, o engine.NamespaceOptions) (*engine.Namespace, error) {
	return db.eng.CreateNamespace(ctx, name, o)
}

// Namespace returns a namespace by name, or engine.ErrNoNamespace.
func (db *DB) Namespace(name string) (*engine.Namespace, error) { return db.eng.Namespace(name) }

// Namespaces describes every namespace, sorted by name.
func (db *DB) Namespaces() []engine.NamespaceInfo { return db.eng.Namespaces() }

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
func (db *DB) Prog(ctx context.Context, ns, name string, kind vm.Kind, code []byte, o ProgOptions) (ProgramInfo, error) {
	return db.reg.Prog(ctx, ns, name, kind, code, o)
}

// Progs describes the programs of namespace ns, sorted by name.
func (db *DB) Progs(ns string) ([]ProgramInfo, error) { return db.reg.Progs(ns) }

// ProgInfo describes one program, telemetry included, or fails with
// plugins.ErrNoProgram.
func (db *DB) ProgInfo(ns, name string) (ProgramInfo, error) { return db.reg.ProgInfo(ns, name) }

// Unprog removes a program and its telemetry; durable on return.
func (db *DB) Unprog(ctx context.Context, ns, name string) error {
	return db.reg.Unprog(ctx, ns, name)
}

// Run runs a registered program with args: a read-only program on a
// snapshot, a read-write one as one transaction that commits only if it
// succeeds. See plugins.Registry.Run.
func (db *DB) Run(ctx context.Context, ns, name string, args []byte) (vm.Result, error) {
	return db.reg.Run(ctx, ns, name, args)
}

// Eval runs an ad-hoc JavaScript script in namespace ns as one read-write
// transaction and returns its completion value (Output, and its Type for
// display). cube.args holds args. See plugins.Registry.Eval.
func (db *DB) Eval(ctx context.Context, ns, script string, args []byte) (js.Completion, error) {
	return db.reg.Eval(ctx, ns, script, args)
}

// Session returns a JavaScript session on namespace ns that keeps its
// state between Evals; Close it when done.
func (db *DB) Session(ns string) *Session { return db.reg.Session(ns) }

// Stats returns the engine's statistics and every program's telemetry.
func (db *DB) Stats() Stats {
	return Stats{Engine: db.eng.Stats(), Programs: db.reg.All()}
}

// Checkpoint writes a checkpoint now; see engine.DB.Checkpoint.
func (db *DB) Checkpoint(ctx context.Context) (engine.CheckpointInfo, error) {
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
