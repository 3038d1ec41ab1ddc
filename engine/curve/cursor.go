package curve

// A Cursor finds the keys of one box lazily, for a scan that reads an
// ordered index in curve order: given the key the scan has reached, Seek
// returns the next run of keys that lie inside the box. The scan reads
// keys while they stay in the run and asks again when one passes it, so a
// query costs what it reads plus one short step of the cursor per run it
// meets, and nothing is computed for the stretches of the box where the
// index holds no key.
//
// The cursor is a depth-first walk of the curve's subdivision tree cut
// down to the box, kept as a stack from one Seek to the next: since keys
// only grow, a cell behind the scan is never visited again, and each Seek
// resumes where the last one stopped, skipping at every level straight to
// the child holding the key it is given. A run is one cell that lies
// wholly inside the box, so every key in it is a point in the box and the
// scan does not test coordinates.
//
// Compare NextInBox, which answers one key alone from the top of the tree;
// a Cursor answers a rising sequence of keys at the cost of one walk.
//
// The zero Cursor holds no box; Reset gives it one. A Cursor is not safe
// for concurrent use; it is about 4 KiB, so callers that run many short
// scans keep one and Reset it.
type Cursor struct {
	c      *Curve
	b      box
	stack  [33]frame // the path from the box's root cell; depth frames
	depth  int
	run    Range // the last run returned
	hasRun bool
	done   bool // no key of the box is left
	last   Key  // the last key sought, to detect a restart
	root   rnode
}

// frame is one cell on the cursor's path and how its children meet the box.
type frame struct {
	nd  rnode
	hi  Key // the cell's last key
	cut cut
	w   uint16 // the next child (Hilbert digit) to look at
}

// Reset points the cursor at the box [min, max] (inclusive on every axis)
// of curve c, before its first key. It reports false, and the cursor finds
// nothing, for a box with fewer than Dims axes or min > max on some axis.
func (cu *Cursor) Reset(c *Curve, min, max []int32) bool {
	cu.c = nil
	cu.depth, cu.hasRun, cu.last = 0, false, Key{}
	b, ok := c.makeBox(min, max)
	if !ok {
		return false
	}
	cu.c, cu.b = c, b
	cu.root = c.root(&b)
	cu.restart()
	return true
}

// restart puts the walk back at the root cell.
func (cu *Cursor) restart() {
	cu.depth, cu.hasRun, cu.done = 0, false, false
	if cu.root.full {
		// The box is one cell: one run.
		cu.run = Range{cu.root.lo, cu.c.cellHi(&cu.root)}
		cu.hasRun = true
		return
	}
	cu.stack[0].nd = cu.root
	cu.push()
}

// push makes the cell already written at stack[depth].nd the top.
func (cu *Cursor) push() {
	f := &cu.stack[cu.depth]
	f.hi = cu.c.cellHi(&f.nd)
	var sp split
	cu.c.splitCell(&f.nd, &cu.b, &sp, false)
	f.cut, f.w = sp.cut, 0
	cu.depth++
}

// cellHi returns the last key of cell nd.
func (c *Curve) cellHi(nd *rnode) Key {
	hi := nd.lo
	fillOnes(&hi, uint(nd.level)*c.n, c.nbits)
	return hi
}

// Seek returns the run [lo, hi] that holds the smallest key >= k whose
// point lies in the box: lo <= that key <= hi (lo may be below k), and
// every key from lo to hi is a point in the box. ok is false when no key
// of the box is >= k.
//
// # Notes
//
// Seek is fastest when each k is at least the one before; a smaller k
// restarts the walk from the top, which is correct but costs as much as
// the first Seek. A k with bits set past Dims*32 lies between two keys and
// is first rounded up to the next one, as in NextInBox.
func (cu *Cursor) Seek(k Key) (lo, hi Key, ok bool) {
	if cu.c == nil {
		return Key{}, Key{}, false
	}
	if t := k; true {
		clearFrom(&t, cu.c.nbits)
		if t != k {
			// Between two keys: the next one is the first that can answer.
			if !addUnit(&t, cu.c.nbits) {
				return Key{}, Key{}, false
			}
			k = t
		}
	}
	if k.Less(cu.last) {
		cu.restart()
	}
	cu.last = k
	if cu.hasRun && !cu.run.Hi.Less(k) {
		return cu.run.Lo, cu.run.Hi, true
	}
	cu.hasRun = false
	if cu.done || cu.depth == 0 {
		cu.done = true
		return Key{}, Key{}, false
	}
	c := cu.c
	n := c.n
	mask := c.m.mask
	width := uint16(1) << n
	// Leave the cells that end before k.
	for cu.depth > 0 {
		if !cu.stack[cu.depth-1].hi.Less(k) {
			break
		}
		cu.depth--
	}
	if cu.depth == 0 {
		cu.done = true
		return Key{}, Key{}, false
	}
	// within: k lies in the top cell (rather than before it), so children
	// before k's own digit hold only keys below k.
	within := !k.Less(cu.stack[cu.depth-1].nd.lo)
	for cu.depth > 0 {
		f := &cu.stack[cu.depth-1]
		w := f.w
		var kw uint16
		if within {
			kw = uint16(getBits(&k, uint(f.nd.level)*n, n))
			w = max(w, kw)
		}
		descended := false
		for ; w < width; w++ {
			l := c.digitL(&f.nd, uint8(w))
			if !f.cut.meets(l, mask) {
				continue
			}
			f.w = w + 1
			// The child goes to the next slot, as the top if it straddles
			// the box's edge; a cell at the last level never does.
			ch := &cu.stack[cu.depth].nd
			c.child(&f.nd, uint8(w), l, ch)
			if f.cut.inside(l, mask) {
				cu.run = Range{ch.lo, c.cellHi(ch)}
				cu.hasRun = true
				return cu.run.Lo, cu.run.Hi, true
			}
			within = within && w == kw
			cu.push()
			descended = true
			break
		}
		if !descended {
			// No child of this cell holds a box key >= k.
			f.w = width
			cu.depth--
			within = false
		}
	}
	cu.done = true
	return Key{}, Key{}, false
}
