package engine

import (
	"context"
	"fmt"
	"slices"
)

// PathOptions choose the edges a shortest-path search follows and how
// many of them a path may have. The zero value follows outgoing edges of
// any label with no bound on the number of edges.
type PathOptions struct {
	Label     string    // "" = any label
	Direction Direction // Out, In or Both
	MaxHops   int       // at most this many edges; 0 = no bound
}

// pstate is a search state. With a hop bound it is a node and the edges
// used to reach it, since a cheaper way to a node that used more edges
// may no longer reach the target in time; without one it is the node
// alone (h is 0).
type pstate struct {
	id uint32
	h  int32
}

// plabel is the best known way to a state: its weight and edges, and
// the state before it (an index into the search's labels; -1 for the
// start).
type plabel struct {
	s       pstate
	c       pkey // the state's coordinate
	dist    float64
	hops    int
	prev    int32
	settled bool
}

type pqEntry struct {
	i    int32 // the state's label
	dist float64
	hops int
}

// pathHeap is a binary min-heap ordered by (dist, hops), typed so that a
// push does not allocate an interface value.
type pathHeap []pqEntry

func (q pathHeap) less(i, j int) bool {
	if q[i].dist != q[j].dist {
		return q[i].dist < q[j].dist
	}
	return q[i].hops < q[j].hops
}

func (q *pathHeap) push(e pqEntry) {
	*q = append(*q, e)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *pathHeap) pop() pqEntry {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h.less(l, m) {
			m = l
		}
		if r < n && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

// pkeyLess orders coordinates axis by axis; it breaks ties between paths.
func pkeyLess(a, b pkey) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// shortestPath answers a query: a bounded one by meeting in the middle
// while that stays cheap (meetPath), anything else by Dijkstra. Both give
// the same answer, ties included.
//
// Both run over the adjacency, in node ids (adjacency.go).
func shortestPath(ctx context.Context, g *edgeTrees, dims int, from, to pkey, o PathOptions) (Path, bool, error) {
	if o.MaxHops > 0 {
		p, found, ok, err := meetPath(ctx, g, dims, from, to, o, meetBudget)
		if err != nil || ok {
			return p, found, err
		}
	}
	return dijkstraPath(ctx, g, dims, from, to, o)
}

// noID stands for a coordinate no edge has touched: no edge leads to it.
const noID = ^uint32(0)

// pathIDs returns the ids of a search's ends; done is true when the
// answer needs no search: from has never had an edge, so the path is
// from alone when to is from and there is none otherwise.
func pathIDs(g *edgeTrees, dims int, from, to pkey) (fid, tid uint32, p Path, found, done bool) {
	fid, ok := g.adj.ids.lookup(from)
	if !ok {
		if from == to {
			return 0, 0, Path{Coords: [][]int32{slices.Clone(from[:dims])}}, true, true
		}
		return 0, 0, Path{}, false, true
	}
	if from == to {
		return fid, fid, Path{}, false, false
	}
	if tid, ok = g.adj.ids.lookup(to); !ok {
		tid = noID
	}
	return fid, tid, Path{}, false, false
}

// dijkstraPath is Dijkstra's algorithm with (weight, edges) as the
// distance, compared weight first. Weights must be non-negative
// (checkWeight): then a prefix of a best path is a best path, and each
// edge adds one hop, so every state is settled after all the states that
// lead to it.
//
// With o.MaxHops > 0 the states are (node, edges used): a node is worth
// settling again only with fewer edges than any earlier settling of it,
// which an earlier one, being no heavier, otherwise dominates. So each
// node is settled at most MaxHops+1 times and the first settling of the
// target is the least weight over paths of at most MaxHops edges.
//
// Ties: among equal weights the fewest edges wins; among those, the path
// whose coordinate before the target is least (pkeyLess), then the one
// before that, and so on back to from. Weights are summed from from
// outwards in float64, and "equal" means equal sums (meetPath sums a
// suffix from its own end, so near-ties that rounding decides may go
// either way between the two).
func dijkstraPath(ctx context.Context, g *edgeTrees, dims int, from, to pkey, o PathOptions) (Path, bool, error) {
	fid, tid, p, found, done := pathIDs(g, dims, from, to)
	if done {
		return p, found, nil
	}
	bound := o.MaxHops
	key := func(id uint32, h int) pstate {
		if bound > 0 {
			return pstate{id: id, h: int32(h)}
		}
		return pstate{id: id}
	}
	index := map[pstate]int32{}
	var labels []plabel // no pointers, so the collector skips it
	// fewest[id] is the fewest edges id was settled with (bounded search).
	var fewest map[uint32]int
	if bound > 0 {
		fewest = map[uint32]int{}
	}
	start := key(fid, 0)
	index[start] = 0
	labels = append(labels, plabel{s: start, c: from, prev: -1})
	q := pathHeap{{i: 0}}
	lab := g.adj.label(o.Label)
	steps := 0
	for len(q) > 0 {
		cur := q.pop()
		l := &labels[cur.i]
		if l.settled || l.dist != cur.dist || l.hops != cur.hops {
			continue // stale entry
		}
		id, c := l.s.id, l.c
		if bound > 0 {
			if h, ok := fewest[id]; ok && h <= cur.hops {
				continue // dominated by an earlier settling
			}
			fewest[id] = cur.hops
		}
		l.settled = true
		if id == tid {
			p := Path{Weight: cur.dist}
			for i := cur.i; i >= 0; i = labels[i].prev {
				p.Coords = append(p.Coords, slices.Clone(labels[i].c[:dims]))
			}
			slices.Reverse(p.Coords)
			return p, true, nil
		}
		if steps++; steps%256 == 0 {
			if err := ctx.Err(); err != nil {
				return Path{}, false, err
			}
		}
		nh := cur.hops + 1
		if bound > 0 && nh > bound {
			continue
		}
		var bad error
		g.adjNeighbours(id, c, lab, o.Direction, func(m uint32, mc []int32, w float64) bool {
			if !(w >= 0) {
				// Link refuses these; a store written by an older cube may
				// still hold one. A wrong answer is worse than none.
				bad = fmt.Errorf("%w: an edge between %v and %v has weight %v (written before cube refused such weights); unlink it or link it again with a weight >= 0", ErrBadWeight, c[:dims], mc, w)
				return false
			}
			if bound > 0 {
				if h, ok := fewest[m]; ok && h <= nh {
					return true
				}
			}
			ms := key(m, nh)
			nd := cur.dist + w
			mi, seen := index[ms]
			if !seen {
				mi = int32(len(labels))
				index[ms] = mi
				labels = append(labels, plabel{s: ms, c: toPkey(mc), dist: nd, hops: nh, prev: cur.i})
				q.push(pqEntry{i: mi, dist: nd, hops: nh})
				return true
			}
			ml := &labels[mi]
			switch {
			case ml.settled:
			case nd < ml.dist || nd == ml.dist && nh < ml.hops:
				ml.dist, ml.hops, ml.prev = nd, nh, cur.i
				q.push(pqEntry{i: mi, dist: nd, hops: nh})
			case nd == ml.dist && nh == ml.hops && pkeyLess(c, labels[ml.prev].c):
				ml.prev = cur.i // same distance: no new heap entry
			}
			return true
		})
		if bad != nil {
			return Path{}, false, bad
		}
	}
	return Path{}, false, nil
}
