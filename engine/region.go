package engine

import (
	"sync"

	"github.com/cubelinux/cube/engine/curve"
	"github.com/tidwall/btree"
)

// A region scan reads the tree in curve order and asks a curve.Cursor, as
// it goes, where the box's keys continue: the cursor answers with a run of
// keys that all lie in the box. A key in the run is a hit without a look
// at its coordinates; a key past the run is tested against the box, and
// only a key outside it asks the cursor for the next run; a key before
// the run is outside the box and is stepped over, and once maxSkip of
// those come in a row the scan stops and descends the tree again at the
// run's first key. So a query costs the points it returns plus a cursor
// step for each stretch of the curve outside the box that holds data,
// with no list of ranges computed up front (which cost a small box its
// largest share whatever it held; see RATIONALE.md).

// maxSkip is how many keys outside the box a scan steps over before it
// seeks instead: stepping costs a key comparison, a seek a descent of the
// tree from its root.
const maxSkip = 16

// regionScan is the state of one scan, pooled: its cursor is about 3 KiB,
// and visit is built once per regionScan rather than once per query.
type regionScan struct {
	cu       curve.Cursor
	run      curve.Range // the cursor's current run
	skipped  int         // keys before the run met in a row
	reseek   bool        // visit stopped to seek to run.Lo
	stopped  bool        // fn returned false, or the box has no more keys
	c        pkey        // one, reused: its address must not make each item escape
	fn       func(c *pkey, val []byte) bool
	min, max []int32 // the box
	visit    func(it vitem) bool
}

var scanPool = sync.Pool{New: func() any {
	s := new(regionScan)
	s.visit = s.item
	return s
}}

// item handles one tree item in key order and reports whether the walk
// goes on.
func (s *regionScan) item(it vitem) bool {
	if it.key.Less(s.run.Lo) {
		s.skipped++
		if s.skipped > maxSkip {
			s.reseek = true
			return false
		}
		return true
	}
	if s.run.Hi.Less(it.key) && !inBox(&it.c, s.min, s.max) {
		lo, hi, ok := s.cu.Seek(it.key)
		if !ok {
			s.stopped = true
			return false
		}
		s.run = curve.Range{Lo: lo, Hi: hi}
		if it.key.Less(lo) {
			s.skipped = 1
			return true
		}
	}
	s.skipped = 0
	if it.lsn&tombBit != 0 {
		return true
	}
	s.c = it.c
	if !s.fn(&s.c, it.val) {
		s.stopped = true
		return false
	}
	return true
}

// scanTree calls fn for every live item of t inside [min, max] in curve
// order until fn returns false.
func scanTree(t *btree.BTreeG[vitem], cv *curve.Curve, min, max []int32, fn func(c *pkey, val []byte) bool) {
	s := scanPool.Get().(*regionScan)
	defer func() {
		s.fn, s.min, s.max = nil, nil, nil
		scanPool.Put(s)
	}()
	if !s.cu.Reset(cv, min, max) {
		return
	}
	lo, hi, ok := s.cu.Seek(curve.Key{})
	if !ok {
		return
	}
	s.run = curve.Range{Lo: lo, Hi: hi}
	s.fn, s.stopped = fn, false
	s.min, s.max = min, max
	var hint btree.PathHint
	for {
		s.skipped, s.reseek = 0, false
		t.AscendHint(vitem{key: s.run.Lo}, s.visit, &hint)
		if !s.reseek || s.stopped {
			return
		}
	}
}

// inBox reports whether c lies in the box [min, max].
func inBox(c *pkey, min, max []int32) bool {
	for i := range min {
		if c[i] < min[i] || c[i] > max[i] {
			return false
		}
	}
	return true
}
