package engine

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"

	"github.com/cubelinux/cube/engine/curve"
	"github.com/tidwall/btree"
)

// A region scan reads the tree in curve order and asks a curve.Cursor, as
// it goes, where the box's keys continue: the cursor answers with a run of
// keys that all lie in the box. A key in the run is a hit without a look
// at its coordinates. A key past the run is tested against the box; a few
// outside it in a row (maxOutside) ask the cursor for the next run. A key
// before that run is outside the box and is stepped over, and once
// maxSkip of those come in a row the scan stops and descends the tree
// again at the run's first key. So a query costs the points it returns
// plus a cursor step and a descent for each stretch of the curve outside
// the box that holds data, with no list of ranges computed up front
// (which cost a small box most of its time whatever it held; see
// RATIONALE.md).

// maxSkip is how many keys before the cursor's run a scan steps over
// before it seeks the tree instead: a step costs a key comparison, a seek
// a descent of the tree from its root.
const maxSkip = 16

// maxOutside is how many keys past the run and outside the box a scan
// steps over, testing each against the box, before it asks the cursor
// where the box continues. Where the data is dense the curve's stretches
// outside a box hold few keys, and stepping over them costs less than the
// cursor's answer; measured on 1,000,000 points in [0,1024)^3, 4 to 16 do
// alike and 0 (ask at once) costs a side-64 box about twice as much.
const maxOutside = 8

// regionScan is the state of one scan, pooled: its cursor is about 4 KiB,
// and visit is built once per regionScan rather than once per query.
type regionScan struct {
	cu       curve.Cursor
	run      curve.Range // the cursor's current run
	skipped  int         // keys before the run met in a row
	outside  int         // keys past the run, outside the box, met in a row
	reseek   bool        // visit stopped to seek to run.Lo
	stopped  bool        // fn returned false, or the box has no more keys
	c        pkey        // one, reused: its address must not make each item escape
	fn       func(c *pkey, val []byte) bool
	all      func(it *vitem) bool // instead of fn: every item, tombstones too
	it       vitem                // the item all gets, reused like c
	min, max []int32              // the box
	visit    func(it vitem) bool
}

var scanPool = sync.Pool{New: func() any { return newRegionScan() }}

// newRegionScan builds a regionScan and its visit: a closure rather than
// the method value s.item, whose wrapper would copy each 96-byte item
// twice (measured: a 256x256 scan 20% slower).
func newRegionScan() *regionScan {
	s := new(regionScan)
	s.visit = func(it vitem) bool {
		if keyLess(&s.run.Hi, &it.key) {
			if !inBox(&it.c, s.min, s.max) {
				return s.outsideKey(&it.key)
			}
		} else if keyLess(&it.key, &s.run.Lo) {
			return s.beforeRun()
		}
		if s.skipped|s.outside != 0 {
			s.skipped, s.outside = 0, 0
		}
		if s.all != nil {
			s.it = it
			if !s.all(&s.it) {
				s.stopped = true
				return false
			}
			return true
		}
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
	return s
}

// beforeRun steps over a key before the cursor's run, or stops the walk
// to seek the tree to the run when maxSkip came in a row.
func (s *regionScan) beforeRun() bool {
	s.skipped++
	if s.skipped > maxSkip {
		s.reseek = true
		return false
	}
	return true
}

// outsideKey handles key k past the run and outside the box: stepped
// over, or once maxOutside came in a row, the cursor gives the next run
// (which starts after k, as k is outside the box).
func (s *regionScan) outsideKey(k *curve.Key) bool {
	s.outside++
	if s.outside <= maxOutside {
		return true
	}
	s.outside = 0
	lo, hi, ok := s.cu.Seek(*k)
	if !ok {
		s.stopped = true
		return false
	}
	s.run = curve.Range{Lo: lo, Hi: hi}
	return s.beforeRun()
}

// scanTree calls fn for every live item of t inside [min, max] in curve
// order until fn returns false.
func scanTree(t *btree.BTreeG[vitem], cv *curve.Curve, min, max []int32, fn func(c *pkey, val []byte) bool) {
	s := scanPool.Get().(*regionScan)
	defer func() {
		s.fn, s.min, s.max = nil, nil, nil
		scanPool.Put(s)
	}()
	s.scan(t, cv, min, max, fn)
}

// scanTreeItems calls fn for every item of t inside [min, max],
// tombstones included, in curve order until fn returns false. The item
// is reused between calls.
func scanTreeItems(t *btree.BTreeG[vitem], cv *curve.Curve, min, max []int32, fn func(it *vitem) bool) {
	s := scanPool.Get().(*regionScan)
	defer func() {
		s.all, s.min, s.max = nil, nil, nil
		scanPool.Put(s)
	}()
	s.all = fn
	s.scan(t, cv, min, max, nil)
}

func (s *regionScan) scan(t *btree.BTreeG[vitem], cv *curve.Curve, min, max []int32, fn func(c *pkey, val []byte) bool) {
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
		s.skipped, s.reseek, s.outside = 0, false, 0
		t.AscendHint(vitem{key: s.run.Lo}, s.visit, &hint)
		if !s.reseek || s.stopped {
			return
		}
	}
}

// keyLess is Key.Less unrolled on pointers: the scan compares every item
// with its run, and Less on values copied both keys each time.
func keyLess(a, b *curve.Key) bool {
	if a[0] != b[0] {
		return a[0] < b[0]
	}
	if a[1] != b[1] {
		return a[1] < b[1]
	}
	if a[2] != b[2] {
		return a[2] < b[2]
	}
	return a[3] < b[3]
}

// inBox reports whether c lies in the box [min, max].
func inBox(c *pkey, min, max []int32) bool { return inBoxSlice(c[:len(min)], min, max) }

// frozenView returns the read view of the namespace now, for its own
// region reads, whose transaction would never leave them: the values
// alone, not the edges (two tree copies) nor the metadata, and not even
// the B-tree, which only writers and the nearest-neighbour search read.
// When nothing is waiting to be sealed and the delta is empty, the view
// is just the run, read under the read lock.
func (ns *Namespace) frozenView(ctx context.Context) (readView, error) {
	if ns.dropped.Load() {
		return readView{}, fmt.Errorf("%w: %q was dropped", ErrNoNamespace, ns.name)
	}
	if ns.db.closed.Load() {
		return readView{}, ErrClosed
	}
	var v readView
	var lsn uint64
	ns.mu.RLock()
	quiet := ns.idx.pending.n == 0 && ns.idx.sealing == nil && ns.idx.delta == nil
	if quiet {
		v.base, lsn = ns.idx.base, ns.lastLSN.Load()
	}
	ns.mu.RUnlock()
	if !quiet {
		ns.mu.Lock()
		ns.idx.seal()
		v, lsn = ns.idx.view(), ns.lastLSN.Load()
		ns.mu.Unlock()
	}
	return v, ns.db.waitVisible(ctx, lsn)
}

// region is Namespace.Region.
func (ns *Namespace) region(ctx context.Context, min, max []int32, limit int) (iter.Seq2[[]int32, []byte], error) {
	v, err := ns.frozenView(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkBox(min, max, ns.dims); err != nil {
		return nil, err
	}
	return regionSeq(ns, v, min, max, limit), nil
}

// count is Namespace.Count.
func (ns *Namespace) count(ctx context.Context, min, max []int32) (int, error) {
	v, err := ns.frozenView(ctx)
	if err != nil {
		return 0, err
	}
	if err := checkBox(min, max, ns.dims); err != nil {
		return 0, err
	}
	n := 0
	scanView(v, ns.curve, min, max, nil, func([]int32, []byte) bool { n++; return true })
	return n, nil
}

// regionSeq iterates the values of v in the box [min, max] (checked),
// at most limit of them (0 = all). One allocation holds the query (the
// box copied, the coordinate buffer) and one the iterator.
func regionSeq(ns *Namespace, v readView, min, max []int32, limit int) iter.Seq2[[]int32, []byte] {
	q := &regionQuery{ns: ns, v: v, limit: limit}
	copy(q.lo[:], min)
	copy(q.hi[:], max)
	return q.seq
}

type regionQuery struct {
	ns     *Namespace
	v      readView
	lo, hi pkey
	limit  int
	buf    pkey
	busy   atomic.Bool // an iteration is using buf
}

func (q *regionQuery) seq(yield func([]int32, []byte) bool) {
	dims := q.ns.dims
	// The coordinate each step yields lives in q.buf, unless another
	// iteration of the same sequence (nested, or on another goroutine)
	// holds it: each iteration reuses its own.
	var buf []int32
	if q.busy.CompareAndSwap(false, true) {
		defer q.busy.Store(false)
		buf = q.buf[:dims]
	} else {
		buf = make([]int32, dims)
	}
	if q.limit <= 0 {
		scanView(q.v, q.ns.curve, q.lo[:dims], q.hi[:dims], buf, yield)
		return
	}
	n := 0
	scanView(q.v, q.ns.curve, q.lo[:dims], q.hi[:dims], buf, func(c []int32, val []byte) bool {
		n++
		return yield(c, val) && n < q.limit
	})
}
