package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/cubelinux/cube/engine/curve"
)

// DefaultMaxValueSize caps a value (and an edge's bytes) when a namespace
// is created without its own limit.
const DefaultMaxValueSize = 1 << 20

// NamespaceOptions describe a namespace at creation; they never change.
type NamespaceOptions struct {
	Dims         int        // 1..8
	Curve        curve.Kind // curve.Hilbert (the zero value) or curve.Morton
	MaxValueSize int        // 0 = DefaultMaxValueSize
	// Geo makes a geographic namespace: 2 dimensions, (longitude,
	// latitude) in units of 1e-7 degree (GeoScale), writes refused
	// outside [-180, 180] × [-90, 90], and Nearby, Within and
	// CountWithin in metres on the sphere (see GeoDistance). Dims is 2
	// or 0 (which means 2).
	Geo bool
}

// NamespaceInfo describes a namespace and what it holds.
type NamespaceInfo struct {
	Name         string
	Dims         int
	Curve        string
	Geo          bool // (longitude, latitude) in 1e-7 degree, distances in metres
	MaxValueSize int
	Values       int
	ValueBytes   int64
	Edges        int
	LastLSN      uint64 // the last log record that wrote to it
}

// Namespace is a hard partition of the store: its own coordinates, edges
// and metadata. Nothing in one namespace can reach another. Its methods are
// safe for concurrent use.
//
// Writes to one namespace are serialized (one writer at a time); the wait
// for the log to reach disk happens after the writer lock is released, so
// concurrent writers share fsyncs. Reads never wait for writers, but a read
// that sees a write not yet durable waits until it is (in SyncAlways mode),
// so nobody observes a write that a crash could lose.
type Namespace struct {
	db       *DB
	id       uint64
	name     string
	dims     int
	curve    *curve.Curve
	geo      bool
	maxValue int
	created  uint64 // LSN of its create record; set before it is registered

	wmu sync.Mutex // one writer at a time; held through a whole Update
	enc opEncoder  // scratch for single writes, under wmu

	// Under a Replicator (replicate.go): rmu is held by an Update while
	// its function runs and its record is proposed; pending waits for
	// the last record proposed, under rmu.
	rmu     sync.Mutex
	pending func(context.Context) error

	mu      sync.RWMutex // guards idx, edges and meta against readers
	idx     index
	edges   edgeTrees
	meta    map[string]mentry
	mtombs  []string
	lastLSN atomic.Uint64
	dropped atomic.Bool
}

func newNamespace(db *DB, id uint64, name string, o NamespaceOptions) (*Namespace, error) {
	if o.Geo && o.Dims != 2 {
		return nil, fmt.Errorf("%w: a geo namespace has 2 dimensions (longitude, latitude), not %d", ErrBadOptions, o.Dims)
	}
	cv, err := curve.New(o.Curve, o.Dims)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	ns := &Namespace{db: db, id: id, name: name, dims: o.Dims, curve: cv, geo: o.Geo, maxValue: o.MaxValueSize, meta: map[string]mentry{}}
	if ns.maxValue == 0 {
		ns.maxValue = DefaultMaxValueSize
	}
	ns.idx.init(cv, &ns.mu, &db.seals)
	ns.edges.init(o.Dims)
	return ns, nil
}

// Name returns the namespace's name.
func (ns *Namespace) Name() string { return ns.name }

// Dropped reports whether the namespace was dropped (DropNamespace, a
// replicated drop, or a Restore, which drops every namespace first). On a
// handle kept past its drop, writes and transactions fail with
// ErrNoNamespace, and DB.Namespace finds the name's new namespace, if
// one was created since. A handle not dropped is its name's namespace.
func (ns *Namespace) Dropped() bool { return ns.dropped.Load() }

// Dims returns the number of dimensions of its coordinates.
func (ns *Namespace) Dims() int { return ns.dims }

// Geo reports whether the namespace is geographic (NamespaceOptions.Geo).
func (ns *Namespace) Geo() bool { return ns.geo }

// curveByte is the curve byte of the namespace's create record: the
// curve's kind, and curveGeo for a geo namespace.
func (ns *Namespace) curveByte() uint8 {
	b := uint8(ns.curve.Kind())
	if ns.geo {
		b |= curveGeo
	}
	return b
}

// Info describes the namespace.
func (ns *Namespace) Info() NamespaceInfo {
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	return NamespaceInfo{
		Name: ns.name, Dims: ns.dims, Curve: ns.curve.Kind().String(), Geo: ns.geo, MaxValueSize: ns.maxValue,
		Values: len(ns.idx.live), ValueBytes: ns.idx.bytes, Edges: ns.edges.count, LastLSN: ns.lastLSN.Load(),
	}
}

func (ns *Namespace) checkPut(c []int32, v []byte) error {
	if err := ns.checkWrite(c); err != nil {
		return err
	}
	if len(v) > ns.maxValue {
		return fmt.Errorf("%w: %d bytes, namespace %q allows %d (the limit is set when a namespace is created: NS.CREATE ns DIMS d MAXVALUE bytes, or NamespaceOptions.MaxValueSize in Go)", ErrValueTooLarge, len(v), ns.name, ns.maxValue)
	}
	return nil
}

func (ns *Namespace) checkEdge(from, to []int32, label string) error {
	if err := ns.checkWrite(from); err != nil {
		return err
	}
	if err := ns.checkWrite(to); err != nil {
		return err
	}
	return checkName("edge label", label)
}

// checkWrite checks a coordinate a write stores: its dimensions and, on
// a geo namespace, its range. Reads take any coordinate: one out of
// range holds nothing.
func (ns *Namespace) checkWrite(c []int32) error {
	if err := checkCoord(c, ns.dims); err != nil {
		return err
	}
	if ns.geo {
		if err := checkGeo(c); err != nil {
			return fmt.Errorf("%w in namespace %q", err, ns.name)
		}
	}
	return nil
}

func (ns *Namespace) alive() error {
	if ns.dropped.Load() {
		return fmt.Errorf("%w: %q was dropped", ErrNoNamespace, ns.name)
	}
	return ns.db.writable()
}

// apply makes one decoded op part of the namespace's state. The caller
// holds mu (and wmu, outside recovery). Values are copied when copyVals,
// since the op points into a buffer that will be reused.
func (ns *Namespace) apply(o *op, lsn uint64, copyVals bool) {
	v := o.value
	if copyVals && v != nil {
		v = append([]byte(nil), v...)
	}
	switch o.kind {
	case opPut:
		ns.idx.put(o.c, v, lsn)
	case opDel:
		ns.idx.del(o.c, lsn)
	case opLink:
		ns.edges.link(o.c, o.to, o.name, o.weight, v, lsn)
	case opUnlink:
		ns.edges.unlink(o.c, o.to, o.name, lsn)
	case opMetaPut:
		ns.setMeta(o.name, mentry{val: v, lsn: lsn})
	case opMetaDel:
		if _, ok := ns.meta[o.name]; ok {
			ns.setMeta(o.name, mentry{lsn: lsn | tombBit})
			ns.mtombs = append(ns.mtombs, o.name)
		}
	}
	ns.lastLSN.Store(lsn)
}

// setMeta changes one metadata entry. The map is never changed in place:
// writers replace it, so a snapshot takes it by reference. Metadata is
// small and rarely written (programs, telemetry), snapshots are taken on
// every read-only run.
func (ns *Namespace) setMeta(k string, e mentry) {
	m := maps.Clone(ns.meta)
	m[k] = e
	ns.meta = m
}

// commit logs rec, applies its ops and returns its LSN. The caller holds
// wmu.
func (ns *Namespace) commit(rec []byte, deferred bool) (uint64, error) {
	ns.mu.Lock()
	var lsn uint64
	var err error
	if deferred {
		lsn, err = ns.db.log.AppendDeferred(rec)
	} else {
		lsn, err = ns.db.log.Append(rec)
	}
	if err != nil {
		ns.mu.Unlock()
		return 0, ns.db.logFailed(err)
	}
	d := opDecoder{b: rec}
	var o op
	for {
		more, err := d.next(&o)
		if err != nil || !more {
			break // we encoded it; it cannot be bad
		}
		ns.apply(&o, lsn, false)
	}
	ns.mu.Unlock()
	return lsn, nil
}

// Put writes value at c (the value is copied).
//
// Durability: in SyncAlways mode Put returns after the write is on disk;
// in SyncInterval and SyncNone it returns at once, and a crash may lose it
// (see Options.Sync).
func (ns *Namespace) Put(ctx context.Context, c []int32, value []byte) error {
	if err := ns.checkPut(c, value); err != nil {
		return err
	}
	if ns.db.replicator() != nil {
		return ns.Update(ctx, func(tx *Tx) error { return tx.Put(c, value) })
	}
	ns.wmu.Lock()
	if err := ns.alive(); err != nil {
		ns.wmu.Unlock()
		return err
	}
	ns.enc.reset()
	ns.enc.put(ns.id, c, value)
	ns.mu.Lock()
	lsn, err := ns.db.log.Append(ns.enc.b)
	if err != nil {
		ns.mu.Unlock()
		ns.wmu.Unlock()
		return ns.db.logFailed(err)
	}
	ns.idx.put(toPkey(c), append([]byte(nil), value...), lsn)
	ns.lastLSN.Store(lsn)
	ns.mu.Unlock()
	ns.wmu.Unlock()
	return ns.db.waitDurable(ctx, lsn)
}

// Delete removes the value at c and reports whether there was one. It is
// as durable as Put.
func (ns *Namespace) Delete(ctx context.Context, c []int32) (bool, error) {
	var existed bool
	err := ns.Update(ctx, func(tx *Tx) error {
		var err error
		existed, err = tx.Delete(c)
		return err
	})
	return existed, err
}

// Get returns the value at c, or an error wrapping ErrNotFound. The
// returned slice must not be modified.
func (ns *Namespace) Get(ctx context.Context, c []int32) ([]byte, error) {
	v, until, err := ns.GetDeferred(c)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	// Not seeing a write is an observation too: wait for whatever
	// deleted it (or anything else) to be durable.
	if werr := ns.db.waitVisible(ctx, until); werr != nil {
		return nil, werr
	}
	return v, err
}

// Update runs fn in a read-write transaction and commits its writes
// atomically if fn returns nil. Transactions on one namespace run one at a
// time (they are serializable). Update returns after the commit is as
// durable as the sync mode promises; if fn fails, or the commit cannot be
// logged, nothing fn wrote is ever visible.
//
// Whatever fn read may leave with it — in fn's error, in what its closure
// kept (a program's output and log), in a panic — so Update returns (or
// lets the panic go on) only once everything fn could see is durable, on
// the error paths too. If that wait fails (ctx is done, the log failed),
// Update returns the wait's error instead of fn's.
func (ns *Namespace) Update(ctx context.Context, fn func(*Tx) error) error {
	if rp := ns.db.replicator(); rp != nil {
		return ns.updateReplicated(ctx, rp, fn)
	}
	until, committed, err := ns.update(ctx, fn, false)
	if committed {
		// Covers what fn read: until is past tx.lsn.
		return ns.db.waitDurable(ctx, until)
	}
	// Break caught by TestFailedUpdateWaitsForWhatItRead: returning err
	// here without this wait.
	if werr := ns.db.waitVisible(ctx, until); werr != nil {
		return werr
	}
	return err
}

// UpdateDeferred runs fn and commits its writes as Update does, but
// returns without waiting for the commit to be durable. Nothing fn saw or
// wrote (its error included) may leave the caller before DB.Durable(until)
// is true or DB.WaitDurable(ctx, until) returns nil: that is the caller's
// promise, and what lets a server gather many clients' commits behind one
// log sync without a goroutine per client. It does not wait for another
// writer either: if a transaction holds the namespace, it returns ErrBusy
// at once and fn does not run. Under a Replicator it is Update (the commit
// is durable when it returns) and until is 0.
func (ns *Namespace) UpdateDeferred(fn func(*Tx) error) (until uint64, err error) {
	if rp := ns.db.replicator(); rp != nil {
		return 0, ns.updateReplicated(context.Background(), rp, fn)
	}
	if !ns.wmu.TryLock() {
		return 0, ErrBusy
	}
	until, _, err = ns.update(context.Background(), fn, true)
	return until, err
}

// update is Update up to its wait. It returns the LSN that must be durable
// before anything fn saw or wrote may leave — the commit's when it
// committed, else the snapshot's fn read — and whether it committed.
// Deferred is UpdateDeferred's: the caller holds wmu already and makes
// the commit durable itself.
func (ns *Namespace) update(ctx context.Context, fn func(*Tx) error, deferred bool) (until uint64, committed bool, err error) {
	locked := deferred
	if !locked {
		ns.wmu.Lock()
		locked = true
	}
	unlock := func() {
		if locked {
			ns.wmu.Unlock()
			locked = false
		}
	}
	defer unlock()
	if err := ns.alive(); err != nil {
		return 0, false, err
	}
	tx := &Tx{ns: ns, writable: true, lsn: ns.lastLSN.Load()}
	defer func() { tx.done = true }()
	returned := false
	defer func() {
		if !returned {
			// fn panicked: the panic value may hold what it read.
			unlock()
			ns.db.waitVisible(ctx, tx.lsn)
		}
	}()
	ferr := fn(tx)
	returned = true
	if ferr == nil {
		ferr = ctx.Err()
	}
	if ferr == nil && tx.nops > 0 {
		if ferr = ns.alive(); ferr == nil {
			lsn, err := ns.commit(tx.enc.b, deferred)
			if err == nil {
				return lsn, true, nil
			}
			ferr = err
		}
	}
	return tx.lsn, false, ferr
}

// GetDeferred is Get without the wait: the value (or ErrNotFound) must not
// leave the caller before DB.Durable(until), as with UpdateDeferred.
func (ns *Namespace) GetDeferred(c []int32) (v []byte, until uint64, err error) {
	if err := checkCoord(c, ns.dims); err != nil {
		return nil, 0, err
	}
	k := toPkey(c)
	ns.mu.RLock()
	s, ok := ns.idx.live[k]
	last := ns.lastLSN.Load()
	ns.mu.RUnlock()
	if !ok {
		// Not seeing a write is an observation too (see Get).
		return nil, last, ErrNotFound
	}
	return s.val, s.lsn, nil
}

// View runs fn in a read-only transaction on a consistent snapshot of the
// namespace. Views never block writers and writers never block views
// (taking the snapshot holds the namespace lock for a moment). Everything
// fn sees is durable.
func (ns *Namespace) View(ctx context.Context, fn func(*Tx) error) error {
	tx, err := ns.Snapshot(ctx)
	if err != nil {
		return err
	}
	defer tx.Release()
	return fn(tx)
}

// Snapshot returns a read-only transaction on a consistent snapshot. Call
// Release when done with it. View is the managed form.
func (ns *Namespace) Snapshot(ctx context.Context) (*Tx, error) {
	if ns.dropped.Load() {
		return nil, fmt.Errorf("%w: %q was dropped", ErrNoNamespace, ns.name)
	}
	if ns.db.closed.Load() {
		return nil, ErrClosed
	}
	ns.mu.Lock()
	ns.idx.seal()
	s := &snapshot{lsn: ns.lastLSN.Load(), tree: ns.idx.tree.Copy(), view: ns.idx.view(), edges: ns.edges.copy(), meta: ns.meta}
	ns.mu.Unlock()
	if err := ns.db.waitVisible(ctx, s.lsn); err != nil {
		return nil, err
	}
	return &Tx{ns: ns, snap: s, lsn: s.lsn}, nil
}

// Release ends a transaction from Snapshot.
func (tx *Tx) Release() { tx.done = true }

// Region returns the values inside the box [min, max] in curve order from
// a snapshot taken now; limit 0 means all. See Tx.Region.
func (ns *Namespace) Region(ctx context.Context, min, max []int32, limit int) (iter.Seq2[[]int32, []byte], error) {
	return ns.region(ctx, min, max, limit)
}

// Count returns the number of values inside the box [min, max].
func (ns *Namespace) Count(ctx context.Context, min, max []int32) (int, error) {
	return ns.count(ctx, min, max)
}

// Link creates or replaces the edge from -[label]-> to, with a weight (a
// finite number >= 0, else ErrBadWeight) and optional bytes. It is as
// durable as Put.
func (ns *Namespace) Link(ctx context.Context, from, to []int32, label string, weight float64, value []byte) error {
	return ns.Update(ctx, func(tx *Tx) error { return tx.Link(from, to, label, weight, value) })
}

// Unlink removes an edge and reports whether it existed.
func (ns *Namespace) Unlink(ctx context.Context, from, to []int32, label string) (bool, error) {
	var ok bool
	err := ns.Update(ctx, func(tx *Tx) (err error) { ok, err = tx.Unlink(from, to, label); return err })
	return ok, err
}

// Edges returns the edges of c from a snapshot taken now.
func (ns *Namespace) Edges(ctx context.Context, c []int32, dir Direction, label string) ([]Edge, error) {
	var out []Edge
	err := ns.View(ctx, func(tx *Tx) error {
		seq, err := tx.Edges(c, dir, label)
		if err != nil {
			return err
		}
		for e := range seq {
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// Walk runs a built-in walk on a snapshot taken now.
func (ns *Namespace) Walk(ctx context.Context, start []int32, o WalkOptions) ([]Step, error) {
	var out []Step
	err := ns.View(ctx, func(tx *Tx) (err error) { out, err = tx.Walk(ctx, start, o); return err })
	return out, err
}

// WalkSeq runs a built-in walk on a snapshot taken now and yields its
// steps without copying them out; see Tx.WalkSeq.
func (ns *Namespace) WalkSeq(ctx context.Context, start []int32, o WalkOptions) (iter.Seq[Step], error) {
	var out iter.Seq[Step]
	err := ns.View(ctx, func(tx *Tx) (err error) { out, err = tx.WalkSeq(ctx, start, o); return err })
	return out, err
}

// ShortestPath finds the least-weight path on a snapshot taken now (weights
// are non-negative; see Tx.ShortestPath).
func (ns *Namespace) ShortestPath(ctx context.Context, from, to []int32, label string, dir Direction) (Path, bool, error) {
	return ns.ShortestPathWith(ctx, from, to, PathOptions{Label: label, Direction: dir})
}

// ShortestPathWith finds the least-weight path of at most o.MaxHops edges
// on a snapshot taken now; see Tx.ShortestPathWith.
func (ns *Namespace) ShortestPathWith(ctx context.Context, from, to []int32, o PathOptions) (Path, bool, error) {
	var p Path
	var ok bool
	err := ns.View(ctx, func(tx *Tx) (err error) { p, ok, err = tx.ShortestPathWith(ctx, from, to, o); return err })
	return p, ok, err
}
