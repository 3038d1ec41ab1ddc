package engine

import (
	"container/heap"
	"context"
	"slices"
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

// walk is the built-in BFS/DFS. It checks ctx every few hundred nodes.
func walk(ctx context.Context, g *edgeTrees, dims int, start pkey, o WalkOptions) ([]Step, error) {
	depth := o.MaxDepth
	if depth <= 0 {
		depth = 1
	}
	type node struct {
		c, from pkey
		depth   int
		root    bool
	}
	seen := map[pkey]bool{start: true}
	out := []Step{{Coord: slices.Clone(start[:dims]), Depth: 0}}
	work := []node{{c: start, root: true}}
	full := func() bool { return o.Limit > 0 && len(out) >= o.Limit }
	visited := 0
	for len(work) > 0 && !full() {
		var n node
		if o.Order == DFS {
			n, work = work[len(work)-1], work[:len(work)-1]
		} else {
			n, work = work[0], work[1:]
		}
		if visited++; visited%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if n.depth >= depth {
			continue
		}
		var next []node
		g.neighbours(n.c, o.Label, o.Direction, func(m pkey, _ float64) bool {
			if seen[m] {
				return true
			}
			seen[m] = true
			out = append(out, Step{Coord: slices.Clone(m[:dims]), Depth: n.depth + 1, From: slices.Clone(n.c[:dims])})
			next = append(next, node{c: m, from: n.c, depth: n.depth + 1})
			return !full()
		})
		if o.Order == DFS {
			// Push in reverse so the first neighbour is explored first.
			slices.Reverse(next)
		}
		work = append(work, next...)
	}
	return out, nil
}

type pqItem struct {
	c    pkey
	dist float64
}

type pq []pqItem

func (q pq) Len() int           { return len(q) }
func (q pq) Less(i, j int) bool { return q[i].dist < q[j].dist }
func (q pq) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *pq) Push(x any)        { *q = append(*q, x.(pqItem)) }
func (q *pq) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// shortestPath is Dijkstra's algorithm over edge weights.
func shortestPath(ctx context.Context, g *edgeTrees, dims int, from, to pkey, label string, dir Direction) (Path, bool, error) {
	dist := map[pkey]float64{from: 0}
	prev := map[pkey]pkey{}
	done := map[pkey]bool{}
	q := &pq{{c: from}}
	steps := 0
	for q.Len() > 0 {
		cur := heap.Pop(q).(pqItem)
		if done[cur.c] {
			continue
		}
		done[cur.c] = true
		if cur.c == to {
			var p Path
			p.Weight = cur.dist
			for c := to; ; c = prev[c] {
				p.Coords = append(p.Coords, slices.Clone(c[:dims]))
				if c == from {
					break
				}
			}
			slices.Reverse(p.Coords)
			return p, true, nil
		}
		if steps++; steps%256 == 0 {
			if err := ctx.Err(); err != nil {
				return Path{}, false, err
			}
		}
		g.neighbours(cur.c, label, dir, func(m pkey, w float64) bool {
			if done[m] {
				return true
			}
			d := cur.dist + w
			if old, ok := dist[m]; !ok || d < old {
				dist[m] = d
				prev[m] = cur.c
				heap.Push(q, pqItem{c: m, dist: d})
			}
			return true
		})
	}
	return Path{}, false, nil
}
