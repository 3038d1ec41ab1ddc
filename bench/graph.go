package main

import (
	"bytes"
	"math"
	"slices"
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
// improved, from the weights they had at the end of round h-1, so that
// round h finds every path of h edges and none longer). Each round keeps
// the labels it set so that the path can be read back through the rounds.
func boundedPath(edges edgesFunc, from, to point, hops int) ([]point, float64, bool) {
	type frozen struct {
		p point
		w float64 // its weight when its round ended
	}
	rounds := []map[point]label{{from: {w: 0}}}
	best := make(map[point]float64, 1<<hops*outDegree)
	best[from] = 0
	changed := []frozen{{from, 0}}
	for h := 1; h <= hops && len(changed) > 0; h++ {
		cur := make(map[point]label, len(changed)*outDegree)
		for _, u := range changed {
			edges(u.p, func(v point, w float64) {
				w += u.w
				if old, ok := best[v]; ok && w >= old {
					return
				}
				best[v] = w
				cur[v] = label{w: w, parent: u.p, round: h}
			})
		}
		changed = changed[:0]
		for v, l := range cur {
			changed = append(changed, frozen{v, l.w})
		}
		rounds = append(rounds, cur)
	}
	w, ok := best[to]
	if !ok {
		return nil, 0, false
	}
	// Read back: the label of v in force at the end of round h is the one
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
	slices.Reverse(path)
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
