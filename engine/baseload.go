package engine

import (
	"slices"
)

// Opening a store reads its base checkpoint into empty namespaces. Applied
// one op at a time, as the log is, every value went through the hash map
// as it grew and every edge through two B-tree descents (the in tree's in
// random order) and the adjacency's sorted insert: on 1,000,000 points and
// 800,000 edges that was most of an 8-20 s open. A base checkpoint is
// written in order (values by curve key, edges by (from, label, to)), and
// nothing else is in the namespaces while it is read, so baseLoad collects
// the values and edges and builds each namespace once the file is read:
// the map at its final size, the trees loaded in order, the in tree from
// the edges sorted once. (The adjacency is still linked edge by edge, in
// the out tree's order.)
//
// The result is exactly what applying the same ops one by one gives, for
// any order of ops (later ops win, as in a replay): the collected values
// go through the pending list that seal sorts and dedups, and the edges
// are sorted stably and dedupped keeping the last. An op the bulk path does
// not take (a delete or unlink, which a base never holds) first builds
// its namespace from what was collected, and from then on that namespace
// is applied one op at a time.

// baseLoad collects the values and edges of a base checkpoint.
type baseLoad struct {
	db   *DB
	lsn  uint64
	ns   map[uint64]*nsLoad
	vals valArena
}

// nsLoad is what baseLoad collected for one namespace.
type nsLoad struct {
	ns    *Namespace
	edges [][]eitem // links in the order read, in chunks (growing one slice copied it over and over)
	nedge int
	done  bool // built: later ops are applied one by one
}

func newBaseLoad(db *DB, lsn uint64) *baseLoad {
	return &baseLoad{db: db, lsn: lsn, ns: map[uint64]*nsLoad{}}
}

// take collects o if the bulk path can, and reports whether it did. An op
// it does not take, the caller applies (applyRecovered), which also
// reports ops on unknown namespaces or of the wrong dimensions.
func (b *baseLoad) take(o *op) bool {
	if o.kind == opNSDrop {
		if l := b.ns[o.ns]; l != nil {
			b.build(l)
		}
		return false
	}
	switch o.kind {
	case opPut, opDel, opLink, opUnlink:
	default:
		return false
	}
	ns, ok := b.db.byID[o.ns]
	if !ok || o.dims != ns.dims {
		return false
	}
	l := b.ns[o.ns]
	if l == nil {
		l = &nsLoad{ns: ns}
		b.ns[o.ns] = l
	}
	if l.done || l.ns != ns {
		return false
	}
	switch o.kind {
	case opPut:
		// The map is filled in build; the pending list is what seal
		// orders, as it does for writes.
		ns.idx.pending.add(vitem{c: o.c, val: b.vals.clone(o.value), lsn: b.lsn})
	case opLink:
		v := clone(o.value)
		if len(v) == 0 {
			v = nil // as edgeTrees.link stores it
		}
		if l.nedge%pendingChunk == 0 {
			l.edges = append(l.edges, make([]eitem, 0, pendingChunk))
		}
		c := &l.edges[len(l.edges)-1]
		*c = append(*c, eitem{a: o.c, b: o.to, label: o.name, weight: o.weight, val: v, lsn: b.lsn})
		l.nedge++
	default:
		b.build(l)
		return false
	}
	ns.lastLSN.Store(b.lsn)
	return true
}

// clone copies a value out of the record buffer, which is reused.
func clone(v []byte) []byte {
	if v == nil {
		return nil
	}
	return append([]byte(nil), v...)
}

// valArena copies a base's point values into shared chunks, one after
// another in the order the base holds them, which is curve order: a
// region scan then reads the values of neighbouring points from
// neighbouring memory, as bbolt reads a leaf page, where one allocation a
// value put them wherever the heap had room (after a store was closed and
// another opened, in the holes its values left). Each value is capped, so
// appending to one cannot write over the next. A chunk stays allocated
// while any of its values is live: a value overwritten after the open
// keeps its bytes until its chunk's others go too, at most the base's
// size in all.
type valArena struct {
	buf []byte
}

const (
	valChunk   = 1 << 20
	valInArena = 4 << 10 // larger values get an allocation of their own
)

func (a *valArena) clone(v []byte) []byte {
	if len(v) == 0 || len(v) > valInArena {
		return clone(v) // nil for empty, as clone gives
	}
	if cap(a.buf)-len(a.buf) < len(v) {
		a.buf = make([]byte, 0, valChunk)
	}
	n := len(a.buf)
	a.buf = append(a.buf, v...)
	return a.buf[n:len(a.buf):len(a.buf)]
}

// finish builds every namespace not built yet.
func (b *baseLoad) finish() {
	for _, l := range b.ns {
		b.build(l)
	}
}

// build makes l's namespace hold what was collected for it.
func (b *baseLoad) build(l *nsLoad) {
	if l.done {
		return
	}
	l.done = true
	ns := l.ns
	x := &ns.idx
	live := make(map[pkey]slot, x.pending.n)
	for _, c := range x.pending.chunks {
		for i := range c {
			it := &c[i]
			if old, ok := live[it.c]; ok {
				x.bytes -= int64(len(old.val))
			}
			live[it.c] = slot{val: it.val, lsn: it.lsn}
			x.bytes += int64(len(it.val))
		}
	}
	x.live = live
	// Ordering the values now rather than at the first ordered read: a
	// store is opened to be read.
	x.seal()

	if l.nedge == 0 {
		return
	}
	es := make([]eitem, 0, l.nedge)
	for _, c := range l.edges {
		es = append(es, c...)
	}
	l.edges = nil
	less := func(x, y eitem) int { return eitemCompare(&x, &y) }
	if !slices.IsSortedFunc(es, less) {
		slices.SortStableFunc(es, less)
	}
	// Keep the last link of each edge, as replaying them would.
	w := 0
	for i := range es {
		if i+1 < len(es) && less(es[i], es[i+1]) == 0 {
			continue
		}
		es[w] = es[i]
		w++
	}
	es = es[:w]
	g := &ns.edges
	for _, e := range es {
		g.out.Load(e)
	}
	g.count = len(es)
	for _, e := range es {
		g.adj.link(e.a, e.b, e.label, e.weight)
	}
	// The same edges seen from their other end, for the in tree.
	for i := range es {
		es[i].a, es[i].b = es[i].b, es[i].a
	}
	slices.SortFunc(es, less)
	for _, e := range es {
		g.in.Load(e)
	}
}
