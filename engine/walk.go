package engine

import (
	"context"
	"sync"
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

// walkScratch is what a walk uses and drops; walks reuse it.
type walkScratch struct {
	ws          []wstep
	coords      []int32
	seen        idSet
	stack, next []dfsFrame
}

var walkPool = sync.Pool{New: func() any { return &walkScratch{seen: newIDSet(512)} }}

func putWalkScratch(sc *walkScratch) {
	if cap(sc.ws) > 1<<16 || len(sc.seen.slots) > 1<<17 {
		return // a huge walk's buffers are not worth keeping
	}
	sc.seen.reset()
	sc.ws, sc.coords, sc.stack, sc.next = sc.ws[:0], sc.coords[:0], sc.stack[:0], sc.next[:0]
	walkPool.Put(sc)
}

// walk is the built-in BFS/DFS. Both report nodes in visit order: BFS by
// increasing depth, DFS along each branch before the next (a node is
// recorded when the walk arrives at it, not when it is first seen as a
// neighbour). It checks ctx every few hundred nodes.
//
// It runs over the adjacency (adjacency.go), in ids: the steps are the
// BFS queue, the seen set is an idSet, a neighbour's coordinate comes
// with its edge, and the Steps' coordinates are carved from one slice.
func walk(ctx context.Context, g *edgeTrees, dims int, start pkey, o WalkOptions) ([]Step, error) {
	sid, known := g.adj.ids.lookup(start)
	if !known {
		// No edge has ever touched start: the walk is start alone.
		return []Step{{Coord: append([]int32(nil), start[:dims]...)}}, nil
	}
	sc := walkPool.Get().(*walkScratch)
	defer putWalkScratch(sc)
	if o.Order == DFS {
		return walkDFS(ctx, g, dims, start, sid, o, sc)
	}
	depth := int32(max(o.MaxDepth, 1))
	sc.seen.add(sid)
	ws := append(sc.ws, wstep{id: sid, parent: -1})
	coords := append(sc.coords, start[:dims]...)
	full := func() bool { return o.Limit > 0 && len(ws) >= o.Limit }
	for i := 0; i < len(ws) && !full(); i++ {
		n := ws[i]
		if (i+1)%256 == 0 {
			if err := ctx.Err(); err != nil {
				sc.ws, sc.coords = ws, coords
				return nil, err
			}
		}
		if n.depth >= depth {
			continue
		}
		g.adjNeighbours(n.id, toPkey(coords[i*dims:(i+1)*dims]), o.Label, o.Direction, func(m uint32, mc []int32, _ float64) bool {
			if !sc.seen.add(m) {
				return true
			}
			ws = append(ws, wstep{id: m, parent: int32(i), depth: n.depth + 1})
			coords = append(coords, mc...)
			return !full()
		})
	}
	sc.ws, sc.coords = ws, coords
	return steps(dims, ws, coords), nil
}

// walkDFS visits depth first with an explicit stack; the first neighbour
// (in edge order) is explored first.
func walkDFS(ctx context.Context, g *edgeTrees, dims int, start pkey, sid uint32, o WalkOptions, sc *walkScratch) ([]Step, error) {
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
				return nil, err
			}
		}
		if f.depth >= depth {
			continue
		}
		i := int32(len(ws) - 1)
		next = next[:0]
		g.adjNeighbours(f.id, f.c, o.Label, o.Direction, func(m uint32, mc []int32, _ float64) bool {
			if !sc.seen.has(m) {
				next = append(next, dfsFrame{wstep: wstep{id: m, parent: i, depth: f.depth + 1}, c: toPkey(mc)})
			}
			return true
		})
		for i := len(next) - 1; i >= 0; i-- {
			stack = append(stack, next[i])
		}
	}
	return steps(dims, ws, coords), nil
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
