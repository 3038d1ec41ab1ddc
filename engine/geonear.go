package engine

import (
	"context"
	"fmt"
	"iter"
	"math"

	"github.com/cubelinux/cube/engine/curve"
)

// Nearby, Within and CountWithin on a geo namespace: distances are
// metres by GeoDistance, the boxes read are those of geoCover (see
// geo.go), and every point they hold is measured and kept only if it is
// close enough, so nothing depends on how tight the boxes are.
//
// Nearby takes its radius as the Euclidean Nearby takes its box: the
// points next to the centre's curve key are real points, so the k-th
// smallest of their distances, D, bounds the k-th nearest distance from
// above, and the cap of radius D holds k points. Every point outside it
// is farther than all k: reading the cover of that one cap, fully, finds
// the k nearest. (Growing a radius until k are found would read caps
// again and again; the curve's neighbours give a radius that holds k
// from the first read.) A distance is a float64 >= 0, whose bits order
// as the numbers do, so the heap of dist2 serves both metrics.

// geoCentre checks a query's centre on a geo namespace.
func (ns *Namespace) geoCentre(c []int32) error {
	if err := checkGeo(c); err != nil {
		return fmt.Errorf("%w: the centre of a query in namespace %q", err, ns.name)
	}
	return nil
}

func geoD2(d float64) dist2 { return dist2{lo: math.Float64bits(d)} }

// geoNearby is Tx.Nearby on a geo namespace; maxDist is in metres, 0 for
// no bound.
func (ns *Namespace) geoNearby(ctx context.Context, src nearSource, c []int32, k int, maxDist float64) ([]Neighbor, error) {
	if err := ns.geoCentre(c); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q := nearQuery{ctx: ctx, cv: ns.curve, dims: 2, k: k, src: src, geo: true}
	q.centre = toPkey(c)
	cosC := math.Cos(float64(q.centre[1]) * unitRad)
	r := q.geoFirstRadius(cosC)
	if q.err != nil {
		return nil, q.err
	}
	if maxDist != 0 {
		r = min(r, maxDist)
	}
	q.heap = make(nearHeap, 0, min(q.k, preallocMax))
	for _, b := range geoCover(&q.centre, r) {
		q.src.scan(q.cv, b.min[:], b.max[:], func(p *pkey, val []byte) bool {
			if q.seen++; q.seen%ctxEvery == 0 {
				if q.err = q.ctx.Err(); q.err != nil {
					return false
				}
			}
			if d := geoDist(&q.centre, p, cosC); d <= r {
				q.offer(geoD2(d), p, val)
			}
			return true
		})
		if q.err != nil {
			return nil, q.err
		}
	}
	return q.results(), nil
}

// geoFirstRadius returns the radius of the cap to read: the k-th
// smallest distance among the centre's neighbours on the curve, or +Inf
// when the tree holds fewer than k points.
func (q *nearQuery) geoFirstRadius(cosC float64) float64 {
	if q.src.size() <= q.k {
		return math.Inf(1)
	}
	best := make([]dist2, 0, min(q.k, preallocMax)) // a max-heap of the k smallest distances seen
	n := 0
	visit := func(c *pkey) bool {
		if n++; n%ctxEvery == 0 {
			if q.err = q.ctx.Err(); q.err != nil {
				return false
			}
		}
		d := geoD2(geoDist(&q.centre, c, cosC))
		if len(best) < q.k {
			best = append(best, d)
			upD(best, len(best)-1)
		} else if d.less(best[0]) {
			best[0] = d
			downD(best, 0)
		}
		return n < max(q.k, nearCandidates)
	}
	pivot := q.cv.Encode(q.centre[:2])
	q.src.probe(pivot, true, visit)
	n = 0
	q.src.probe(pivot, false, visit)
	if len(best) < q.k {
		return math.Inf(1)
	}
	return math.Float64frombits(best[0].lo)
}

// offer puts a point at distance d into the heap of the k best, if it
// beats the worst kept.
func (q *nearQuery) offer(d dist2, p *pkey, val []byte) {
	hp := &q.heap
	if len(*hp) < q.k {
		*hp = append(*hp, nearCand{d: d, c: *p, val: val})
		q.up(len(*hp) - 1)
		return
	}
	top := &(*hp)[0]
	if d.less(top.d) || d == top.d && q.keyLess(p, top) {
		*top = nearCand{d: d, c: *p, val: val}
		q.down(0)
	}
}

// geoWithin is Within on a geo namespace; r is in metres.
func (ns *Namespace) geoWithin(src nearSource, c []int32, r float64, limit int) iter.Seq2[[]int32, []byte] {
	centre, cv := toPkey(c), ns.curve
	cosC := math.Cos(float64(centre[1]) * unitRad)
	boxes := geoCover(&centre, r)
	return func(yield func([]int32, []byte) bool) {
		buf := make([]int32, 2)
		n := 0
		emit := func(p *pkey, val []byte) bool {
			copy(buf, p[:2])
			n++
			return yield(buf, val) && (limit == 0 || n < limit)
		}
		if len(boxes) == 1 {
			src.scan(cv, boxes[0].min[:], boxes[0].max[:], func(p *pkey, val []byte) bool {
				if geoDist(&centre, p, cosC) > r {
					return true
				}
				return emit(p, val)
			})
			return
		}
		// Two boxes, one each side of the antimeridian: their keys
		// interleave on the curve, so each box's hits are gathered (in
		// curve order) and the two lists merged.
		var hits [2][]geoHit
		for i, b := range boxes {
			src.scan(cv, b.min[:], b.max[:], func(p *pkey, val []byte) bool {
				if geoDist(&centre, p, cosC) <= r {
					hits[i] = append(hits[i], geoHit{cv.Encode(p[:2]), *p, val})
				}
				return true
			})
		}
		a, b := hits[0], hits[1]
		for len(a) > 0 || len(b) > 0 {
			var h *geoHit
			if len(b) == 0 || len(a) > 0 && a[0].key.Less(b[0].key) {
				h, a = &a[0], a[1:]
			} else {
				h, b = &b[0], b[1:]
			}
			if !emit(&h.c, h.val) {
				return
			}
		}
	}
}

type geoHit struct {
	key curve.Key
	c   pkey
	val []byte
}
