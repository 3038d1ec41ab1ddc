package engine

import (
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

// aedge is one edge in an adjacency array: its label, its weight and the
// other end.
type aedge struct {
	label  string
	weight float64
	to     uint32
}

// adjList is a node's live edges in one direction in the trees' order,
// with the other ends' coordinates in coords (dims axes an edge), so that
// a walk reports a neighbour without visiting it. big means there are
// more than adjMaxRun and they are read from the trees (edges and coords
// are then nil).
type adjList struct {
	edges  []aedge
	coords []int32
	big    bool
}

type anode struct {
	c       pkey
	gen     uint64
	out, in adjList
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
	gen    uint64
	topGen uint64
	top    []*adjMid
}

var adjGens atomic.Uint64

func (t *adjTable) init(dims int) {
	t.dims = dims
	t.ids = &nodeIDs{ids: map[pkey]uint32{}}
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

// mut returns the node of id (coordinate c) for changing in place,
// copying whatever this copy shares on the way.
func (t *adjTable) mut(id uint32, c pkey) *anode {
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
		n = &anode{c: c, gen: t.gen}
		l.nodes[k] = n
	case n.gen != t.gen:
		n = &anode{c: n.c, gen: t.gen, out: n.out.clone(t.dims), in: n.in.clone(t.dims)}
		l.nodes[k] = n
	}
	return n
}

func (a adjList) clone(dims int) adjList {
	if a.edges != nil {
		a.edges = append(make([]aedge, 0, len(a.edges)+1), a.edges...)
		a.coords = append(make([]int32, 0, len(a.coords)+dims), a.coords...)
	}
	return a
}

// find returns where the edge (label, other end b) is or would go in a,
// and whether it is there.
func (t *adjTable) find(a *adjList, label string, b pkey) (int, bool) {
	d := t.dims
	lo, hi := 0, len(a.edges)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		c := strings.Compare(a.edges[h].label, label)
		if c == 0 {
			c = compareAxes(a.coords[h*d:h*d+d], b[:d])
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

func (t *adjTable) set(a *adjList, label string, b pkey, bid uint32, w float64) {
	if a.big {
		return
	}
	i, ok := t.find(a, label, b)
	if ok {
		a.edges[i].weight = w
		return
	}
	if len(a.edges) >= adjMaxRun {
		*a = adjList{big: true}
		return
	}
	d := t.dims
	a.edges = append(a.edges, aedge{})
	copy(a.edges[i+1:], a.edges[i:])
	a.edges[i] = aedge{label: label, weight: w, to: bid}
	a.coords = append(a.coords, b[:d]...)
	copy(a.coords[(i+1)*d:], a.coords[i*d:])
	copy(a.coords[i*d:], b[:d])
}

func (t *adjTable) remove(a *adjList, label string, b pkey) {
	if a.big {
		return
	}
	if i, ok := t.find(a, label, b); ok {
		d := t.dims
		a.edges = append(a.edges[:i], a.edges[i+1:]...)
		a.coords = append(a.coords[:i*d], a.coords[(i+1)*d:]...)
	}
}

// link records the live edge from -[label]-> to with weight w.
func (t *adjTable) link(from, to pkey, label string, w float64) {
	fid, tid := t.ids.assign(from), t.ids.assign(to)
	t.set(&t.mut(fid, from).out, label, to, tid, w)
	t.set(&t.mut(tid, to).in, label, from, fid, w)
}

// unlink forgets the edge from -[label]-> to.
func (t *adjTable) unlink(from, to pkey, label string) {
	fid, ok1 := t.ids.lookup(from)
	tid, ok2 := t.ids.lookup(to)
	if !ok1 || !ok2 {
		return
	}
	t.remove(&t.mut(fid, from).out, label, to)
	t.remove(&t.mut(tid, to).in, label, from)
}

// adjNeighbours calls fn with the id, coordinate (dims axes, valid only
// during the call) and weight of every node one hop from id (coordinate
// c) along live edges with the label ("" = any), in the trees' order: out
// edges, then in edges for Both. It reads the trees for a direction whose
// array is not kept.
func (g *edgeTrees) adjNeighbours(id uint32, c pkey, label string, dir Direction, fn func(m uint32, mc []int32, w float64) bool) {
	n := g.adj.node(id)
	if n == nil {
		return
	}
	if dir == Out || dir == Both {
		if !g.adjList(&n.out, g.out, c, label, fn) {
			return
		}
	}
	if dir == In || dir == Both {
		g.adjList(&n.in, g.in, c, label, fn)
	}
}

func (g *edgeTrees) adjList(a *adjList, t *btree.BTreeG[eitem], c pkey, label string, fn func(m uint32, mc []int32, w float64) bool) bool {
	d := g.adj.dims
	if a.big {
		ok := true
		scanEdges(t, c, label, func(e *eitem) bool {
			id, _ := g.adj.ids.lookup(e.b)
			ok = fn(id, e.b[:d], e.weight)
			return ok
		})
		return ok
	}
	for i := range a.edges {
		e := &a.edges[i]
		if label != "" && e.label != label {
			continue
		}
		if !fn(e.to, a.coords[i*d:i*d+d:i*d+d], e.weight) {
			return false
		}
	}
	return true
}

// idSet is a set of node ids: open addressing over id+1 (0 is empty),
// probing from a multiplicative hash's top bits. used lists the slots
// filled, so that reset costs what was added, not the table's size.
type idSet struct {
	slots []uint32
	used  []uint32
	shift uint
	n     int
}

func (s *idSet) reset() {
	for _, i := range s.used {
		s.slots[i] = 0
	}
	s.used, s.n = s.used[:0], 0
}

func newIDSet(size int) idSet {
	n, shift := 64, uint(32-6)
	for n < 2*size {
		n, shift = 2*n, shift-1
	}
	return idSet{slots: make([]uint32, n), shift: shift}
}

// add adds id and reports whether it was new.
func (s *idSet) add(id uint32) bool {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	v := id + 1
	mask := uint32(len(s.slots) - 1)
	for i := (v * 0x9E3779B1) >> s.shift; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case v:
			return false
		case 0:
			s.slots[i] = v
			s.used = append(s.used, i)
			s.n++
			return true
		}
	}
}

func (s *idSet) has(id uint32) bool {
	v := id + 1
	mask := uint32(len(s.slots) - 1)
	for i := (v * 0x9E3779B1) >> s.shift; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case v:
			return true
		case 0:
			return false
		}
	}
}

func (s *idSet) grow() {
	old := s.slots
	s.slots, s.shift, s.n, s.used = make([]uint32, 2*len(old)), s.shift-1, 0, s.used[:0]
	for _, v := range old {
		if v != 0 {
			s.add(v - 1)
		}
	}
}
