package engine

import (
	"context"
	"fmt"
	"slices"
)

// meetBudget bounds the neighbour scans meetPath may spend before it
// gives up and leaves the query to Dijkstra. On issue 10's graph (8 edges
// a node) a bound of 4 costs 18 scans this way and thousands in Dijkstra,
// which settles every state lighter than the answer; the exhaustive
// layers grow as the degree to the power MaxHops/2, so past the budget
// Dijkstra's early stop wins.
const meetBudget = 1024

// fwdEntry is the best walk of exactly h edges from the start to a node:
// its weight, summed from the start outwards, and the node before it.
type fwdEntry struct {
	w    float64
	prev uint32
	c    pkey // the node's own coordinate
}

// bwdEntry is the best walk of exactly h edges from a node to the
// target: the weight of its first edge and the node it leads to (whose
// entry in layer h-1 goes on), the walk's weight, and rank, the entry's
// place in its layer when the layer's walks are ordered from the target
// back (the order ties are broken in), which makes comparing two walks
// one comparison of their next nodes' ranks.
type bwdEntry struct {
	w    float64
	ew   float64
	next uint32
	rank int
	c    pkey // the node's own coordinate
}

func reverseDir(d Direction) Direction {
	switch d {
	case Out:
		return In
	case In:
		return Out
	}
	return d
}

// meetPath answers a bounded query by meeting in the middle: every walk
// of L <= MaxHops edges is its first min(L, a) edges (a = ceil(MaxHops/2))
// and then at most b = floor(MaxHops/2) more, so the best is the best
// a-edge-or-shorter prefix from from joined at its end to the best
// suffix to to. Both sides are computed exhaustively in layers, so the
// answer is shortestPath's, ties included: the suffix is compared first,
// from the target back, then the prefix (the documented order).
//
// ok reports whether it answered; false means the budget ran out and the
// caller should run Dijkstra.
func meetPath(ctx context.Context, g *edgeTrees, dims int, from, to pkey, o PathOptions, budget int) (p Path, found, ok bool, err error) {
	fid, tid, p, found, done := pathIDs(g, dims, from, to)
	if done {
		return p, found, true, nil
	}
	a, b := (o.MaxHops+1)/2, o.MaxHops/2
	scans := 0
	var bad error
	lab := g.adj.label(o.Label)
	scan := func(id uint32, c pkey, dir Direction, fn func(m uint32, mc []int32, w float64)) bool {
		if scans++; scans > budget {
			return false
		}
		if scans%256 == 0 {
			if bad = ctx.Err(); bad != nil {
				return false
			}
		}
		g.adjNeighbours(id, c, lab, dir, func(m uint32, mc []int32, w float64) bool {
			if !(w >= 0) {
				bad = fmt.Errorf("%w: an edge between %v and %v has weight %v (written before cube refused such weights); unlink it or link it again with a weight >= 0", ErrBadWeight, c[:dims], mc, w)
				return false
			}
			fn(m, mc, w)
			return true
		})
		return bad == nil
	}
	fwd := []map[uint32]fwdEntry{{fid: {c: from}}}
	for h := 1; h <= a; h++ {
		prev := fwd[h-1]
		next := make(map[uint32]fwdEntry, 8*len(prev))
		for id, e := range prev {
			more := scan(id, e.c, o.Direction, func(m uint32, mc []int32, w float64) {
				nw := e.w + w
				if old, seen := next[m]; !seen || nw < old.w || nw == old.w && pkeyLess(e.c, prev[old.prev].c) {
					next[m] = fwdEntry{w: nw, prev: id, c: toPkey(mc)}
				}
			})
			if !more {
				return Path{}, false, bad != nil, bad
			}
		}
		fwd = append(fwd, next)
	}
	bwd := []map[uint32]bwdEntry{{tid: {c: to}}}
	back := reverseDir(o.Direction)
	for h := 1; h <= b; h++ {
		prev := bwd[h-1]
		next := make(map[uint32]bwdEntry, 8*len(prev))
		for id, e := range prev {
			more := scan(id, e.c, back, func(m uint32, mc []int32, w float64) {
				nw := w + e.w
				old, seen := next[m]
				if seen && (nw > old.w || nw == old.w && !(e.rank < prev[old.next].rank || e.rank == prev[old.next].rank && pkeyLess(e.c, prev[old.next].c))) {
					return
				}
				next[m] = bwdEntry{w: nw, ew: w, next: id, c: toPkey(mc)}
			})
			if !more {
				return Path{}, false, bad != nil, bad
			}
		}
		if h < b {
			rankLayer(next, prev)
		}
		bwd = append(bwd, next)
	}
	// Candidates: walks of at most a edges ending at to, then a-edge
	// prefixes joined to 1..b-edge suffixes.
	var best []pkey
	var bestW float64
	consider := func(h int, m uint32, j int) {
		w := fwd[h][m].w
		for c, k := m, j; k > 0; k-- {
			e := bwd[k][c]
			w += e.ew
			c = e.next
		}
		edges := h + j
		if best != nil && (w > bestW || w == bestW && edges > len(best)-1) {
			return
		}
		cand := make([]pkey, h+1, edges+1)
		for i, c := h, m; i >= 0; i-- {
			e := fwd[i][c]
			cand[i] = e.c
			c = e.prev
		}
		for c, k := m, j; k > 0; k-- {
			c = bwd[k][c].next
			cand = append(cand, bwd[k-1][c].c)
		}
		if best == nil || w < bestW || edges < len(best)-1 || revLess(cand, best) {
			best, bestW = cand, w
		}
	}
	for h := 0; h <= a; h++ {
		if _, reached := fwd[h][tid]; reached {
			consider(h, tid, 0)
		}
	}
	for j := 1; j <= b; j++ {
		for m := range bwd[j] {
			if _, reached := fwd[a][m]; reached {
				consider(a, m, j)
			}
		}
	}
	if best == nil {
		return Path{}, false, true, nil
	}
	p = Path{Weight: bestW, Coords: make([][]int32, len(best))}
	for i, c := range best {
		p.Coords[i] = slices.Clone(c[:dims])
	}
	return p, true, true, nil
}

// rankLayer sets the rank of every entry of a backward layer: its place
// when the layer's walks are ordered from the target back, that is by
// the rank of the next node's walk, then by the next node, then by the
// node itself.
func rankLayer(layer, prev map[uint32]bwdEntry) {
	keys := make([]uint32, 0, len(layer))
	for k := range layer {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y uint32) int {
		ex, ey := layer[x], layer[y]
		if rx, ry := prev[ex.next].rank, prev[ey.next].rank; rx != ry {
			return rx - ry
		}
		if ex.next != ey.next {
			if pkeyLess(prev[ex.next].c, prev[ey.next].c) {
				return -1
			}
			return 1
		}
		if pkeyLess(ex.c, ey.c) {
			return -1
		}
		if x != y {
			return 1
		}
		return 0
	})
	for i, k := range keys {
		e := layer[k]
		e.rank = i
		layer[k] = e
	}
}

// revLess compares two equal-length walks that end at the same node by
// their nodes from the one before the end back to the start.
func revLess(x, y []pkey) bool {
	for i := len(x) - 2; i >= 0; i-- {
		if x[i] != y[i] {
			return pkeyLess(x[i], y[i])
		}
	}
	return false
}
