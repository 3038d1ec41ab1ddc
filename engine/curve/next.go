package curve

// NextInBox returns the smallest key >= k whose point lies in the box
// [min, max], and false if there is none. A scan over keys in curve order
// uses it to jump over the stretches of the curve outside the box (the
// BIGMIN step of Tropf and Herzog, generalised here to both curves by
// walking the curve's subdivision tree).
//
// # Notes
//
// It costs O(32 * 2^Dims) steps in the worst case, typically far fewer.
// A k with bits set past Dims*32 is first rounded up to the next key. A
// box with fewer than Dims axes or min > max on some axis holds nothing.
func (c *Curve) NextInBox(k Key, min, max []int32) (Key, bool) {
	b, ok := c.makeBox(min, max)
	if !ok {
		return Key{}, false
	}
	if t := k; true {
		clearFrom(&t, c.nbits)
		if t != k {
			k = t
			if !addUnit(&k, c.nbits) {
				return Key{}, false
			}
		}
	}
	mask := c.m.mask
	var path [33]rnode
	path[0].e, path[0].d = startE, startD
	var sp split
	level := 0
	// Follow k down the tree while its cell meets the box. If the cell
	// lies inside the box, k itself is the answer.
	for {
		nd := &path[level]
		if c.cellInside(nd, &b) {
			return k, true
		}
		c.splitCell(nd, &b, &sp, false)
		w := uint8(getBits(&k, uint(level)*c.n, c.n))
		l := c.digitL(nd, w)
		if !sp.meets(l, mask) {
			break
		}
		c.child(nd, w, l, &path[level+1])
		level++
	}
	// k's cell at level+1 misses the box: the answer is the first key of
	// the box in the nearest later sibling, searching upward.
	width := 1 << c.n
	for ; level >= 0; level-- {
		nd := &path[level]
		c.splitCell(nd, &b, &sp, false)
		wk := int(getBits(&k, uint(level)*c.n, c.n))
		for w := wk + 1; w < width; w++ {
			l := c.digitL(nd, uint8(w))
			if sp.meets(l, mask) {
				var ch rnode
				c.child(nd, uint8(w), l, &ch)
				return c.firstIn(&ch, &b), true
			}
		}
	}
	return Key{}, false
}

// cellInside reports whether the whole cell nd lies in the box.
func (c *Curve) cellInside(nd *rnode, b *box) bool {
	last := uint64(1)<<(32-uint(nd.level)) - 1
	for j := 0; j < c.dims; j++ {
		if b.lo[j] > nd.org[j] || uint64(b.hi[j]) < uint64(nd.org[j])+last {
			return false
		}
	}
	return true
}

// firstIn returns the smallest key in cell nd whose point is in the box;
// nd must meet the box.
func (c *Curve) firstIn(nd *rnode, b *box) Key {
	mask := c.m.mask
	width := 1 << c.n
	var sp split
	cur := *nd
	for !c.cellInside(&cur, b) {
		c.splitCell(&cur, b, &sp, false)
		for w := 0; w < width; w++ {
			l := c.digitL(&cur, uint8(w))
			if sp.meets(l, mask) {
				var ch rnode
				c.child(&cur, uint8(w), l, &ch)
				cur = ch
				break
			}
		}
	}
	return cur.lo
}
