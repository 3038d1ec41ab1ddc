package engine

import (
	"cmp"
	"math"
	"strings"

	"github.com/tidwall/btree"
)

// Edges live in two copy-on-write B-trees: out ordered by (from, label, to)
// and in ordered by (to, label, from). Both hold the weight and value, so
// either direction reads without a second lookup. Like values, deleted
// edges stay as tombstones until a checkpoint covers them.

// eitem is one edge as seen from a: a -[label]-> b in the out tree, or
// b -[label]-> a in the in tree.
type eitem struct {
	a, b   pkey
	label  string
	weight float64
	val    []byte
	lsn    uint64 // with tombBit for a tombstone
}

func (e *eitem) tomb() bool  { return e.lsn&tombBit != 0 }
func (e *eitem) seq() uint64 { return e.lsn &^ tombBit }

func eitemLess(x, y eitem) bool {
	for i := range x.a {
		if x.a[i] != y.a[i] {
			return x.a[i] < y.a[i]
		}
	}
	if c := strings.Compare(x.label, y.label); c != 0 {
		return c < 0
	}
	for i := range x.b {
		if x.b[i] != y.b[i] {
			return x.b[i] < y.b[i]
		}
	}
	return false
}

// eitemCompare is eitemLess as a three-way comparison, for sorting.
func eitemCompare(x, y *eitem) int {
	for i := range x.a {
		if x.a[i] != y.a[i] {
			return cmp.Compare(x.a[i], y.a[i])
		}
	}
	if c := strings.Compare(x.label, y.label); c != 0 {
		return c
	}
	for i := range x.b {
		if x.b[i] != y.b[i] {
			return cmp.Compare(x.b[i], y.b[i])
		}
	}
	return 0
}

type edgeTrees struct {
	out, in *btree.BTreeG[eitem]
	tombs   []eitem // keys (a, label, b) of out-tree tombstones
	count   int     // live edges
	adj     adjTable
}

func newEdgeTree() *btree.BTreeG[eitem] {
	return btree.NewBTreeGOptions(eitemLess, btree.Options{NoLocks: true, Degree: 16})
}

func (g *edgeTrees) init(dims int) {
	g.out = newEdgeTree()
	g.in = newEdgeTree()
	g.adj.init(dims)
}

func (g *edgeTrees) copy() edgeTrees {
	return edgeTrees{out: g.out.Copy(), in: g.in.Copy(), count: g.count, adj: g.adj.copy()}
}

func (g *edgeTrees) link(from, to pkey, label string, w float64, v []byte, lsn uint64) {
	// An edge stores no value and an empty one the same way (a zero
	// length in the log and in checkpoints); reading it back is nil either
	// way, so an edge without a value reads as "no value" (RESP null, JS
	// null) both before a restart and after one replays it.
	if len(v) == 0 {
		v = nil
	}
	e := eitem{a: from, b: to, label: label, weight: w, val: v, lsn: lsn}
	if old, ok := g.out.Set(e); !ok || old.tomb() {
		g.count++
	}
	e.a, e.b = to, from
	g.in.Set(e)
	g.adj.link(from, to, label, w)
}

func (g *edgeTrees) unlink(from, to pkey, label string, lsn uint64) bool {
	k := eitem{a: from, b: to, label: label}
	old, ok := g.out.Get(k)
	if !ok || old.tomb() {
		return false
	}
	k.lsn = lsn | tombBit
	g.out.Set(k)
	g.tombs = append(g.tombs, k)
	k.a, k.b = to, from
	g.in.Set(k)
	g.adj.unlink(from, to, label)
	g.count--
	return true
}

func (g *edgeTrees) purgeTombs(lsn uint64) {
	keep := g.tombs[:0]
	for _, k := range g.tombs {
		e, ok := g.out.Get(k)
		switch {
		case !ok || !e.tomb():
		case e.seq() <= lsn:
			g.out.Delete(k)
			k.a, k.b = k.b, k.a
			g.in.Delete(k)
		default:
			keep = append(keep, k)
		}
	}
	g.tombs = keep
}

var minPkey = func() (k pkey) {
	for i := range k {
		k[i] = math.MinInt32
	}
	return k
}()

// scanEdges calls fn for every live edge of t whose a is c, with the label
// when label != "", until fn returns false. fn sees the edge as stored:
// e.a is c. fn must not keep e: it is one variable, reused for every
// edge, so that a scan allocates it once rather than once an edge.
func scanEdges(t *btree.BTreeG[eitem], c pkey, label string, fn func(*eitem) bool) {
	iter := t.Iter()
	defer iter.Release()
	if !iter.Seek(eitem{a: c, label: label, b: minPkey}) {
		return
	}
	var e eitem
	for {
		e = iter.Item()
		if e.a != c || (label != "" && e.label != label) {
			return
		}
		if !e.tomb() && !fn(&e) {
			return
		}
		if !iter.Next() {
			return
		}
	}
}
