package cube

import (
	"context"
	"iter"

	"github.com/cubelinux/cube/engine"
)

// Namespace is a hard partition of the store: its own coordinates, edges
// and metadata. Nothing in one namespace can reach another. Its methods
// are safe for concurrent use.
//
// Writes to one namespace are serialized (one writer at a time); the wait
// for the log to reach disk happens after the writer lock is released, so
// concurrent writers share fsyncs. Reads never wait for writers, but a
// read that sees a write not yet durable waits until it is (SyncAlways),
// so nobody observes a write that a crash could lose.
type Namespace engine.Namespace

// Namespace and Tx are the engine's handles under cube's own types (as
// Session is the registry's): a pointer conversion, free, so that a
// namespace keeps one identity whichever way it was reached, and the
// methods below are the whole of what cube promises about them.

func (ns *Namespace) e() *engine.Namespace { return (*engine.Namespace)(ns) }

func namespaceOf(ns *engine.Namespace, err error) (*Namespace, error) {
	return (*Namespace)(ns), err
}

// Name returns the namespace's name.
func (ns *Namespace) Name() string { return ns.e().Name() }

// Dropped reports whether the namespace was dropped. On a handle kept
// past its drop, writes and transactions fail with ErrNoNamespace;
// DB.Namespace finds the name's new namespace, if there is one. A handle
// not dropped is its name's namespace, so a server may keep handles
// instead of looking names up on every request.
func (ns *Namespace) Dropped() bool { return ns.e().Dropped() }

// Dims returns the number of dimensions of its coordinates.
func (ns *Namespace) Dims() int { return ns.e().Dims() }

// Info describes the namespace.
func (ns *Namespace) Info() NamespaceInfo { return ns.e().Info() }

// Geo reports whether the namespace is geographic (NamespaceOptions.Geo):
// its coordinates are (longitude, latitude) in 1e-7 degree and its
// distances metres.
func (ns *Namespace) Geo() bool { return ns.e().Geo() }

// Put writes value at c (the value is copied).
//
// Durability: in SyncAlways mode Put returns after the write is on disk;
// in SyncInterval and SyncNone it returns at once, and a crash may lose
// it.
func (ns *Namespace) Put(ctx context.Context, c []int32, value []byte) error {
	return ns.e().Put(ctx, c, value)
}

// Delete removes the value at c and reports whether there was one. It is
// as durable as Put.
func (ns *Namespace) Delete(ctx context.Context, c []int32) (bool, error) {
	return ns.e().Delete(ctx, c)
}

// Get returns the value at c, or an error wrapping ErrNotFound. The
// returned slice must not be modified.
func (ns *Namespace) Get(ctx context.Context, c []int32) ([]byte, error) {
	return ns.e().Get(ctx, c)
}

// Update runs fn in a read-write transaction and commits its writes
// atomically if fn returns nil. Transactions on one namespace run one at a
// time (they are serializable). Update returns after the commit is as
// durable as the sync mode promises; if fn fails, or the commit cannot be
// logged, nothing fn wrote is ever visible.
//
// Whatever fn read may leave with it (in its error, in what its closure
// kept, in a panic), so Update returns, or lets the panic go on, only
// once everything fn could see is durable, on the error paths too. If
// that wait fails (ctx is done, the log failed), Update returns the
// wait's error instead of fn's.
func (ns *Namespace) Update(ctx context.Context, fn func(*Tx) error) error {
	return ns.e().Update(ctx, func(tx *engine.Tx) error { return fn((*Tx)(tx)) })
}

// UpdateDeferred runs fn and commits as Update does, but returns without
// waiting for durability. Nothing fn saw or wrote, its error included, may
// leave the caller before DB.Durable(until) is true or
// DB.WaitDurable(ctx, until) returns nil: that promise is the caller's. It
// is for servers that gather many clients' commits behind one log sync
// without a goroutine each (cube's daemon does). It does not wait for
// another writer either: if a transaction holds the namespace it returns
// ErrBusy at once, and fn does not run.
func (ns *Namespace) UpdateDeferred(fn func(*Tx) error) (until uint64, err error) {
	return ns.e().UpdateDeferred(func(tx *engine.Tx) error { return fn((*Tx)(tx)) })
}

// GetDeferred is Get without its wait for durability: the value, or the
// ErrNotFound, must not leave the caller before DB.Durable(until).
func (ns *Namespace) GetDeferred(c []int32) (v []byte, until uint64, err error) {
	return ns.e().GetDeferred(c)
}

// View runs fn in a read-only transaction on a consistent snapshot of the
// namespace. Views never block writers and writers never block views.
// Everything fn sees is durable.
func (ns *Namespace) View(ctx context.Context, fn func(*Tx) error) error {
	return ns.e().View(ctx, func(tx *engine.Tx) error { return fn((*Tx)(tx)) })
}

// Snapshot returns a read-only transaction on a consistent snapshot. Call
// Release when done with it. View is the managed form.
func (ns *Namespace) Snapshot(ctx context.Context) (*Tx, error) {
	tx, err := ns.e().Snapshot(ctx)
	return (*Tx)(tx), err
}

// Region returns the values inside the box [min, max] in curve order from
// a snapshot taken now; limit 0 means all. See Tx.Region.
func (ns *Namespace) Region(ctx context.Context, min, max []int32, limit int) (iter.Seq2[[]int32, []byte], error) {
	return ns.e().Region(ctx, min, max, limit)
}

// Count returns the number of values inside the box [min, max].
func (ns *Namespace) Count(ctx context.Context, min, max []int32) (int, error) {
	return ns.e().Count(ctx, min, max)
}

// Link creates or replaces the edge from -[label]-> to, with a weight (a
// finite number >= 0, else ErrBadWeight) and optional bytes. It is as
// durable as Put.
func (ns *Namespace) Link(ctx context.Context, from, to []int32, label string, weight float64, value []byte) error {
	return ns.e().Link(ctx, from, to, label, weight, value)
}

// Unlink removes an edge and reports whether it existed.
func (ns *Namespace) Unlink(ctx context.Context, from, to []int32, label string) (bool, error) {
	return ns.e().Unlink(ctx, from, to, label)
}

// Edges returns the edges of c from a snapshot taken now.
func (ns *Namespace) Edges(ctx context.Context, c []int32, dir Direction, label string) ([]Edge, error) {
	return ns.e().Edges(ctx, c, dir, label)
}

// Walk runs a built-in walk on a snapshot taken now.
func (ns *Namespace) Walk(ctx context.Context, start []int32, o WalkOptions) ([]Step, error) {
	return ns.e().Walk(ctx, start, o)
}

// WalkSeq is Walk yielding the steps from the walk's own buffers instead
// of copying them out: range over it once, and copy a Step's slices to
// keep them past the range (see engine.Tx.WalkSeq).
func (ns *Namespace) WalkSeq(ctx context.Context, start []int32, o WalkOptions) (iter.Seq[Step], error) {
	return ns.e().WalkSeq(ctx, start, o)
}

// ShortestPath finds the least-weight path on a snapshot taken now (see
// Tx.ShortestPath).
func (ns *Namespace) ShortestPath(ctx context.Context, from, to []int32, label string, dir Direction) (Path, bool, error) {
	return ns.e().ShortestPath(ctx, from, to, label, dir)
}

// ShortestPathWith finds the least-weight path of at most o.MaxHops edges
// on a snapshot taken now (see Tx.ShortestPathWith).
func (ns *Namespace) ShortestPathWith(ctx context.Context, from, to []int32, o PathOptions) (Path, bool, error) {
	return ns.e().ShortestPathWith(ctx, from, to, o)
}

// Nearby returns the k points nearest to c, nearest first, from a
// snapshot taken now. See Tx.Nearby.
func (ns *Namespace) Nearby(ctx context.Context, c []int32, k int, o NearbyOptions) ([]Neighbor, error) {
	return ns.e().Nearby(ctx, c, k, o)
}

// Within iterates the values at distance at most r from c, in curve
// order, from a snapshot taken now. See Tx.Within.
func (ns *Namespace) Within(ctx context.Context, c []int32, r float64, o WithinOptions) (iter.Seq2[[]int32, []byte], error) {
	return ns.e().Within(ctx, c, r, o)
}

// CountWithin returns the number of values at distance at most r from c.
func (ns *Namespace) CountWithin(ctx context.Context, c []int32, r float64) (int, error) {
	return ns.e().CountWithin(ctx, c, r)
}

// Tx is a transaction on one namespace: read-write from Namespace.Update,
// read-only from Namespace.View or Snapshot. It is valid only inside the
// function it was passed to (a Snapshot's until Release), and is not safe
// for concurrent use.
//
// A read-write Tx sees its own writes. Its writes become visible to
// others, all at once, when Update's function returns nil.
type Tx engine.Tx

func (tx *Tx) e() *engine.Tx { return (*engine.Tx)(tx) }

// Namespace returns the namespace the transaction runs in.
func (tx *Tx) Namespace() *Namespace { return (*Namespace)(tx.e().Namespace()) }

// Writable reports whether the transaction may write.
func (tx *Tx) Writable() bool { return tx.e().Writable() }

// Release ends a transaction from Snapshot.
func (tx *Tx) Release() { tx.e().Release() }

// Get returns the value at c, or ErrNotFound. The returned slice must not
// be modified; it stays valid after the transaction.
func (tx *Tx) Get(c []int32) ([]byte, error) { return tx.e().Get(c) }

// Put writes value at c. The value is copied.
func (tx *Tx) Put(c []int32, value []byte) error { return tx.e().Put(c, value) }

// Delete removes the value at c and reports whether there was one.
func (tx *Tx) Delete(c []int32) (bool, error) { return tx.e().Delete(c) }

// Region iterates the values inside the box [min, max] (inclusive on
// every axis) in curve order, at most limit of them (0 = all). The
// coordinate slice is reused between steps; copy it to keep it.
func (tx *Tx) Region(min, max []int32, limit int) (iter.Seq2[[]int32, []byte], error) {
	return tx.e().Region(min, max, limit)
}

// Count returns the number of values inside the box [min, max].
func (tx *Tx) Count(min, max []int32) (int, error) { return tx.e().Count(min, max) }

// Link creates or replaces the edge from -[label]-> to. The weight must be
// a finite number >= 0 (ErrBadWeight otherwise): it is what ShortestPath
// adds up.
func (tx *Tx) Link(from, to []int32, label string, weight float64, value []byte) error {
	return tx.e().Link(from, to, label, weight, value)
}

// Unlink removes the edge from -[label]-> to and reports whether it
// existed.
func (tx *Tx) Unlink(from, to []int32, label string) (bool, error) {
	return tx.e().Unlink(from, to, label)
}

// Edges iterates the edges of c in direction dir whose label is label
// ("" = any). An In edge is reported as stored: From is the other end, To
// is c.
func (tx *Tx) Edges(c []int32, dir Direction, label string) (iter.Seq[Edge], error) {
	return tx.e().Edges(c, dir, label)
}

// Meta returns the namespace metadata value under key. Metadata is a
// small key-value map beside the coordinates, written and made durable
// like any other write; the program registry keeps programs in it (under
// "prog/").
func (tx *Tx) Meta(key string) ([]byte, bool) { return tx.e().Meta(key) }

// MetaKeys returns the metadata keys with the prefix, sorted.
func (tx *Tx) MetaKeys(prefix string) []string { return tx.e().MetaKeys(prefix) }

// SetMeta writes a metadata value.
func (tx *Tx) SetMeta(key string, value []byte) error { return tx.e().SetMeta(key, value) }

// DeleteMeta removes a metadata value and reports whether it existed.
func (tx *Tx) DeleteMeta(key string) (bool, error) { return tx.e().DeleteMeta(key) }

// Walk runs a built-in BFS or DFS from start; see WalkOptions.
func (tx *Tx) Walk(ctx context.Context, start []int32, o WalkOptions) ([]Step, error) {
	return tx.e().Walk(ctx, start, o)
}

// WalkSeq is Walk without copying the steps out (see Namespace.WalkSeq).
func (tx *Tx) WalkSeq(ctx context.Context, start []int32, o WalkOptions) (iter.Seq[Step], error) {
	return tx.e().WalkSeq(ctx, start, o)
}

// ShortestPath returns the least-weight path from one coordinate to
// another over edges with the label ("" = any) in the direction; ok is
// false when there is none. It is Dijkstra's algorithm: Link refuses a
// weight that is negative, NaN or infinite (ErrBadWeight), and an edge
// with a negative weight left by an older cube makes ShortestPath fail
// with ErrBadWeight, naming it, rather than answer wrongly.
func (tx *Tx) ShortestPath(ctx context.Context, from, to []int32, label string, dir Direction) (Path, bool, error) {
	return tx.e().ShortestPath(ctx, from, to, label, dir)
}

// ShortestPathWith returns the least-weight path among those of at most
// o.MaxHops edges (0 = any number) over edges with o.Label in
// o.Direction. Equal weights go to the fewest edges, then to the least
// coordinate before the target, then the one before that, back to from.
// A negative MaxHops is ErrBadOptions.
func (tx *Tx) ShortestPathWith(ctx context.Context, from, to []int32, o PathOptions) (Path, bool, error) {
	return tx.e().ShortestPathWith(ctx, from, to, o)
}

// Nearby returns the k points nearest to c by Euclidean distance over the
// integer coordinates, nearest first; points at the same distance come in
// curve order. Fewer than k come back when the namespace holds fewer (or
// fewer within o.MaxDist). A read-write transaction sees its own writes.
// ctx is checked during the scans, so a large k can be stopped.
//
// # Errors
//
// ErrDims for a coordinate of the wrong length; ErrBadOptions for k < 1
// or a MaxDist that is negative or NaN.
func (tx *Tx) Nearby(ctx context.Context, c []int32, k int, o NearbyOptions) ([]Neighbor, error) {
	return tx.e().Nearby(ctx, c, k, o)
}

// Within iterates the values at distance at most r from c (a point at
// exactly r is inside) in curve order, at most o.Limit of them. r may be
// +Inf (every point). The coordinate slice is reused between steps; copy
// it to keep it. A read-write transaction sees its own writes.
//
// # Errors
//
// ErrDims for a coordinate of the wrong length; ErrBadOptions for an r
// that is negative or NaN, or a negative Limit.
func (tx *Tx) Within(c []int32, r float64, o WithinOptions) (iter.Seq2[[]int32, []byte], error) {
	return tx.e().Within(c, r, o)
}

// CountWithin returns the number of values at distance at most r from c.
func (tx *Tx) CountWithin(c []int32, r float64) (int, error) { return tx.e().CountWithin(c, r) }
