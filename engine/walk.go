package engine

import (
	"context"
	"iter"
	"math"
	"sync"

	"github.com/tidwall/btree"
)

// neighbours calls fn with every node one hop from c along live edges.
func (g *edgeTrees) neighbours(c pkey, label string, dir Direction, fn func(n pkey, w float64) bool) {
	ok := true
	if dir == Out || dir == Both {
		scanEdges(g.out, c, label, func(e *eitem) bool { ok = fn(e.b, e.weight); return ok })
	}
	if ok && (dir == In || dir == Both) {
		scanEdges(g.in, c, label, func(e *eitem) bool { return fn(e.b, e.weight) })
	}
}

// wstep is a step of a walk in ids: the node, the index of the step it
// was reached from (-1 for the start) and its depth. Its coordinate is
// the walk's coords[i*dims:(i+1)*dims].
type wstep struct {
	id     uint32
	parent int32
	depth  int32
}

// dfsFrame is a node on the DFS stack, with the coordinate it will be
// reported with.
type dfsFrame struct {
	wstep
	c pkey
}

// idBits is a set of node ids as a bitset indexed by id, grown as ids
// come. A walk clears the words of the ids it added (its steps), so the
// clearing costs what the walk reached, not the number of nodes.
type idBits []uint64

// add adds id and reports whether it was new.
func (b *idBits) add(id uint32) bool {
	w, m := int(id>>6), uint64(1)<<(id&63)
	if w >= len(*b) {
		b.grow(w)
	}
	if (*b)[w]&m != 0 {
		return false
	}
	(*b)[w] |= m
	return true
}

func (b idBits) has(id uint32) bool {
	w := int(id >> 6)
	return w < len(b) && b[w]&(1<<(id&63)) != 0
}

func (b *idBits) grow(w int) {
	n := max(2*len(*b), w+1, 1024)
	*b = append(*b, make([]uint64, n-len(*b))...)
}

// walkScratch is what a walk uses and drops; walks reuse it.
type walkScratch struct {
	ws          []wstep
	coords      []int32
	seen        idBits
	stack, next []dfsFrame
	nodes       []*anode
	level       []levelNode
	sink        int32
}

var walkPool = sync.Pool{New: func() any { return new(walkScratch) }}

func putWalkScratch(sc *walkScratch) {
	if cap(sc.ws) > 1<<16 || len(sc.seen) > 1<<16 {
		return // a huge walk's buffers are not worth keeping
	}
	for _, w := range sc.ws {
		if int(w.id>>6) < len(sc.seen) {
			sc.seen[w.id>>6] = 0
		}
	}
	clear(sc.level)
	clear(sc.nodes)
	sc.ws, sc.coords, sc.stack, sc.next, sc.level, sc.nodes = sc.ws[:0], sc.coords[:0], sc.stack[:0], sc.next[:0], sc.level[:0], sc.nodes[:0]
	walkPool.Put(sc)
}

// walk is the built-in BFS/DFS. Both report nodes in visit order: BFS by
// increasing depth, DFS along each branch before the next (a node is
// recorded when the walk arrives at it, not when it is first seen as a
// neighbour). It checks ctx every few hundred nodes.
//
// It runs over the adjacency (adjacency.go), in ids: the steps are the
// BFS queue, the seen set is a bitset over ids, a neighbour's coordinate
// comes with its edge record, and the Steps' coordinates are carved from
// one slice.
func walk(ctx context.Context, g *edgeTrees, dims int, start pkey, o WalkOptions) ([]Step, error) {
	sc := walkPool.Get().(*walkScratch)
	defer putWalkScratch(sc)
	if err := sc.walk(ctx, g, dims, start, o); err != nil {
		return nil, err
	}
	return steps(dims, sc.ws, sc.coords), nil
}

// walkSeq is walk whose steps are read from the walk's own buffers, not
// copied out: a walk of a few hundred nodes then allocates nothing, where
// walk's Steps are most of its cost (and, on a heap that is still growing,
// a page fault every 4 KiB of them). The iterator may be ranged over
// once; the Steps' slices are valid until the range ends.
func walkSeq(ctx context.Context, g *edgeTrees, dims int, start pkey, o WalkOptions) (iter.Seq[Step], error) {
	sc := walkPool.Get().(*walkScratch)
	if err := sc.walk(ctx, g, dims, start, o); err != nil {
		putWalkScratch(sc)
		return nil, err
	}
	used := false
	return func(yield func(Step) bool) {
		if used {
			panic("engine: a WalkSeq iterator was ranged over twice; walk again for a second pass")
		}
		used = true
		defer putWalkScratch(sc)
		at := func(i int32) []int32 { return sc.coords[int(i)*dims : int(i+1)*dims : int(i+1)*dims] }
		for i, w := range sc.ws {
			st := Step{Coord: at(int32(i)), Depth: int(w.depth)}
			if w.parent >= 0 {
				st.From = at(w.parent)
			}
			if !yield(st) {
				return
			}
		}
	}, nil
}

// walk fills sc.ws and sc.coords with the walk's steps.
func (sc *walkScratch) walk(ctx context.Context, g *edgeTrees, dims int, start pkey, o WalkOptions) error {
	sid, known := g.adj.ids.lookup(start)
	if !known {
		// No edge has ever touched start: the walk is start alone. Its id
		// is not in the seen set, so clearing that word clears nothing.
		sc.ws = append(sc.ws, wstep{parent: -1})
		sc.coords = append(sc.coords, start[:dims]...)
		return nil
	}
	lab := g.adj.label(o.Label)
	if o.Order == DFS {
		return walkDFS(ctx, g, dims, start, sid, lab, o, sc)
	}
	depth := int32(max(o.MaxDepth, 1))
	limit := o.Limit
	if limit <= 0 {
		limit = math.MaxInt
	}
	sc.seen.add(sid)
	ws := append(sc.ws, wstep{id: sid, parent: -1})
	coords := append(sc.coords, start[:dims]...)
	defer func() { sc.ws, sc.coords = ws, coords }()
	s := adjHead + dims
	trees := [2]*btree.BTreeG[eitem]{g.out, g.in}
	dirs := [2]bool{o.Direction == Out || o.Direction == Both, o.Direction == In || o.Direction == Both}
	// Steps are appended in depth order, so the nodes to expand are a
	// prefix of ws: those before the first at depth, one level after
	// another.
	lo, hi := 0, 0 // the level being expanded: ws[lo:hi]
	for i := 0; i < len(ws) && len(ws) < limit && ws[i].depth < depth; i++ {
		if (i+1)%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if i == hi {
			lo, hi = i, len(ws)
			sc.fetchLevel(g, ws[lo:hi], dirs)
		}
		n := &sc.level[i-lo]
		if !n.ok {
			continue
		}
		next := wstep{parent: int32(i), depth: ws[i].depth + 1}
		for d := range 2 {
			if !dirs[d] {
				continue
			}
			if n.big[d] {
				scanEdges(trees[d], toPkey(coords[i*dims:(i+1)*dims]), lab.name, func(e *eitem) bool {
					id, _ := g.adj.ids.lookup(e.b)
					if sc.seen.add(id) {
						next.id = id
						ws = append(ws, next)
						coords = append(coords, e.b[:dims]...)
					}
					return len(ws) < limit
				})
				if len(ws) >= limit {
					break
				}
				continue
			}
			a := n.e[d]
			for j := 0; j+s <= len(a); j += s {
				r := a[j : j+s : j+s]
				if !lab.any && uint32(r[1]) != lab.id {
					continue
				}
				if !sc.seen.add(uint32(r[0])) {
					continue
				}
				next.id = uint32(r[0])
				ws = append(ws, next)
				coords = append(coords, r[adjHead:]...)
				if len(ws) >= limit {
					break
				}
			}
			if len(ws) >= limit {
				break
			}
		}
	}
	return nil
}

// levelNode is what a BFS expansion reads of a node, copied out of it by
// fetchLevel: the node's own fields lie on lines of their own, and a walk
// that reads them only when it expands the node waits for each.
type levelNode struct {
	e   [2][]int32
	big [2]bool
	ok  bool // the node has an entry in this copy
}

// fetchLevel puts the nodes of a BFS level in sc.level, in three passes
// that each make one kind of load for every node of the level: the
// table's leaf (the node's pointer), the node (its arrays and flags), and
// the first word of each cache line of its arrays. The level's nodes are
// known before any of them is expanded, so the loads of a pass are
// independent of each other and the processor overlaps their cache misses;
// with small loops, many of them. A walk that meets each node only when
// it expands it pays them one after another: on issue 10's graph, where
// the nodes are scattered over a heap far larger than the caches (a
// dependent miss there is 200-400 ns on this machine), those misses are
// most of a walk's time.
func (sc *walkScratch) fetchLevel(g *edgeTrees, level []wstep, dirs [2]bool) {
	nodes := sc.nodes[:0]
	for _, w := range level {
		nodes = append(nodes, g.adj.node(w.id))
	}
	sc.nodes = nodes
	ln := sc.level[:0]
	for _, n := range nodes {
		if n == nil {
			ln = append(ln, levelNode{})
			continue
		}
		ln = append(ln, levelNode{e: n.e, big: n.big, ok: true})
	}
	sc.level = ln
	var x int32
	for i := range ln {
		for d := range 2 {
			if dirs[d] {
				a := ln[i].e[d]
				for k := 0; k < len(a); k += 16 {
					x += a[k]
				}
			}
		}
	}
	sc.sink = x // so that the loads are not dropped
}

// walkDFS visits depth first with an explicit stack; the first neighbour
// (in edge order) is explored first.
func walkDFS(ctx context.Context, g *edgeTrees, dims int, start pkey, sid uint32, lab adjLabel, o WalkOptions, sc *walkScratch) error {
	depth := int32(max(o.MaxDepth, 1))
	ws, coords := sc.ws, sc.coords
	defer func() { sc.ws, sc.coords = ws, coords }()
	stack := append(sc.stack, dfsFrame{wstep: wstep{id: sid, parent: -1}, c: start})
	next := sc.next
	defer func() { sc.stack, sc.next = stack, next }()
	for len(stack) > 0 && (o.Limit <= 0 || len(ws) < o.Limit) {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !sc.seen.add(f.id) {
			continue
		}
		ws = append(ws, f.wstep)
		coords = append(coords, f.c[:dims]...)
		if len(ws)%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if f.depth >= depth {
			continue
		}
		i := int32(len(ws) - 1)
		next = next[:0]
		g.adjNeighbours(f.id, f.c, lab, o.Direction, func(m uint32, mc []int32, _ float64) bool {
			if !sc.seen.has(m) {
				next = append(next, dfsFrame{wstep: wstep{id: m, parent: i, depth: f.depth + 1}, c: toPkey(mc)})
			}
			return true
		})
		for i := len(next) - 1; i >= 0; i-- {
			stack = append(stack, next[i])
		}
	}
	return nil
}

// steps turns a walk's wsteps and coordinates into Steps whose
// coordinates share one backing slice, each capped so that appending to
// one cannot overwrite the next.
func steps(dims int, ws []wstep, coords []int32) []Step {
	out := make([]Step, len(ws))
	buf := make([]int32, 0, (2*len(ws)-1)*dims)
	carve := func(i int32) []int32 {
		k := len(buf)
		buf = append(buf, coords[int(i)*dims:int(i+1)*dims]...)
		return buf[k:len(buf):len(buf)]
	}
	for i, w := range ws {
		out[i] = Step{Coord: carve(int32(i)), Depth: int(w.depth)}
		if w.parent >= 0 {
			out[i].From = carve(w.parent)
		}
	}
	return out
}
