package main

import (
	"bytes"
	"math"
)

// The graph queries written by hand for the key-value stores, over a
// function that lists a node's out-edges (one prefix scan).

type edgesFunc func(from point, visit func(to point, w float64))

// bfs walks out-edges from start up to hops away and sums the distinct
// nodes reached with their depths.
func bfs(edges edgesFunc, start point, hops int) walkAnswer {
	seen := map[point]bool{start: true}
	a := walkAnswer{n: 1, fp: fingerprint(start)}
	frontier := []point{start}
	var next []point
	for h := 1; h <= hops; h++ {
		next = next[:0]
		for _, u := range frontier {
			edges(u, func(v point, _ float64) {
				if !seen[v] {
					seen[v] = true
					a.n++
					a.fp += fingerprint(v)
					a.depths += h
					next = append(next, v)
				}
			})
		}
		frontier, next = next, frontier
	}
	return a
}

// label is a node's best weight after some rounds and where it came from.
type label struct {
	w      float64
	parent point
	round  int // the round that set it
}

// boundedPath is the least-weight path of at most hops edges (hop-bounded
// Bellman-Ford: round h relaxes the out-edges of the nodes that round h-1
// improved). Each round keeps its own labels so that the path can be read
// back through the rounds.
func boundedPath(edges edgesFunc, from, to point, hops int) ([]point, float64, bool) {
	rounds := []map[point]label{{from: {w: 0}}}
	best := map[point]float64{from: 0} // the labels as of the last round
	changed := []point{from}
	for h := 1; h <= hops && len(changed) > 0; h++ {
		prev := best
		cur := map[point]label{}
		for _, u := range changed {
			wu := prev[u]
			edges(u, func(v point, w float64) {
				w += wu
				old, ok := prev[v]
				if l, set := cur[v]; set {
					old, ok = l.w, true
				}
				if ok && w >= old {
					return
				}
				cur[v] = label{w: w, parent: u, round: h}
			})
		}
		best = make(map[point]float64, len(prev)+len(cur))
		for k, v := range prev {
			best[k] = v
		}
		changed = changed[:0]
		for k, l := range cur {
			best[k] = l.w
			changed = append(changed, k)
		}
		rounds = append(rounds, cur)
	}
	w, ok := best[to]
	if !ok {
		return nil, 0, false
	}
	// Read back: the label of v that was in force at round h is the one
	// set by the latest round <= h.
	at := func(v point, h int) label {
		for ; h > 0; h-- {
			if l, ok := rounds[h][v]; ok {
				return l
			}
		}
		return rounds[0][v]
	}
	path := []point{to}
	for v, h := to, len(rounds)-1; ; {
		l := at(v, h)
		if l.round == 0 {
			break
		}
		path = append(path, l.parent)
		v, h = l.parent, l.round-1
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path, w, true
}

// around is the box that holds the ball of radius r about c.
func around(c point, r float64) (lo, hi point) {
	d := int32(math.Floor(r))
	for i := range c {
		lo[i], hi[i] = c[i]-d, c[i]+d
	}
	return lo, hi
}

func bytesCompare(a, b []byte) int { return bytes.Compare(a, b) }
