package cube

import "github.com/cubelinux/cube/engine"

// Store is a data directory opened without its programs: its namespaces
// and what they hold, with no sandbox started and nothing written beside
// the store (no compilation cache), for tools that read a store through
// (a verifier, a shell's completion). DB is the store with its programs.
// It is safe for concurrent use.
type Store struct {
	eng *engine.DB
}

// OpenStore opens or creates the data directory dir, as Open does
// (recovery included), without the programs: only o's store fields
// count (Engine and the fields after it, and Logger).
//
// # Errors
//
// As Open's: ErrNoStore (with MustExist), ErrLocked, ErrWrongKey,
// ErrNewerFormat, a CorruptionError.
func OpenStore(dir string, o Options) (*Store, error) {
	e := o.engine()
	if e.Logger == nil {
		e.Logger = o.Logger // nil too discards
	}
	eng, err := engine.Open(dir, e)
	if err != nil {
		return nil, err
	}
	return &Store{eng: eng}, nil
}

// Dir returns the data directory.
func (s *Store) Dir() string { return s.eng.Dir() }

// Namespace returns the namespace called name, or ErrNoNamespace.
func (s *Store) Namespace(name string) (*Namespace, error) { return namespaceOf(s.eng.Namespace(name)) }

// Namespaces describes every namespace, sorted by name.
func (s *Store) Namespaces() []NamespaceInfo { return s.eng.Namespaces() }

// StoreInfo returns the store's statistics, the last recovery's report
// among them.
func (s *Store) StoreInfo() StoreInfo { return StoreInfo(s.eng.Stats()) }

// Close checkpoints (unless nothing changed) and closes the store.
func (s *Store) Close() error { return s.eng.Close() }
