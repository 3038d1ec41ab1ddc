package engine

import (
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

// walk is the built-in BFS/DFS. Both report nodes in visit order: BFS by
// increasing depth, DFS along each branch before the next (a node is
// recorded when the walk arrives at it, not when it is first seen as a
// neighbour). It checks ctx every few hundred nodes.
func walk(ctx context.Context, g *edgeTrees, dims int, start pkey, o WalkOptions) ([]Step, error) {
	if o.Order == DFS {
		return walkDFS(ctx, g, dims, start, o)
	}
	depth := max(o.MaxDepth, 1)
	type node struct {
		c     pkey
		depth int
	}
	seen := map[pkey]bool{start: true}
	out := []Step{{Coord: slices.Clone(start[:dims]), Depth: 0}}
	work := []node{{c: start}}
	full := func() bool { return o.Limit > 0 && len(out) >= o.Limit }
	for visited := 1; len(work) > 0 && !full(); visited++ {
		n := work[0]
		work = work[1:]
		if visited%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if n.depth >= depth {
			continue
		}
		g.neighbours(n.c, o.Label, o.Direction, func(m pkey, _ float64) bool {
			if seen[m] {
				return true
			}
			seen[m] = true
			out = append(out, Step{Coord: slices.Clone(m[:dims]), Depth: n.depth + 1, From: slices.Clone(n.c[:dims])})
			work = append(work, node{c: m, depth: n.depth + 1})
			return !full()
		})
	}
	return out, nil
}

// walkDFS visits depth first with an explicit stack; the first neighbour
// (in edge order) is explored first.
func walkDFS(ctx context.Context, g *edgeTrees, dims int, start pkey, o WalkOptions) ([]Step, error) {
	depth := max(o.MaxDepth, 1)
	type frame struct {
		c, from pkey
		depth   int
		root    bool
	}
	visited := map[pkey]bool{}
	var out []Step
	stack := []frame{{c: start, root: true}}
	var next []frame
	for len(stack) > 0 && (o.Limit <= 0 || len(out) < o.Limit) {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if visited[f.c] {
			continue
		}
		visited[f.c] = true
		st := Step{Coord: slices.Clone(f.c[:dims]), Depth: f.depth}
		if !f.root {
			st.From = slices.Clone(f.from[:dims])
		}
		out = append(out, st)
		if len(out)%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if f.depth >= depth {
			continue
		}
		next = next[:0]
		g.neighbours(f.c, o.Label, o.Direction, func(m pkey, _ float64) bool {
			if !visited[m] {
				next = append(next, frame{c: m, from: f.c, depth: f.depth + 1})
			}
			return true
		})
		for i := len(next) - 1; i >= 0; i-- {
			stack = append(stack, next[i])
		}
	}
	return out, nil
}
