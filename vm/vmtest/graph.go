package vmtest

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/cubelinux/cube/vm"
)

// Edges implements vm.Host. Out edges come first, then in edges, each sorted
// by the other end's coordinate and then by label. With Both, a self-loop
// is reported once.
func (h *Host) Edges(ctx context.Context, c []int32, dir vm.Direction, label string) vm.Cursor[vm.Edge] {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if err := h.check("edges", c); err != nil {
		return &sliceCursor[vm.Edge]{err: err}
	}
	var out []vm.Edge
	for _, e := range h.st.adjacent(key(c), dir, label) {
		v := h.st.edges[e]
		out = append(out, vm.Edge{From: decode(e.from), To: decode(e.to), Label: e.label, Weight: v.weight, Value: v.value})
	}
	return &sliceCursor[vm.Edge]{ctx: ctx, items: out}
}

// adjacent lists the edges of k in the documented order.
func (s *state) adjacent(k string, dir vm.Direction, label string) []edgeKey {
	var res []edgeKey
	collect := func(set map[edgeKey]struct{}, other func(edgeKey) string, skipSelf bool) {
		start := len(res)
		for e := range set {
			if label != "" && e.label != label {
				continue
			}
			if skipSelf && e.from == e.to {
				continue
			}
			res = append(res, e)
		}
		part := res[start:]
		sort.Slice(part, func(i, j int) bool {
			a, b := part[i], part[j]
			if other(a) != other(b) {
				return other(a) < other(b)
			}
			return a.label < b.label
		})
	}
	if dir == vm.Out || dir == vm.Both {
		collect(s.out[k], func(e edgeKey) string { return e.to }, false)
	}
	if dir == vm.In || dir == vm.Both {
		collect(s.in[k], func(e edgeKey) string { return e.from }, dir == vm.Both)
	}
	return res
}

// neighbour is the end of e that is not k (k itself for a self-loop).
func neighbour(e edgeKey, k string) string {
	if e.from == k {
		return e.to
	}
	return e.from
}

// Link implements vm.Host. The value is copied.
func (h *Host) Link(_ context.Context, e vm.Edge) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.writable("link", e.From, e.To); err != nil {
		return err
	}
	h.st.link(edgeKey{key(e.From), key(e.To), e.Label}, edgeVal{e.Weight, append([]byte{}, e.Value...)})
	return nil
}

// Unlink implements vm.Host.
func (h *Host) Unlink(_ context.Context, from, to []int32, label string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.writable("unlink", from, to); err != nil {
		return false, err
	}
	return h.st.unlink(edgeKey{key(from), key(to), label}), nil
}

// Walk implements vm.Host. Each node is reported once, at its first
// discovery. BFS therefore reports every node at its least depth; DFS
// (preorder, neighbours in edge order) reports the depth along the DFS
// tree and does not expand nodes at MaxDepth, so it may miss a node that a
// shorter route would have reached within MaxDepth. The start counts
// against Limit.
func (h *Host) Walk(ctx context.Context, start []int32, o vm.WalkOptions) ([]vm.WalkStep, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if err := h.check("walk", start); err != nil {
		return nil, err
	}
	depth := o.MaxDepth
	if depth <= 0 {
		depth = 1
	}
	type item struct {
		k, from string
		d       int
	}
	seen := map[string]bool{}
	var steps []vm.WalkStep
	full := func() bool { return o.Limit > 0 && len(steps) >= o.Limit }
	emit := func(it item) {
		st := vm.WalkStep{Coord: decode(it.k), Depth: it.d}
		if it.from != "" {
			st.From = decode(it.from)
		}
		steps = append(steps, st)
	}
	sk := key(start)
	if o.Order == vm.DFS {
		var visit func(it item) error
		visit = func(it item) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			seen[it.k] = true
			emit(it)
			if it.d >= depth {
				return nil
			}
			for _, e := range h.st.adjacent(it.k, o.Direction, o.Label) {
				if full() {
					return nil
				}
				n := neighbour(e, it.k)
				if !seen[n] {
					if err := visit(item{n, it.k, it.d + 1}); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if err := visit(item{k: sk}); err != nil {
			return nil, err
		}
		return steps, nil
	}
	queue := []item{{k: sk}}
	seen[sk] = true
	for len(queue) > 0 && !full() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		it := queue[0]
		queue = queue[1:]
		emit(it)
		if it.d >= depth {
			continue
		}
		for _, e := range h.st.adjacent(it.k, o.Direction, o.Label) {
			n := neighbour(e, it.k)
			if !seen[n] {
				seen[n] = true
				queue = append(queue, item{n, it.k, it.d + 1})
			}
		}
	}
	return steps, nil
}

// ShortestPath implements vm.Host; weights are assumed non-negative. With
// Both, edges are followed either way. A path from a coordinate to itself
// is that coordinate alone, weight 0. Without a bound it is Dijkstra's
// algorithm; with o.MaxHops > 0 it is a hop-bounded Bellman-Ford (see
// boundedPath), a different algorithm from the engine's on purpose.
func (h *Host) ShortestPath(ctx context.Context, from, to []int32, o vm.PathOptions) (vm.Path, bool, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if err := h.check("shortest path", from, to); err != nil {
		return vm.Path{}, false, err
	}
	if o.MaxHops < 0 {
		return vm.Path{}, false, fmt.Errorf("vmtest: shortest path: MaxHops %d is negative", o.MaxHops)
	}
	label, dir := o.Label, o.Direction
	src, dst := key(from), key(to)
	if o.MaxHops > 0 {
		return h.boundedPath(ctx, src, dst, label, dir, o.MaxHops)
	}
	dist := map[string]float64{src: 0}
	prev := map[string]string{}
	done := map[string]bool{}
	pq := &pqueue{{src, 0}}
	for pq.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return vm.Path{}, false, err
		}
		cur := heap.Pop(pq).(pqItem)
		if done[cur.k] {
			continue
		}
		done[cur.k] = true
		if cur.k == dst {
			break
		}
		for _, e := range h.st.adjacent(cur.k, dir, label) {
			n := neighbour(e, cur.k)
			d := cur.d + h.st.edges[e].weight
			if old, ok := dist[n]; !ok || d < old {
				dist[n] = d
				prev[n] = cur.k
				heap.Push(pq, pqItem{n, d})
			}
		}
	}
	if !done[dst] {
		return vm.Path{}, false, nil
	}
	var rev [][]int32
	for k := dst; ; k = prev[k] {
		rev = append(rev, decode(k))
		if k == src {
			break
		}
	}
	p := vm.Path{Weight: dist[dst], Coords: make([][]int32, len(rev))}
	for i, c := range rev {
		p.Coords[len(rev)-1-i] = c
	}
	return p, true, nil
}

// boundedPath is Bellman-Ford in layers: layer h holds, for each node, the
// best walk of exactly h edges to it, as its weight and the node before
// it. Walks of equal weight into a node go to the least coordinate before
// it (slices.Compare), which makes the best walk the one the engine
// documents: least weight, then fewest edges (the first layer that holds
// the best weight), then least coordinates counted back from the target.
func (h *Host) boundedPath(ctx context.Context, src, dst, label string, dir vm.Direction, maxHops int) (vm.Path, bool, error) {
	type entry struct {
		w    float64
		prev string
	}
	layers := []map[string]entry{{src: {}}}
	bestH := -1
	if src == dst {
		bestH = 0
	}
	for hop := 1; hop <= maxHops; hop++ {
		if err := ctx.Err(); err != nil {
			return vm.Path{}, false, err
		}
		next := map[string]entry{}
		for k, ek := range layers[hop-1] {
			for _, e := range h.st.adjacent(k, dir, label) {
				n := neighbour(e, k)
				w := ek.w + h.st.edges[e].weight
				old, ok := next[n]
				if !ok || w < old.w || w == old.w && slices.Compare(decode(k), decode(old.prev)) < 0 {
					next[n] = entry{w, k}
				}
			}
		}
		layers = append(layers, next)
		if e, ok := next[dst]; ok && (bestH < 0 || e.w < layers[bestH][dst].w) {
			bestH = hop
		}
	}
	if bestH < 0 {
		return vm.Path{}, false, nil
	}
	p := vm.Path{Weight: layers[bestH][dst].w, Coords: make([][]int32, bestH+1)}
	for hop, k := bestH, dst; hop >= 0; hop-- {
		p.Coords[hop] = decode(k)
		k = layers[hop][k].prev
	}
	return p, true, nil
}

type pqItem struct {
	k string
	d float64
}

type pqueue []pqItem

func (q pqueue) Len() int { return len(q) }
func (q pqueue) Less(i, j int) bool {
	if q[i].d != q[j].d {
		return q[i].d < q[j].d
	}
	return q[i].k < q[j].k
}
func (q pqueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pqueue) Push(x any)   { *q = append(*q, x.(pqItem)) }
func (q *pqueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}
