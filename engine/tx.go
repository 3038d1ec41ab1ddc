package engine

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/tidwall/btree"
)

// Tx is a transaction on one namespace. Read-write transactions come from
// Namespace.Update, read-only ones from Namespace.View. A Tx is valid only
// inside the function it was passed to, and is not safe for concurrent use.
//
// A read-write Tx sees its own writes. Its writes become visible to others,
// all at once, when Update's function returns nil; Update returns only
// after they are as durable as the sync mode promises. If the function
// returns an error or panics, nothing it wrote is ever visible.
type Tx struct {
	ns       *Namespace
	writable bool
	done     bool
	lsn      uint64 // the namespace's last LSN when the tx began
	repl     bool   // an Update under a Replicator (replicate.go)
	synced   bool   // repl: the writes proposed before it were applied

	// read-write state
	enc     opEncoder
	nops    int
	writes  map[pkey]wval        // this tx's values, built from enc.b only when a read needs it
	indexed int                  // bytes of enc.b already in writes
	vtree   *btree.BTreeG[vitem] // sealed copy plus this tx's writes, made on first region read
	meta    map[string]wval

	// read-only state
	snap *snapshot

	edges *edgeTrees // copy (plus this tx's edge writes), made on first use
}

type wval struct {
	val  []byte
	tomb bool
}

// snapshot is a namespace frozen at one LSN.
type snapshot struct {
	lsn   uint64
	tree  *btree.BTreeG[vitem]
	view  readView // what region scans read
	edges edgeTrees
	meta  map[string]mentry
}

type mentry struct {
	val []byte
	lsn uint64 // with tombBit
}

// Namespace returns the namespace the transaction runs in.
func (tx *Tx) Namespace() *Namespace { return tx.ns }

// Writable reports whether the transaction may write.
func (tx *Tx) Writable() bool { return tx.writable }

func (tx *Tx) check(write bool) error {
	if tx.done {
		return ErrTxDone
	}
	if write && !tx.writable {
		return fmt.Errorf("%w: transaction", ErrReadOnly)
	}
	if !write {
		tx.syncReads()
	}
	return nil
}

// Get returns the value at c, or ErrNotFound. The returned slice must not
// be modified; it stays valid after the transaction.
func (tx *Tx) Get(c []int32) ([]byte, error) {
	if err := tx.check(false); err != nil {
		return nil, err
	}
	ns := tx.ns
	if err := checkCoord(c, ns.dims); err != nil {
		return nil, err
	}
	k := toPkey(c)
	if tx.writable {
		tx.writeSet()
		if w, ok := tx.writes[k]; ok {
			if w.tomb {
				return nil, ErrNotFound
			}
			return w.val, nil
		}
		if tx.repl {
			// Not the writer lock's holder: ApplyReplicated may be
			// committing another node's record (this one is not the
			// leader, or no longer).
			ns.mu.RLock()
			defer ns.mu.RUnlock()
		}
		// Holding the writer lock: nobody else changes live.
		if s, ok := ns.idx.live[k]; ok {
			return s.val, nil
		}
		return nil, ErrNotFound
	}
	// Read-only: if nothing was written since the snapshot, the hash map
	// answers for it in one probe.
	ns.mu.RLock()
	if ns.lastLSN.Load() == tx.snap.lsn {
		s, ok := ns.idx.live[k]
		ns.mu.RUnlock()
		if !ok {
			return nil, ErrNotFound
		}
		return s.val, nil
	}
	ns.mu.RUnlock()
	v, _, ok := treeGet(tx.snap.tree, ns.curve, c)
	if !ok {
		return nil, ErrNotFound
	}
	return v, nil
}

// Put writes value at c. The value is copied.
func (tx *Tx) Put(c []int32, value []byte) error {
	if err := tx.check(true); err != nil {
		return err
	}
	ns := tx.ns
	if err := ns.checkPut(c, value); err != nil {
		return err
	}
	// Blind writes cost only their encoding: the write set that reads
	// need is built from the encoded ops when a read asks (writeSet), so a
	// bulk load in one transaction does not pay a map insert twice.
	tx.enc.put(ns.id, c, value)
	tx.nops++
	tx.vtree = nil
	return nil
}

// writeSet brings tx.writes up to date with the ops encoded since it was
// last built. Values point into the encoded record, which is never
// rewritten, only appended to.
func (tx *Tx) writeSet() {
	if tx.indexed == len(tx.enc.b) {
		return
	}
	if tx.writes == nil {
		tx.writes = make(map[pkey]wval)
	}
	tx.ownOps(tx.indexed, func(o *op) {
		switch o.kind {
		case opPut:
			tx.writes[o.c] = wval{val: o.value}
		case opDel:
			tx.writes[o.c] = wval{tomb: true}
		}
	})
	tx.indexed = len(tx.enc.b)
}

// ownOps calls fn for each op the transaction has encoded from offset
// off of its record on.
func (tx *Tx) ownOps(off int, fn func(o *op)) {
	d := opDecoder{b: tx.enc.b, off: off}
	var o op
	for {
		more, err := d.next(&o)
		if err != nil || !more {
			return // we encoded it ourselves
		}
		fn(&o)
	}
}

// Delete removes the value at c and reports whether there was one.
func (tx *Tx) Delete(c []int32) (bool, error) {
	if err := tx.check(true); err != nil {
		return false, err
	}
	if _, err := tx.Get(c); err != nil {
		if err == ErrNotFound {
			return false, nil
		}
		return false, err
	}
	tx.enc.del(tx.ns.id, c)
	tx.nops++
	tx.vtree = nil
	return true, nil
}

// tree returns the ordered view the transaction reads regions from.
func (tx *Tx) tree() *btree.BTreeG[vitem] {
	if !tx.writable {
		return tx.snap.tree
	}
	if tx.vtree == nil {
		ns := tx.ns
		ns.mu.Lock()
		ns.idx.seal()
		tx.vtree = ns.idx.tree.Copy()
		ns.mu.Unlock()
		tx.writeSet()
		for k, w := range tx.writes {
			it := vitem{key: ns.curve.Encode(k[:ns.dims]), c: k, val: w.val}
			if w.tomb {
				it.lsn = tombBit
			}
			tx.vtree.Set(it)
		}
	}
	return tx.vtree
}

// Region iterates the values inside the box [min, max] (inclusive on every
// axis) in curve order, at most limit of them (0 = all). The coordinate
// slice is reused between steps; copy it to keep it.
func (tx *Tx) Region(min, max []int32, limit int) (iter.Seq2[[]int32, []byte], error) {
	if err := tx.check(false); err != nil {
		return nil, err
	}
	ns := tx.ns
	if err := checkBox(min, max, ns.dims); err != nil {
		return nil, err
	}
	if !tx.writable {
		return regionSeq(ns, tx.snap.view, min, max, limit), nil
	}
	min, max = slices.Clone(min), slices.Clone(max)
	t := tx.tree()
	return func(yield func([]int32, []byte) bool) {
		buf := make([]int32, ns.dims)
		n := 0
		scanTree(t, ns.curve, min, max, func(c *pkey, val []byte) bool {
			copy(buf, c[:ns.dims])
			n++
			return yield(buf, val) && (limit <= 0 || n < limit)
		})
	}, nil
}

// Count returns the number of values inside the box [min, max].
func (tx *Tx) Count(min, max []int32) (int, error) {
	if err := tx.check(false); err != nil {
		return 0, err
	}
	if err := checkBox(min, max, tx.ns.dims); err != nil {
		return 0, err
	}
	n := 0
	if !tx.writable {
		scanView(tx.snap.view, tx.ns.curve, min, max, nil, func([]int32, []byte) bool { n++; return true })
		return n, nil
	}
	scanTree(tx.tree(), tx.ns.curve, min, max, func(*pkey, []byte) bool { n++; return true })
	return n, nil
}

func (tx *Tx) edgeTrees() *edgeTrees {
	if tx.edges == nil {
		if !tx.writable {
			tx.edges = &tx.snap.edges
		} else {
			ns := tx.ns
			ns.mu.Lock()
			g := ns.edges.copy()
			ns.mu.Unlock()
			// The copy is made when first read, so that a transaction
			// that only links does not pay for it (nor, under a
			// Replicator, wait for its reads): its own edge writes so
			// far are replayed onto it from its record.
			tx.ownOps(0, func(o *op) {
				switch o.kind {
				case opLink:
					g.link(o.c, o.to, o.name, o.weight, o.value, 0)
				case opUnlink:
					g.unlink(o.c, o.to, o.name, 0)
				}
			})
			tx.edges = &g
		}
	}
	return tx.edges
}

// Link creates or replaces the edge from -[label]-> to. The weight must
// be a finite number >= 0 (ErrBadWeight otherwise): it is what
// ShortestPath adds up.
func (tx *Tx) Link(from, to []int32, label string, weight float64, value []byte) error {
	if err := tx.check(true); err != nil {
		return err
	}
	ns := tx.ns
	if err := ns.checkEdge(from, to, label); err != nil {
		return err
	}
	if err := checkWeight(weight); err != nil {
		return err
	}
	if len(value) > ns.maxValue {
		return fmt.Errorf("%w: edge value of %d bytes, namespace %q allows %d", ErrValueTooLarge, len(value), ns.name, ns.maxValue)
	}
	v := append([]byte(nil), value...)
	tx.enc.link(ns.id, from, to, label, weight, v)
	tx.nops++
	if tx.edges != nil {
		tx.edges.link(toPkey(from), toPkey(to), label, weight, v, 0)
	}
	return nil
}

// Unlink removes the edge from -[label]-> to and reports whether it existed.
func (tx *Tx) Unlink(from, to []int32, label string) (bool, error) {
	if err := tx.check(true); err != nil {
		return false, err
	}
	ns := tx.ns
	if err := ns.checkEdge(from, to, label); err != nil {
		return false, err
	}
	tx.syncReads() // whether the edge exists is a read
	if !tx.edgeTrees().unlink(toPkey(from), toPkey(to), label, 0) {
		return false, nil
	}
	tx.enc.unlink(ns.id, from, to, label)
	tx.nops++
	return true, nil
}

// Edges iterates the edges of c in direction dir whose label is label (""
// = any). An In edge is reported as stored: From is the other end, To is c.
func (tx *Tx) Edges(c []int32, dir Direction, label string) (iter.Seq[Edge], error) {
	if err := tx.check(false); err != nil {
		return nil, err
	}
	ns := tx.ns
	if err := checkCoord(c, ns.dims); err != nil {
		return nil, err
	}
	if err := checkLabel(label); err != nil {
		return nil, err
	}
	g := tx.edgeTrees()
	k := toPkey(c)
	dims := ns.dims
	return func(yield func(Edge) bool) {
		ok := true
		if dir == Out || dir == Both {
			scanEdges(g.out, k, label, func(e *eitem) bool {
				ok = yield(Edge{From: slices.Clone(e.a[:dims]), To: slices.Clone(e.b[:dims]), Label: e.label, Weight: e.weight, Value: e.val})
				return ok
			})
		}
		if ok && (dir == In || dir == Both) {
			scanEdges(g.in, k, label, func(e *eitem) bool {
				return yield(Edge{From: slices.Clone(e.b[:dims]), To: slices.Clone(e.a[:dims]), Label: e.label, Weight: e.weight, Value: e.val})
			})
		}
	}, nil
}

// Meta returns the namespace metadata value under key. Metadata is a small
// key-value map beside the coordinates, written and made durable like any
// other write; the program registry keeps programs in it.
func (tx *Tx) Meta(key string) ([]byte, bool) {
	if tx.done {
		return nil, false
	}
	if tx.writable {
		if w, ok := tx.meta[key]; ok {
			return w.val, !w.tomb
		}
		tx.syncReads()
		tx.ns.mu.RLock()
		m, ok := tx.ns.meta[key]
		tx.ns.mu.RUnlock()
		if !ok || m.lsn&tombBit != 0 {
			return nil, false
		}
		return m.val, true
	}
	m, ok := tx.snap.meta[key]
	if !ok || m.lsn&tombBit != 0 {
		return nil, false
	}
	return m.val, true
}

// MetaKeys returns the metadata keys with the prefix, sorted.
func (tx *Tx) MetaKeys(prefix string) []string {
	if tx.done {
		return nil
	}
	var src map[string]mentry
	if tx.writable {
		tx.syncReads()
		tx.ns.mu.RLock()
		src = tx.ns.meta // replaced, never changed in place (setMeta)
		tx.ns.mu.RUnlock()
	} else {
		src = tx.snap.meta
	}
	set := map[string]bool{}
	for k, m := range src {
		if strings.HasPrefix(k, prefix) && m.lsn&tombBit == 0 {
			set[k] = true
		}
	}
	for k, w := range tx.meta {
		if strings.HasPrefix(k, prefix) {
			set[k] = !w.tomb
		}
	}
	var keys []string
	for k, ok := range set {
		if ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// SetMeta writes a metadata value.
func (tx *Tx) SetMeta(key string, value []byte) error {
	if err := tx.check(true); err != nil {
		return err
	}
	if err := checkName("meta key", key); err != nil {
		return err
	}
	v := append([]byte(nil), value...)
	tx.enc.metaPut(tx.ns.id, key, v)
	tx.nops++
	if tx.meta == nil {
		tx.meta = map[string]wval{}
	}
	tx.meta[key] = wval{val: v}
	return nil
}

// DeleteMeta removes a metadata value and reports whether it existed.
func (tx *Tx) DeleteMeta(key string) (bool, error) {
	if err := tx.check(true); err != nil {
		return false, err
	}
	if _, ok := tx.Meta(key); !ok {
		return false, nil
	}
	tx.enc.metaDel(tx.ns.id, key)
	tx.nops++
	if tx.meta == nil {
		tx.meta = map[string]wval{}
	}
	tx.meta[key] = wval{tomb: true}
	return true, nil
}

// Walk runs a built-in BFS or DFS from start; see WalkOptions.
func (tx *Tx) Walk(ctx context.Context, start []int32, o WalkOptions) ([]Step, error) {
	if err := tx.walkCheck(start, o); err != nil {
		return nil, err
	}
	return walk(ctx, tx.edgeTrees(), tx.ns.dims, toPkey(start), o)
}

// walkCheck is what Walk and WalkSeq refuse before walking.
func (tx *Tx) walkCheck(start []int32, o WalkOptions) error {
	if err := tx.check(false); err != nil {
		return err
	}
	if err := checkCoord(start, tx.ns.dims); err != nil {
		return err
	}
	return checkLabel(o.Label)
}

// WalkSeq is Walk without copying the steps out: it walks now (so the
// error is the walk's) and the iterator yields the steps from the walk's
// own buffers, allocating nothing. Range over it once; a Step's slices
// are valid until the range ends, so copy what you keep.
func (tx *Tx) WalkSeq(ctx context.Context, start []int32, o WalkOptions) (iter.Seq[Step], error) {
	if err := tx.walkCheck(start, o); err != nil {
		return nil, err
	}
	return walkSeq(ctx, tx.edgeTrees(), tx.ns.dims, toPkey(start), o)
}

// ShortestPath returns the least-weight path from one coordinate to another
// over edges with the label ("" = any) in the direction; ok is false when
// there is none. It is ShortestPathWith with no bound on the edges.
func (tx *Tx) ShortestPath(ctx context.Context, from, to []int32, label string, dir Direction) (Path, bool, error) {
	return tx.ShortestPathWith(ctx, from, to, PathOptions{Label: label, Direction: dir})
}

// ShortestPathWith returns the least-weight path from one coordinate to
// another among the paths over edges with o.Label in o.Direction that
// have at most o.MaxHops edges (0 = any number); ok is false when there
// is none. From to itself the path is that one coordinate, weight 0.
//
// A bound of n-1 or more on n nodes changes nothing, since the best path
// (under the tie rule below) visits no node twice. A tighter bound may
// answer a heavier path than no bound, with fewer edges; never one with
// more.
//
// # Ties
//
// Among paths of equal weight it returns the one with the fewest edges;
// among those, the one whose coordinate before to is least (compared axis
// by axis), then the one before that, and so on back to from. The
// reported weight is the float64 sum taken from from outwards; paths
// whose weights differ only in how float64 rounds a sum may be ordered
// either way.
//
// # Errors
//
// Weights are non-negative, which Dijkstra's algorithm (and the
// meet-in-the-middle search a short bound uses instead) needs: Link
// refuses a negative, NaN or infinite weight with ErrBadWeight. An edge
// with a negative weight left by an older cube makes it fail with
// ErrBadWeight, naming the edge, rather than answer wrongly. A negative
// MaxHops is ErrBadOptions.
func (tx *Tx) ShortestPathWith(ctx context.Context, from, to []int32, o PathOptions) (Path, bool, error) {
	if err := tx.check(false); err != nil {
		return Path{}, false, err
	}
	ns := tx.ns
	if err := checkCoord(from, ns.dims); err != nil {
		return Path{}, false, err
	}
	if err := checkCoord(to, ns.dims); err != nil {
		return Path{}, false, err
	}
	if err := checkLabel(o.Label); err != nil {
		return Path{}, false, err
	}
	if o.MaxHops < 0 {
		return Path{}, false, fmt.Errorf("%w: MaxHops %d (must be >= 0; 0 = no bound)", ErrBadOptions, o.MaxHops)
	}
	return shortestPath(ctx, tx.edgeTrees(), ns.dims, toPkey(from), toPkey(to), o)
}
