package engine

import (
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tidwall/btree"
)

// The adjacency is a second view of the live edges, laid out for walks
// and paths: every coordinate that is an end of an edge gets a dense id
// (per namespace, for as long as the store is open), and each id's edges
// in each direction are one small array in the trees' order (label, then
// the other end), holding the other end's id and the weight. A walk reads
// a node's neighbours with a few pointer loads instead of a B-tree seek
// and tracks the nodes it has seen by id.
//
// The arrays live in a three-level table copied on write like the
// trees: a copy (a snapshot, a transaction) shares everything and takes a
// new generation, and whoever writes first after a copy copies the path
// it changes (at most a top, two 256-pointer blocks and one node), so a
// snapshot costs nothing and sees exactly its own edges. A node with more
// than adjMaxRun edges in a direction keeps no array for it: its edges
// are read from the trees, so that linking a hub costs the same as
// before, not a copy of an ever-longer array.
//
// The ids themselves are shared by all copies (nodeIDs): handing one out
// says nothing about edges, and a copy that has no node for an id sees no
// edges there. Ids are never reused while the store is open, and they
// are not stored: recovery builds the adjacency again as it replays.

const (
	adjBits   = 8
	adjFan    = 1 << adjBits
	adjMask   = adjFan - 1
	adjMaxRun = 64
	adjHead   = 4 // words of an edge record before the coordinate
)

// nodeIDs numbers coordinates densely. Safe for concurrent use.
type nodeIDs struct {
	mu  sync.RWMutex
	ids map[pkey]uint32
}

func (t *nodeIDs) lookup(c pkey) (uint32, bool) {
	t.mu.RLock()
	id, ok := t.ids[c]
	t.mu.RUnlock()
	return id, ok
}

func (t *nodeIDs) assign(c pkey) uint32 {
	if id, ok := t.lookup(c); ok {
		return id
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	id, ok := t.ids[c]
	if !ok {
		id = uint32(len(t.ids))
		t.ids[c] = id
	}
	return id
}

// labelIDs numbers edge labels densely, so that an edge record holds a
// number instead of a string (a string is a pointer the collector would
// follow, once an edge). Like nodeIDs it is shared by all copies and
// never forgets a label while the store is open. Safe for concurrent use.
type labelIDs struct {
	mu    sync.RWMutex
	ids   map[string]uint32
	names []string // by id; only ever appended to
}

// noLabel is the id of a label no edge has: it matches no record.
const noLabel = ^uint32(0)

func (t *labelIDs) lookup(s string) uint32 {
	t.mu.RLock()
	id, ok := t.ids[s]
	t.mu.RUnlock()
	if !ok {
		return noLabel
	}
	return id
}

func (t *labelIDs) assign(s string) uint32 {
	if id := t.lookup(s); id != noLabel {
		return id
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	id, ok := t.ids[s]
	if !ok {
		id = uint32(len(t.names))
		t.ids[s] = id
		t.names = append(t.names, s)
	}
	return id
}

// all returns the names by id. The slice is never written below its
// length, so it may be read without the lock.
func (t *labelIDs) all() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.names
}

// adjLabel is a walk's label filter resolved once: any for "", else the
// label's id (noLabel if no edge has ever had it).
type adjLabel struct {
	name string
	id   uint32
	any  bool
}

func (t *adjTable) label(s string) adjLabel {
	if s == "" {
		return adjLabel{any: true}
	}
	return adjLabel{name: s, id: t.labels.lookup(s)}
}

// An edge list is a node's live edges in one direction in the trees'
// order (label, then the other end), as records of adjHead+dims words in
// one slice with no pointers in it: the other end's id, the label's id,
// the weight's bits (low word first) and the other end's coordinate, so
// that a walk reports a neighbour without visiting it.

func recWeight(r []int32) float64 {
	return math.Float64frombits(uint64(uint32(r[2])) | uint64(uint32(r[3]))<<32)
}

func setRecWeight(r []int32, w float64) {
	b := math.Float64bits(w)
	r[2], r[3] = int32(uint32(b)), int32(uint32(b>>32))
}

// anode is one node's edges: e[0] out, e[1] in. gen is the copy that
// made this node and may change its fields in place; own[d] the copy
// that made e[d]'s array, which it may change in place (a node copied to
// change one direction still shares the other's array). big[d] means
// there are more than adjMaxRun edges that way, read from the trees
// (e[d] is then nil).
type anode struct {
	gen uint64
	own [2]uint64
	e   [2][]int32
	big [2]bool
}

type adjLeaf struct {
	gen   uint64
	nodes [adjFan]*anode
}

type adjMid struct {
	gen    uint64
	leaves [adjFan]*adjLeaf
}

// adjTable is one copy of the adjacency. gen is this copy's generation:
// a block, node or top whose generation is gen was made by this copy
// since its last copy() and may be changed in place.
type adjTable struct {
	dims   int
	ids    *nodeIDs
	labels *labelIDs
	gen    uint64
	topGen uint64
	top    []*adjMid
}

var adjGens atomic.Uint64

func (t *adjTable) init(dims int) {
	t.dims = dims
	t.ids = &nodeIDs{ids: map[pkey]uint32{}}
	t.labels = &labelIDs{ids: map[string]uint32{}}
	t.gen = adjGens.Add(1)
	t.top, t.topGen = nil, t.gen
}

// copy returns a copy sharing everything; both copies take a new
// generation, so neither changes what the other sees.
func (t *adjTable) copy() adjTable {
	c := *t
	t.gen = adjGens.Add(1)
	c.gen = adjGens.Add(1)
	return c
}

// node returns the node of id, or nil if this copy has none.
func (t *adjTable) node(id uint32) *anode {
	i := int(id >> (2 * adjBits))
	if i >= len(t.top) {
		return nil
	}
	m := t.top[i]
	if m == nil {
		return nil
	}
	l := m.leaves[(id>>adjBits)&adjMask]
	if l == nil {
		return nil
	}
	return l.nodes[id&adjMask]
}

// mut returns the node of id for changing in place, copying whatever
// this copy shares on the way (but not the node's arrays: see list).
func (t *adjTable) mut(id uint32) *anode {
	i := int(id >> (2 * adjBits))
	if t.topGen != t.gen {
		t.top = append([]*adjMid(nil), t.top...)
		t.topGen = t.gen
	}
	for len(t.top) <= i {
		t.top = append(t.top, nil)
	}
	m := t.top[i]
	switch {
	case m == nil:
		m = &adjMid{gen: t.gen}
		t.top[i] = m
	case m.gen != t.gen:
		m2 := *m
		m2.gen = t.gen
		m = &m2
		t.top[i] = m
	}
	j := (id >> adjBits) & adjMask
	l := m.leaves[j]
	switch {
	case l == nil:
		l = &adjLeaf{gen: t.gen}
		m.leaves[j] = l
	case l.gen != t.gen:
		l2 := *l
		l2.gen = t.gen
		l = &l2
		m.leaves[j] = l
	}
	k := id & adjMask
	n := l.nodes[k]
	switch {
	case n == nil:
		n = &anode{gen: t.gen}
		l.nodes[k] = n
	case n.gen != t.gen:
		n2 := *n
		n2.gen = t.gen
		n = &n2
		l.nodes[k] = n
	}
	return n
}

// find returns where the edge (label, other end b) is or would go in the
// list a, and whether it is there.
func (t *adjTable) find(a []int32, names []string, label string, b pkey) (int, bool) {
	d := t.dims
	s := adjHead + d
	lo, hi := 0, len(a)/s
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		r := a[h*s : h*s+s]
		c := strings.Compare(names[r[1]], label)
		if c == 0 {
			c = compareAxes(r[adjHead:], b[:d])
			if c == 0 {
				return h, true
			}
		}
		if c < 0 {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo, false
}

// compareAxes compares two coordinates axis by axis, as pkeyLess does.
func compareAxes(x, y []int32) int {
	for i := range x {
		if x[i] != y[i] {
			if x[i] < y[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// set records the edge (label, b) with weight w in n's list d.
func (t *adjTable) set(n *anode, d int, lid uint32, label string, b pkey, bid uint32, w float64) {
	if n.big[d] {
		return
	}
	a := n.e[d]
	s := adjHead + t.dims
	i, ok := t.find(a, t.labels.all(), label, b)
	if !ok && len(a)/s >= adjMaxRun {
		n.e[d], n.big[d] = nil, true
		return
	}
	if n.own[d] != t.gen {
		extra := s
		if ok {
			extra = 0
		}
		a = append(make([]int32, 0, len(a)+extra), a...)
		n.own[d] = t.gen
	}
	if !ok {
		a = append(a, make([]int32, s)...)
		copy(a[(i+1)*s:], a[i*s:])
		r := a[i*s : i*s+s]
		r[0], r[1] = int32(bid), int32(lid)
		copy(r[adjHead:], b[:t.dims])
	}
	setRecWeight(a[i*s:i*s+s], w)
	n.e[d] = a
}

// remove forgets the edge (label, b) in n's list d.
func (t *adjTable) remove(n *anode, d int, label string, b pkey) {
	if n.big[d] {
		return
	}
	a := n.e[d]
	s := adjHead + t.dims
	i, ok := t.find(a, t.labels.all(), label, b)
	if !ok {
		return
	}
	if n.own[d] != t.gen {
		a = append(make([]int32, 0, len(a)-s), a[:i*s]...)
		a = append(a, n.e[d][(i+1)*s:]...)
		n.own[d] = t.gen
	} else {
		a = slices.Delete(a, i*s, (i+1)*s)
	}
	n.e[d] = a
}

// link records the live edge from -[label]-> to with weight w.
func (t *adjTable) link(from, to pkey, label string, w float64) {
	fid, tid := t.ids.assign(from), t.ids.assign(to)
	lid := t.labels.assign(label)
	t.set(t.mut(fid), 0, lid, label, to, tid, w)
	t.set(t.mut(tid), 1, lid, label, from, fid, w)
}

// unlink forgets the edge from -[label]-> to.
func (t *adjTable) unlink(from, to pkey, label string) {
	fid, ok1 := t.ids.lookup(from)
	tid, ok2 := t.ids.lookup(to)
	if !ok1 || !ok2 || t.labels.lookup(label) == noLabel {
		return
	}
	t.remove(t.mut(fid), 0, label, to)
	t.remove(t.mut(tid), 1, label, from)
}

// adjNeighbours calls fn with the id, coordinate (dims axes, valid only
// during the call) and weight of every node one hop from id (coordinate
// c) along live edges with the label, in the trees' order: out edges,
// then in edges for Both. It reads the trees for a direction whose array
// is not kept.
func (g *edgeTrees) adjNeighbours(id uint32, c pkey, lab adjLabel, dir Direction, fn func(m uint32, mc []int32, w float64) bool) {
	n := g.adj.node(id)
	if n == nil {
		return
	}
	if dir == Out || dir == Both {
		if !g.adjList(n, 0, g.out, c, lab, fn) {
			return
		}
	}
	if dir == In || dir == Both {
		g.adjList(n, 1, g.in, c, lab, fn)
	}
}

func (g *edgeTrees) adjList(n *anode, d int, t *btree.BTreeG[eitem], c pkey, lab adjLabel, fn func(m uint32, mc []int32, w float64) bool) bool {
	dims := g.adj.dims
	if n.big[d] {
		ok := true
		scanEdges(t, c, lab.name, func(e *eitem) bool {
			id, _ := g.adj.ids.lookup(e.b)
			ok = fn(id, e.b[:dims], e.weight)
			return ok
		})
		return ok
	}
	a := n.e[d]
	s := adjHead + dims
	for i := 0; i+s <= len(a); i += s {
		r := a[i : i+s : i+s]
		if !lab.any && uint32(r[1]) != lab.id {
			continue
		}
		if !fn(uint32(r[0]), r[adjHead:], recWeight(r)) {
			return false
		}
	}
	return true
}
