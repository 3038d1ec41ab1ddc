package curve

import (
	"math"
	"math/bits"
)

// Range is an inclusive span of keys, Lo <= Hi.
type Range struct{ Lo, Hi Key }

// DefaultBudget is the number of ranges Ranges aims for when given a
// budget <= 0.
const DefaultBudget = 64

// leavesPerRange bounds the refinement: the decomposition explores at most
// budget*leavesPerRange cells before merging down to budget ranges. More
// explores longer for a tighter cover; 8 keeps a 64-range 3-D query in tens
// of microseconds.
const leavesPerRange = 8

// maxLeaves caps the exploration whatever the budget.
const maxLeaves = 1 << 20

// box is a query box in unsigned coordinates.
type box struct{ lo, hi [8]uint32 }

// Contains reports whether p lies in the box [min, max], inclusive on every
// axis. It is false if min or max has fewer axes than p.
func Contains(min, max, p []int32) bool {
	if len(min) < len(p) || len(max) < len(p) {
		return false
	}
	for j, x := range p {
		if x < min[j] || x > max[j] {
			return false
		}
	}
	return true
}

// makeBox converts [min, max] to unsigned coordinates. ok is false for a
// box with fewer than dims axes or min > max on some axis: such a box holds
// no point.
func (c *Curve) makeBox(min, max []int32) (b box, ok bool) {
	if len(min) < c.dims || len(max) < c.dims {
		return b, false
	}
	for j := 0; j < c.dims; j++ {
		if min[j] > max[j] {
			return b, false
		}
		b.lo[j] = uint32(min[j]) ^ signBit
		b.hi[j] = uint32(max[j]) ^ signBit
	}
	return b, true
}

// rnode is a cell of the curve's subdivision tree: the cube of side
// 2^(32-level) at org, whose keys are lo .. lo with the low bits all set.
type rnode struct {
	lo    Key
	org   [8]uint32
	level uint8
	e, d  uint8 // Hilbert state for the cell's children
	full  bool
	kids  uint16 // number of children kept (those meeting the box); 0 = leaf
	first int32  // arena index of the first child
}

type hitem struct {
	waste float64
	idx   int32
}

// scratch is the working memory of one Ranges call, pooled per Curve.
type scratch struct {
	nodes []rnode
	heap  []hitem
	stack []int32
	gaps  []gapItem
	keep  []bool
}

type gapItem struct {
	size float64
	idx  int32
}

// cut describes how the children of a cell meet the box: bit n-1-j of
// i0 (i1) is set when the low (high) half of the cell on axis j meets the
// box, and f0/f1 when it lies inside it on that axis.
type cut struct{ i0, i1, f0, f1 uint8 }

// split is a cut with the sizes refine weighs cells by.
type split struct {
	cut
	ov0, ov1 [8]float64 // overlap lengths per axis
	nkids    int
}

func (c *Curve) splitCell(nd *rnode, b *box, sp *split, withVolume bool) {
	half := uint64(1) << (31 - nd.level)
	*sp = split{nkids: 1}
	for j := 0; j < c.dims; j++ {
		bit := uint8(1) << (c.n - 1 - uint(j))
		o := uint64(nd.org[j])
		lo, hi := uint64(b.lo[j]), uint64(b.hi[j])
		lowEnd, highStart, highEnd := o+half-1, o+half, o+2*half-1
		k := 0
		if lo <= lowEnd && hi >= o {
			sp.i0 |= bit
			k++
			if lo <= o && hi >= lowEnd {
				sp.f0 |= bit
			}
			if withVolume {
				sp.ov0[j] = float64(min(hi, lowEnd) - max(lo, o) + 1)
			}
		}
		if hi >= highStart && lo <= highEnd {
			sp.i1 |= bit
			k++
			if lo <= highStart && hi >= highEnd {
				sp.f1 |= bit
			}
			if withVolume {
				sp.ov1[j] = float64(min(hi, highEnd) - max(lo, highStart) + 1)
			}
		}
		sp.nkids *= k
	}
}

// meets and inside test a child's Morton digit l against a split.
func (x *cut) meets(l, mask uint8) bool  { return (l&^x.i1|^l&^x.i0)&mask == 0 }
func (x *cut) inside(l, mask uint8) bool { return (l&^x.f1|^l&^x.f0)&mask == 0 }
func (c *Curve) digitL(nd *rnode, w uint8) uint8 {
	if c.kind == Hilbert {
		return c.m.dec(nd.e, nd.d, w)
	}
	return w
}

// child fills ch as child w (Morton digit l) of nd.
func (c *Curve) child(nd *rnode, w, l uint8, ch *rnode) {
	ch.lo = nd.lo
	orBits(&ch.lo, uint(nd.level)*c.n, c.n, uint64(w))
	ch.level = nd.level + 1
	shift := 31 - uint(nd.level)
	for j := 0; j < c.dims; j++ {
		ch.org[j] = nd.org[j] | uint32(l>>(c.n-1-uint(j))&1)<<shift
	}
	if c.kind == Hilbert {
		ch.e, ch.d = c.m.next(nd.e, nd.d, w)
	}
	ch.kids, ch.first, ch.full = 0, 0, false
}

// root returns the smallest cell that holds the whole box, with its
// Hilbert state.
func (c *Curve) root(b *box) rnode {
	level := uint(32)
	for j := 0; j < c.dims; j++ {
		level = min(level, uint(bits.LeadingZeros32(b.lo[j]^b.hi[j])))
	}
	var r rnode
	r.e, r.d = startE, startD
	// The cell's keys start with those of its corner b.lo. Encoding the
	// corner whole runs from tables; only the state below the cell is
	// then stepped level by level.
	u := b.lo
	r.lo = c.encodeU(&u)
	clearFrom(&r.lo, level*c.n)
	if c.kind == Hilbert {
		for t := uint(0); t < level; t++ {
			r.e, r.d = c.m.next(r.e, r.d, uint8(getBits(&r.lo, t*c.n, c.n)))
		}
	}
	r.level = uint8(level)
	for j := 0; j < c.dims; j++ {
		if level == 0 {
			r.org[j] = 0
		} else {
			r.org[j] = b.lo[j] &^ (1<<(32-level) - 1)
		}
	}
	r.full = true
	for j := 0; j < c.dims; j++ {
		hiEnd := uint64(r.org[j]) + 1<<(32-level) - 1
		if b.lo[j] != r.org[j] || uint64(b.hi[j]) != hiEnd {
			r.full = false
		}
	}
	return r
}

// Ranges decomposes the box [min, max] (inclusive on every axis) into at
// most budget sorted, disjoint key ranges whose union holds the key of
// every point in the box. The ranges may also hold keys of points outside
// the box, so callers filter with Contains. budget <= 0 means
// DefaultBudget.
//
// # Notes
//
// A box with fewer than Dims axes, or with min > max on some axis, holds no
// point and yields no ranges.
func (c *Curve) Ranges(min, max []int32, budget int) []Range {
	return c.AppendRanges(nil, min, max, budget)
}

// AppendRanges is Ranges appending to dst. Its working memory is pooled in
// the Curve, so with enough capacity in dst it does not allocate.
func (c *Curve) AppendRanges(dst []Range, min, max []int32, budget int) []Range {
	b, ok := c.makeBox(min, max)
	if !ok {
		return dst
	}
	if budget <= 0 {
		budget = DefaultBudget
	}
	s := c.pool.Get().(*scratch)
	defer c.pool.Put(s)
	c.refine(s, &b, budget)
	start := len(dst)
	dst = c.emit(s, dst)
	return c.mergeGaps(s, dst, start, budget)
}

// refine grows the subdivision tree best first: the cell that covers the
// most keys outside the box is split next, until every leaf is inside the
// box or the tree has budget*leavesPerRange leaves.
func (c *Curve) refine(s *scratch, b *box, budget int) {
	s.nodes = append(s.nodes[:0], c.root(b))
	s.heap = s.heap[:0]
	limit := maxLeaves
	if budget < maxLeaves/leavesPerRange {
		limit = budget * leavesPerRange
	}
	leaves := 1
	if !s.nodes[0].full {
		s.push(hitem{math.Inf(1), 0})
	}
	mask := c.m.mask
	width := 1 << c.n
	var sp split
	for len(s.heap) > 0 {
		it := s.pop()
		nd := s.nodes[it.idx]
		c.splitCell(&nd, b, &sp, true)
		if leaves+sp.nkids-1 > limit {
			// Stop rather than look for smaller splits further down the
			// heap: measured, that costs three times the work for under
			// 0.1% less over-scan.
			break
		}
		leaves += sp.nkids - 1
		first := int32(len(s.nodes))
		s.nodes[it.idx].first = first
		s.nodes[it.idx].kids = uint16(sp.nkids)
		cellVol := math.Ldexp(1, (31-int(nd.level))*c.dims)
		for w := 0; w < width; w++ {
			l := c.digitL(&nd, uint8(w))
			if !sp.meets(l, mask) {
				continue
			}
			var ch rnode
			c.child(&nd, uint8(w), l, &ch)
			ch.full = sp.inside(l, mask)
			s.nodes = append(s.nodes, ch)
			if !ch.full {
				vol := 1.0
				for j := 0; j < c.dims; j++ {
					if l>>(c.n-1-uint(j))&1 == 0 {
						vol *= sp.ov0[j]
					} else {
						vol *= sp.ov1[j]
					}
				}
				s.push(hitem{cellVol - vol, int32(len(s.nodes) - 1)})
			}
		}
	}
}

// emit appends the leaves of the tree in curve order, merging ranges that
// touch.
func (c *Curve) emit(s *scratch, dst []Range) []Range {
	start := len(dst)
	s.stack = append(s.stack[:0], 0)
	for len(s.stack) > 0 {
		i := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		nd := &s.nodes[i]
		if nd.kids > 0 {
			for k := int32(nd.kids) - 1; k >= 0; k-- {
				s.stack = append(s.stack, nd.first+k)
			}
			continue
		}
		lo, hi := nd.lo, nd.lo
		fillOnes(&hi, uint(nd.level)*c.n, c.nbits)
		if len(dst) > start {
			last := &dst[len(dst)-1]
			next := last.Hi
			if addUnit(&next, c.nbits) && next == lo {
				last.Hi = hi
				continue
			}
		}
		dst = append(dst, Range{lo, hi})
	}
	return dst
}

// mergeGaps reduces dst[start:] to at most budget ranges by closing the
// smallest gaps between them, which adds the fewest keys.
func (c *Curve) mergeGaps(s *scratch, dst []Range, start, budget int) []Range {
	rs := dst[start:]
	if len(rs) <= budget {
		return dst
	}
	// Keep the budget-1 largest gaps: a min-heap of them, smallest on top.
	keepN := budget - 1
	s.gaps = s.gaps[:0]
	for i := 0; i+1 < len(rs); i++ {
		g := gapItem{gapSize(&rs[i].Hi, &rs[i+1].Lo), int32(i)}
		if len(s.gaps) < keepN {
			s.gaps = append(s.gaps, g)
			gapUp(s.gaps, len(s.gaps)-1)
		} else if keepN > 0 && gapLess(s.gaps[0], g) {
			s.gaps[0] = g
			gapDown(s.gaps, 0)
		}
	}
	s.keep = s.keep[:0]
	for range rs {
		s.keep = append(s.keep, false)
	}
	for _, g := range s.gaps {
		s.keep[g.idx] = true
	}
	out := 0
	for i := range rs {
		if i > 0 && !s.keep[i-1] {
			rs[out-1].Hi = rs[i].Hi
			continue
		}
		rs[out] = rs[i]
		out++
	}
	return dst[:start+out]
}

// gapSize approximates b - a as a float64 (only its order matters).
func gapSize(a, b *Key) float64 {
	var d [4]uint64
	var borrow uint64
	for i := 3; i >= 0; i-- {
		d[i], borrow = bits.Sub64(b[i], a[i], borrow)
	}
	return float64(d[0])*0x1p192 + float64(d[1])*0x1p128 + float64(d[2])*0x1p64 + float64(d[3])
}

// gapLess orders gaps by size, then later gaps first, so that ties keep
// the earliest gaps deterministically.
func gapLess(a, b gapItem) bool {
	if a.size != b.size {
		return a.size < b.size
	}
	return a.idx > b.idx
}

func gapUp(h []gapItem, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !gapLess(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func gapDown(h []gapItem, i int) {
	for {
		l, m := 2*i+1, i
		if l < len(h) && gapLess(h[l], h[m]) {
			m = l
		}
		if r := l + 1; r < len(h) && gapLess(h[r], h[m]) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// push and pop keep s.heap a max-heap on waste (ties: lower index first).
func (s *scratch) push(it hitem) {
	s.heap = append(s.heap, it)
	h := s.heap
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !heapAbove(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (s *scratch) pop() hitem {
	h := s.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	s.heap = h
	i := 0
	for {
		l, m := 2*i+1, i
		if l < n && heapAbove(h[l], h[m]) {
			m = l
		}
		if r := l + 1; r < n && heapAbove(h[r], h[m]) {
			m = r
		}
		if m == i {
			return top
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func heapAbove(a, b hitem) bool {
	if a.waste != b.waste {
		return a.waste > b.waste
	}
	return a.idx < b.idx
}
