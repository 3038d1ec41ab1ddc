package main

import (
	"encoding/binary"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
)

// The data every store loads: distinct random points with values derived
// from their coordinates, so that an answer can be checked without keeping
// a million values in memory, and a graph over the first points.

const (
	valueSize = 100
	outDegree = 8
)

// point is a coordinate in up to three dimensions (the 2-D set leaves z 0).
type point [3]int32

// dataset is what one run loads and asks about.
type dataset struct {
	world int32   // coordinates are in [0, world) on every axis
	pts   []point // 3-D, distinct
	flat  []point // 2-D, distinct (z = 0), for the stores that only know the plane
	nodes int     // the graph's nodes are pts[:nodes]
	adj   [][]edge
	index map[point]int32 // pts' positions, for the graph's references
}

type edge struct {
	to int32
	w  float64
}

// makeDataset draws n 3-D points in [0, world)³, n2 2-D points and a graph over the first
// nodes 3-D points with outDegree out-edges each to random other nodes,
// weighted by their distance.
func makeDataset(seed uint64, world int32, n, n2, nodes int) *dataset {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	d := &dataset{world: world, nodes: min(nodes, n), index: make(map[point]int32, n)}
	d.pts = make([]point, 0, n)
	for len(d.pts) < n {
		p := point{r.Int32N(world), r.Int32N(world), r.Int32N(world)}
		if _, dup := d.index[p]; dup {
			continue
		}
		d.index[p] = int32(len(d.pts))
		d.pts = append(d.pts, p)
	}
	seen := make(map[point]bool, n2)
	d.flat = make([]point, 0, n2)
	for len(d.flat) < n2 {
		p := point{r.Int32N(world), r.Int32N(world), 0}
		if seen[p] {
			continue
		}
		seen[p] = true
		d.flat = append(d.flat, p)
	}
	d.adj = make([][]edge, d.nodes)
	for i := range d.adj {
		for len(d.adj[i]) < outDegree && d.nodes > outDegree {
			j := r.Int32N(int32(d.nodes))
			if int(j) == i || slices.ContainsFunc(d.adj[i], func(e edge) bool { return e.to == j }) {
				continue
			}
			d.adj[i] = append(d.adj[i], edge{j, dist(d.pts[i], d.pts[j])})
		}
	}
	return d
}

func dist(a, b point) float64 { return math.Sqrt(float64(dist2(a, b))) }

func dist2(a, b point) int64 {
	var s int64
	for i := range a {
		d := int64(a[i]) - int64(b[i])
		s += d * d
	}
	return s
}

// fingerprint mixes a coordinate into 64 bits (splitmix64), so that a sum
// of fingerprints tells two sets of points apart.
func fingerprint(p point) uint64 {
	z := uint64(uint32(p[0]))<<42 ^ uint64(uint32(p[1]))<<21 ^ uint64(uint32(p[2]))
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// tag is what the last 8 bytes of a point's value hold.
func tag(p point) uint64 { return fingerprint(p) * 0x2545f4914f6cdd1d }

// value is the 100 bytes stored at p: the key, filler, and p's tag.
func value(p point) []byte {
	v := make([]byte, valueSize)
	copy(v, key3(p))
	for i := 12; i < valueSize-8; i++ {
		v[i] = byte(i)
	}
	binary.LittleEndian.PutUint64(v[valueSize-8:], tag(p))
	return v
}

// key3 is the 12-byte key of the key-value stores: x, y, z big-endian
// with the sign bit flipped, so that byte order is coordinate order.
func key3(p point) []byte {
	k := make([]byte, 12)
	putKey(k, p)
	return k
}

func putKey(k []byte, p point) {
	for i := range 3 {
		binary.BigEndian.PutUint32(k[4*i:], uint32(p[i])^0x80000000)
	}
}

func getKey(k []byte) point {
	var p point
	for i := range 3 {
		p[i] = int32(binary.BigEndian.Uint32(k[4*i:]) ^ 0x80000000)
	}
	return p
}

// answer sums what a query returned; two answers are equal when they hold
// the same points with the same values (up to a 64-bit collision).
type answer struct {
	n     int
	fp    uint64 // sum of the points' fingerprints
	tags  uint64 // sum of the values' tags
	bad   int    // values of the wrong size
	noVal bool   // the store returned no values (Redis GEO)
}

func (a *answer) add(p point, v []byte) {
	a.n++
	a.fp += fingerprint(p)
	if len(v) != valueSize {
		a.bad++
		return
	}
	a.tags += binary.LittleEndian.Uint64(v[valueSize-8:])
}

func (a *answer) addPoint(p point) {
	a.n++
	a.fp += fingerprint(p)
	a.noVal = true
}

func (a answer) matches(ref answer) bool {
	if a.n != ref.n || a.fp != ref.fp || a.bad != 0 {
		return false
	}
	return a.noVal || a.tags == ref.tags
}

// The brute-force references: every point looked at, no index.

func refBox(pts []point, lo, hi point) answer {
	var a answer
	for _, p := range pts {
		if p[0] >= lo[0] && p[0] <= hi[0] && p[1] >= lo[1] && p[1] <= hi[1] && p[2] >= lo[2] && p[2] <= hi[2] {
			a.n++
			a.fp += fingerprint(p)
			a.tags += tag(p)
		}
	}
	return a
}

func refWithin(pts []point, c point, r float64) answer {
	var a answer
	r2 := int64(math.Floor(r * r))
	for _, p := range pts {
		if dist2(p, c) <= r2 {
			a.n++
			a.fp += fingerprint(p)
			a.tags += tag(p)
		}
	}
	return a
}

// refNearest returns the squared distances of the k nearest points,
// nearest first: any correct answer has the same list (ties may pick
// different points).
func refNearest(pts []point, c point, k int) []int64 {
	best := make([]int64, 0, k+1)
	for _, p := range pts {
		d := dist2(p, c)
		if len(best) == k && d >= best[k-1] {
			continue
		}
		i, _ := slices.BinarySearch(best, d)
		best = slices.Insert(best, i, d)
		if len(best) > k {
			best = best[:k]
		}
	}
	return best
}

// walkAnswer sums a walk: the distinct nodes reached and their depths.
type walkAnswer struct {
	n      int
	fp     uint64
	depths int
}

func refWalk(d *dataset, start int32, hops int) walkAnswer {
	depth := map[int32]int{start: 0}
	frontier := []int32{start}
	for h := 1; h <= hops; h++ {
		var next []int32
		for _, u := range frontier {
			for _, e := range d.adj[u] {
				if _, ok := depth[e.to]; !ok {
					depth[e.to] = h
					next = append(next, e.to)
				}
			}
		}
		frontier = next
	}
	var a walkAnswer
	for u, h := range depth {
		a.n++
		a.fp += fingerprint(d.pts[u])
		a.depths += h
	}
	return a
}

// refPath is the least weight of a path of at most hops edges from one
// node to another (hop-bounded Bellman-Ford), ok false if none.
func refPath(d *dataset, from, to int32, hops int) (float64, bool) {
	cur := map[int32]float64{from: 0}
	changed := []int32{from}
	for range hops {
		next := maps.Clone(cur)
		in := map[int32]bool{}
		var ch []int32
		for _, u := range changed {
			for _, e := range d.adj[u] {
				w := cur[u] + e.w
				if old, ok := next[e.to]; ok && w >= old {
					continue
				}
				next[e.to] = w
				if !in[e.to] {
					in[e.to] = true
					ch = append(ch, e.to)
				}
			}
		}
		cur, changed = next, ch
	}
	w, ok := cur[to]
	return w, ok
}

// checkPath tells whether coords is a path of at most hops edges of the
// graph from from to to whose weight is w.
func checkPath(d *dataset, coords []point, from, to int32, hops int, w float64) bool {
	if len(coords) < 1 || len(coords)-1 > hops || coords[0] != d.pts[from] || coords[len(coords)-1] != d.pts[to] {
		return false
	}
	var sum float64
	for i := 1; i < len(coords); i++ {
		u, ok := d.index[coords[i-1]]
		v, ok2 := d.index[coords[i]]
		if !ok || !ok2 || int(u) >= d.nodes {
			return false
		}
		j := slices.IndexFunc(d.adj[u], func(e edge) bool { return e.to == v })
		if j < 0 {
			return false
		}
		sum += d.adj[u][j].w
	}
	return sameWeight(sum, w)
}

func sameWeight(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
