// Package cube is the embedding facade: a durable coordinate store whose
// namespaces hold values at integer coordinates and labelled edges, plus
// the programs (WebAssembly or JavaScript) registered in them.
//
//	db, err := cube.Open("cube.data", cube.Options{})
//	ns, err := db.CreateNamespace(ctx, "world", engine.NamespaceOptions{Dims: 3})
//	err = ns.Put(ctx, []int32{1, 2, 3}, []byte("hello"))
//
// The engine package is the store itself (values, regions, edges, walks,
// transactions, durability); this package adds the program registry on
// top and is what servers, the CLI and the REPL open.
package cube

import (
	"context"
	"log/slog"

	"github.com/cubelinux/cube/engine"
)

// Options configure Open. The zero value is a durable store on the
// operating system's file system.
type Options struct {
	// Engine configures the store: file system, sync mode, encryption,
	// checkpoints. See engine.Options.
	Engine engine.Options
	// Logger receives notices; nil discards them.
	Logger *slog.Logger
}

// DB is an open cube: the store and its programs. It is safe for
// concurrent use.
type DB struct {
	eng  *engine.DB
	opts Options
}

// Open opens or creates the data directory dir. See engine.Open for what
// recovery does and which errors it returns.
func Open(dir string, o Options) (*DB, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Engine.Logger == nil {
		o.Engine.Logger = o.Logger
	}
	eng, err := engine.Open(dir, o.Engine)
	if err != nil {
		return nil, err
	}
	return &DB{eng: eng, opts: o}, nil
}

// Engine returns the underlying store.
func (db *DB) Engine() *engine.DB { return db.eng }

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
	return db.eng.DropNamespace(ctx, name)
}

// Checkpoint writes a checkpoint now; see engine.DB.Checkpoint.
func (db *DB) Checkpoint(ctx context.Context) (engine.CheckpointInfo, error) {
	return db.eng.Checkpoint(ctx)
}

// Close checkpoints and closes the store.
func (db *DB) Close() error { return db.eng.Close() }
