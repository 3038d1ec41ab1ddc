package engine

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/bits"
	"slices"

	"github.com/cubelinux/cube/engine/curve"
)

// Nearest neighbours and radius queries are built on the region scan: a
// query reads the points of a box around its centre and keeps those close
// enough. Distances are Euclidean over the integer coordinates and are
// compared exactly, as squared distances: a difference on one axis is
// below 2^32, its square below 2^64, and the sum over eight axes below
// 2^67, so the sums are 128-bit integers (dist2). A float64 would round
// apart points at 2^32 whose distances differ by one, and would then order
// them by chance.
//
// Nearby needs a box that surely holds the k nearest points, and reads
// it once. It takes the box from the tree itself: the points next to the
// centre's curve key are real points, so the k-th smallest distance among
// them, D, bounds the k-th nearest distance from above, and the box of
// half-side h = ceil(√D) holds those k points. Every point outside the box
// is farther than h on some axis, so farther than all k of them: it can
// neither beat nor tie the k-th, and the k nearest inside the box are the
// k nearest. With MaxDist the box shrinks to half-side floor(MaxDist)
// when that is smaller: a point outside it is farther than MaxDist, and if
// MaxDist < h, some of the k points may be cut off, but nothing outside
// the box could take their place. When the tree holds fewer than k points
// the box is all of int32. Boxes are clamped to int32, which loses
// nothing, since no point lies beyond. Ties in distance go by curve
// order.

// NearbyOptions bound a nearest-neighbour query. The zero value has no
// bound.
type NearbyOptions struct {
	// MaxDist leaves out points farther than MaxDist (a point at exactly
	// MaxDist is kept), in metres on a geo namespace. 0 means no bound.
	MaxDist float64
}

// Neighbor is one point a nearest-neighbour query found.
type Neighbor struct {
	Coord []int32
	Value []byte
	// Dist is the Euclidean distance from the query's centre, rounded to
	// a float64 (the order of the results is by the exact distance); on
	// a geo namespace, the distance in metres by GeoDistance.
	Dist float64
}

// WithinOptions bound a radius query. The zero value returns every point
// within the radius.
type WithinOptions struct {
	Limit int // at most this many points; 0 = all
}

// Nearby returns the k points nearest to c, nearest first, from a
// snapshot taken now. See Tx.Nearby.
//
// It reads the namespace's read view (the columnar run and its delta,
// as Region does), not a transaction's B-tree: no tree to copy, and
// arrays to scan.
func (ns *Namespace) Nearby(ctx context.Context, c []int32, k int, o NearbyOptions) ([]Neighbor, error) {
	v, err := ns.frozenView(ctx)
	if err != nil {
		return nil, err
	}
	return ns.nearby(ctx, nearSource{v: v}, c, k, o)
}

// Within iterates the values at distance at most r from c, in curve
// order, from a snapshot taken now. See Tx.Within.
func (ns *Namespace) Within(ctx context.Context, c []int32, r float64, o WithinOptions) (iter.Seq2[[]int32, []byte], error) {
	v, err := ns.frozenView(ctx)
	if err != nil {
		return nil, err
	}
	return ns.within(nearSource{v: v}, c, r, o)
}

// CountWithin returns the number of values at distance at most r from c.
func (ns *Namespace) CountWithin(ctx context.Context, c []int32, r float64) (int, error) {
	seq, err := ns.Within(ctx, c, r, WithinOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for range seq {
		n++
	}
	return n, nil
}

// Nearby returns the k points nearest to c by Euclidean distance over the
// integer coordinates, nearest first; points at the same distance come in
// curve order. Fewer than k come back when the namespace holds fewer (or
// fewer within o.MaxDist). A read-write transaction sees its own writes.
//
// On a geo namespace the distance is GeoDistance, metres on the sphere,
// across the antimeridian and over the poles; the order is by that
// float64, ties in curve order.
//
// The cost is that of a region scan of a box a little larger than the
// ball holding the k points; ctx is checked between and during scans, so
// a large k over a large namespace can be stopped.
//
// # Errors
//
// ErrDims for a coordinate of the wrong length; ErrBadOptions for k < 1
// or a MaxDist that is negative or NaN; ErrGeoRange for a centre outside
// longitude [-180, 180] / latitude [-90, 90] on a geo namespace.
func (tx *Tx) Nearby(ctx context.Context, c []int32, k int, o NearbyOptions) ([]Neighbor, error) {
	if err := tx.check(false); err != nil {
		return nil, err
	}
	return tx.ns.nearby(ctx, tx.nearSource(), c, k, o)
}

// nearby is Nearby over src.
func (ns *Namespace) nearby(ctx context.Context, src nearSource, c []int32, k int, o NearbyOptions) ([]Neighbor, error) {
	if err := checkCoord(c, ns.dims); err != nil {
		return nil, err
	}
	if k < 1 {
		return nil, fmt.Errorf("%w: nearby needs k >= 1 neighbours, got %d", ErrBadOptions, k)
	}
	limit := noLimit
	if o.MaxDist != 0 {
		var err error
		if limit, err = radius2("MaxDist", o.MaxDist); err != nil {
			return nil, err
		}
	}
	if ns.geo {
		return ns.geoNearby(ctx, src, c, k, o.MaxDist)
	}
	q := nearQuery{ctx: ctx, cv: ns.curve, dims: ns.dims, k: k, limit: limit, src: src}
	q.centre = toPkey(c)
	if err := q.run(); err != nil {
		return nil, err
	}
	return q.results(), nil
}

// Within iterates the values at distance at most r from c (a point at
// exactly r is inside) in curve order, at most o.Limit of them. r may be
// +Inf (every point). The coordinate slice is reused between steps; copy
// it to keep it. A read-write transaction sees its own writes.
//
// On a geo namespace r is in metres, and a point is inside when its
// GeoDistance from c is at most r. A radius that crosses the
// antimeridian reads two boxes, whose points are gathered before they
// are yielded, in curve order.
//
// # Errors
//
// ErrDims for a coordinate of the wrong length; ErrBadOptions for an r
// that is negative or NaN, or a negative Limit; ErrGeoRange for a centre
// out of range on a geo namespace.
func (tx *Tx) Within(c []int32, r float64, o WithinOptions) (iter.Seq2[[]int32, []byte], error) {
	if err := tx.check(false); err != nil {
		return nil, err
	}
	return tx.ns.within(tx.nearSource(), c, r, o)
}

// within is Within over src.
func (ns *Namespace) within(src nearSource, c []int32, r float64, o WithinOptions) (iter.Seq2[[]int32, []byte], error) {
	if err := checkCoord(c, ns.dims); err != nil {
		return nil, err
	}
	if o.Limit < 0 {
		return nil, fmt.Errorf("%w: within's limit must be >= 0 (0 = all), got %d", ErrBadOptions, o.Limit)
	}
	r2, err := radius2("radius", r)
	if err != nil {
		return nil, err
	}
	if ns.geo {
		if err := ns.geoCentre(c); err != nil {
			return nil, err
		}
		return ns.geoWithin(src, c, r, o.Limit), nil
	}
	centre, dims := toPkey(c), ns.dims
	min, max := box(&centre, dims, r2.sqrtFloor())
	return func(yield func([]int32, []byte) bool) {
		buf := make([]int32, dims)
		n := 0
		src.scan(ns.curve, min, max, func(p *pkey, val []byte) bool {
			if r2.less(distSq(p, &centre, dims)) {
				return true
			}
			copy(buf, p[:dims])
			n++
			return yield(buf, val) && (o.Limit == 0 || n < o.Limit)
		})
	}, nil
}

// CountWithin returns the number of values at distance at most r from c.
func (tx *Tx) CountWithin(c []int32, r float64) (int, error) {
	seq, err := tx.Within(c, r, WithinOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for range seq {
		n++
	}
	return n, nil
}

// dist2 is a squared distance, a 128-bit integer.
type dist2 struct{ hi, lo uint64 }

// noLimit is above every squared distance between int32 coordinates.
var noLimit = dist2{hi: math.MaxUint64, lo: math.MaxUint64}

func (a dist2) less(b dist2) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }

// distSq returns the squared distance between a and b over dims axes.
func distSq(a, b *pkey, dims int) dist2 {
	var d dist2
	var carry uint64
	for i := 0; i < dims; i++ {
		x := int64(a[i]) - int64(b[i])
		if x < 0 {
			x = -x
		}
		// |x| < 2^32, so its square fits in 64 bits.
		d.lo, carry = bits.Add64(d.lo, uint64(x)*uint64(x), 0)
		d.hi += carry
	}
	return d
}

// square returns h*h for h < 2^64.
func square(h uint64) dist2 {
	hi, lo := bits.Mul64(h, h)
	return dist2{hi, lo}
}

// float returns d rounded to the nearest float64 (rounding once: the top
// 64 bits, with a sticky bit for the rest, round as the whole would).
func (d dist2) float() float64 {
	if d.hi == 0 {
		return float64(d.lo)
	}
	n := uint(bits.LeadingZeros64(d.hi))
	top, rest := d.hi, d.lo
	if n > 0 {
		top, rest = d.hi<<n|d.lo>>(64-n), d.lo<<n
	}
	if rest != 0 {
		top |= 1
	}
	return math.Ldexp(float64(top), 64-int(n))
}

// sqrtFloor returns the largest h with h*h <= d, capped at 2^40 (beyond
// any distance between int32 coordinates).
func (d dist2) sqrtFloor() uint64 {
	if d.hi >= 1<<16 { // d >= 2^80
		return 1 << 40
	}
	h := uint64(math.Sqrt(d.float()))
	for d.less(square(h)) {
		h--
	}
	for !d.less(square(h + 1)) {
		h++
	}
	return h
}

// sqrtCeil returns the smallest h with h*h >= d.
func (d dist2) sqrtCeil() uint64 {
	h := d.sqrtFloor()
	if square(h).less(d) {
		h++
	}
	return h
}

// radius2 returns floor(r*r) exactly: a point at squared distance D (an
// integer) is within r exactly when D <= floor(r*r). r must be >= 0 and
// not NaN; +Inf (or anything at least 2^34, beyond any distance between
// int32 coordinates) gives noLimit.
func radius2(what string, r float64) (dist2, error) {
	if !(r >= 0) {
		return dist2{}, fmt.Errorf("%w: %s must be a number >= 0, got %v", ErrBadOptions, what, r)
	}
	if r >= 1<<34 {
		return noLimit, nil
	}
	if r == 0 {
		return dist2{}, nil
	}
	// r = m * 2^e with m an integer of 53 bits, so r*r = m*m * 2^(2e),
	// and m*m is exact in 128 bits.
	frac, exp := math.Frexp(r)
	m := uint64(frac * (1 << 53))
	hi, lo := bits.Mul64(m, m)
	s := 2 * (exp - 53)
	switch {
	case s >= 0: // r*r < 2^68, so nothing is shifted out
		hi = hi<<s | lo>>(64-s)
		lo <<= s
	case s > -64:
		s = -s
		lo = lo>>s | hi<<(64-s)
		hi >>= s
	case s > -128:
		lo, hi = hi>>(-s-64), 0
	default:
		hi, lo = 0, 0
	}
	return dist2{hi, lo}, nil
}

// box returns the box of half-side h around c, clamped to int32. Clamping
// loses nothing: no point lies beyond int32.
func box(c *pkey, dims int, h uint64) (min, max []int32) {
	min, max = make([]int32, dims), make([]int32, dims)
	if h > 1<<33 {
		h = 1 << 33
	}
	for i := range dims {
		lo, hi := int64(c[i])-int64(h), int64(c[i])+int64(h)
		min[i] = int32(maxInt64(lo, math.MinInt32))
		max[i] = int32(minInt64(hi, math.MaxInt32))
	}
	return min, max
}

func minInt64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// fullSide is a half-side whose box, clamped, is all of int32 on every
// axis from any centre.
const fullSide = 1 << 32

// nearQuery is one Nearby call.
type nearQuery struct {
	ctx    context.Context
	cv     *curve.Curve
	dims   int
	k      int
	limit  dist2 // squared MaxDist, or noLimit
	src    nearSource
	centre pkey
	heap   nearHeap
	err    error
	seen   int  // items scanned, for checking ctx now and then
	geo    bool // distances are metres as float64 bits (geonear.go)
}

// nearCand is a candidate neighbour. Its curve key, needed only to break
// a tie in distance, is computed when a tie asks for it.
type nearCand struct {
	d      dist2
	c      pkey
	val    []byte
	key    curve.Key
	hasKey bool
}

// preallocMax bounds the room made up front for k candidates: a k far
// above the namespace's size must not allocate k of them.
const preallocMax = 1024

// ctxEvery is how many scanned points pass between checks of ctx.
const ctxEvery = 1 << 12

func (q *nearQuery) run() error {
	if err := q.ctx.Err(); err != nil {
		return err
	}
	side := q.firstSide()
	if q.limit != noLimit {
		side = min(side, q.limit.sqrtFloor())
	}
	if q.err == nil {
		q.scan(side)
	}
	return q.err
}

// nearCandidates is the least number of points on each side of the
// centre's curve key that firstSide reads. Reading only k makes a poor
// bound for small k; a few dozen cost little and make the box close to
// the smallest that holds the ball: on 1,000,000 random 3-D points in
// [0,1024)^3, k=10 reads boxes of about 40 points on average (the ball's
// bounding box holds about 22), k=1 about 4 points, against 63 and 8
// with only k on each side. Shrinking the guess to save reading points
// costs a second scan as often as not, and more in all.
const nearCandidates = 32

// firstSide returns the half-side of the first box to read: from the
// points next to the centre on the curve (see the top of this file), or
// all of int32 when the tree holds fewer than k of them.
func (q *nearQuery) firstSide() uint64 {
	if q.src.size() <= q.k {
		return fullSide
	}
	best := make([]dist2, 0, min(q.k, preallocMax)) // a max-heap of the k smallest distances seen
	n := 0
	visit := func(c *pkey) bool {
		if n++; n%ctxEvery == 0 {
			if q.err = q.ctx.Err(); q.err != nil {
				return false
			}
		}
		d := distSq(c, &q.centre, q.dims)
		if len(best) < q.k {
			best = append(best, d)
			upD(best, len(best)-1)
		} else if d.less(best[0]) {
			best[0] = d
			downD(best, 0)
		}
		return n < max(q.k, nearCandidates)
	}
	pivot := q.cv.Encode(q.centre[:q.dims])
	q.src.probe(pivot, true, visit)
	n = 0
	q.src.probe(pivot, false, visit)
	if len(best) < q.k {
		return fullSide
	}
	return min(best[0].sqrtCeil(), fullSide)
}

// scan reads the box of half-side h into a fresh heap.
func (q *nearQuery) scan(h uint64) {
	q.heap = make(nearHeap, 0, min(q.k, preallocMax))
	min, max := box(&q.centre, q.dims, h)
	q.src.scan(q.cv, min, max, func(p *pkey, val []byte) bool {
		q.seen++
		if q.seen%ctxEvery == 0 {
			if q.err = q.ctx.Err(); q.err != nil {
				return false
			}
		}
		d := distSq(p, &q.centre, q.dims)
		if q.limit.less(d) {
			return true
		}
		hp := &q.heap
		if len(*hp) < q.k {
			*hp = append(*hp, nearCand{d: d, c: *p, val: val})
			q.up(len(*hp) - 1)
			return true
		}
		top := &(*hp)[0]
		if d.less(top.d) || d == top.d && q.keyLess(p, top) {
			*top = nearCand{d: d, c: *p, val: val}
			q.down(0)
		}
		return true
	})
}

// keyLess reports whether the point p sorts before the candidate b on
// the curve.
func (q *nearQuery) keyLess(p *pkey, b *nearCand) bool {
	q.key(b)
	return q.cv.Encode(p[:q.dims]).Less(b.key)
}

func (q *nearQuery) key(c *nearCand) {
	if !c.hasKey {
		c.key, c.hasKey = q.cv.Encode(c.c[:q.dims]), true
	}
}

// after reports whether a ranks after b: farther, or as far and later on
// the curve.
func (q *nearQuery) after(a, b *nearCand) bool {
	if a.d != b.d {
		return b.d.less(a.d)
	}
	q.key(a)
	q.key(b)
	return b.key.Less(a.key)
}

// The heap is a max-heap under after: its root is the worst candidate
// kept, the one a nearer point replaces.
type nearHeap []nearCand

func (q *nearQuery) up(i int) {
	h := q.heap
	for i > 0 {
		p := (i - 1) / 2
		if !q.after(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *nearQuery) down(i int) {
	h := q.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && q.after(&h[r], &h[l]) {
			m = r
		}
		if !q.after(&h[m], &h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// results returns the heap's candidates nearest first.
func (q *nearQuery) results() []Neighbor {
	h := q.heap
	slices.SortFunc(h, func(a, b nearCand) int {
		switch {
		case q.after(&a, &b):
			return 1
		case q.after(&b, &a):
			return -1
		}
		return 0
	})
	out := make([]Neighbor, len(h))
	coords := make([]int32, len(h)*q.dims)
	for i := range h {
		c := coords[i*q.dims : (i+1)*q.dims : (i+1)*q.dims]
		copy(c, h[i].c[:q.dims])
		d := math.Sqrt(h[i].d.float())
		if q.geo {
			d = math.Float64frombits(h[i].d.lo)
		}
		out[i] = Neighbor{Coord: c, Value: h[i].val, Dist: d}
	}
	return out
}

// upD and downD keep a max-heap of distances.
func upD(h []dist2, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h[p].less(h[i]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func downD(h []dist2, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[l].less(h[r]) {
			m = r
		}
		if !h[i].less(h[m]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
