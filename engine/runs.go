package engine

import (
	"github.com/cubelinux/cube/engine/curve"
	"github.com/tidwall/btree"
)

// Region reads of a snapshot scan a read-optimised copy of the values
// rather than the B-tree: a run, the live values in curve order as three
// arrays (keys, coordinates packed dims to an item, value slices), and a
// delta, a small B-tree of the writes sealed since the run was built
// (tombstones included, as they hide the run's values). A snapshot holds
// both by reference: the run's arrays are never changed once built, and
// the delta is a copy-on-write tree copied in O(1).
//
// Scanning arrays costs what the B-tree's per-item visit did not: no
// callback and no 96-byte item copy per key, a seek is a gallop over the
// key array from where the scan stands, and the coordinates tested against
// the box sit next to each other. When the delta grows past 1/runRatio of
// the run, a seal merges the two into a new run (sequential, O(n)). The
// B-tree stays what writes, checkpoints and the nearest-neighbour search
// read; the run is only what a snapshot's region scan reads (see
// RATIONALE.md for the measurements).

// runRatio: a seal that would leave the delta holding more than
// 1/runRatio of the run's values merges them into a new run instead.
const runRatio = 16

// runMin: below this many delta items a seal never merges, so that a
// small store is not rebuilt on every write.
const runMin = 256

// runOutside is maxOutside for a run: how many keys past the cursor's
// run and outside the box a scan steps over before it asks the cursor
// where the box continues. Stepping over a key in an array costs a few
// nanoseconds, a cursor step and a gallop far more: measured on
// 1,000,000 points in [0,1024)^3 (CPU per query, side 16 / 64 / 128 /
// empty side 16 on 20,000 points), 8 gave about 3.5 / 30 / 100-145 /
// 1.1 µs, 64 about 2 / 17-21 / 83-94 / 1.7, and 256 or more was slower
// again on every shape.
const runOutside = 64

// run is an immutable sorted array of live values.
type run struct {
	dims   int
	keys   []curve.Key
	coords []int32 // dims per item
	vals   [][]byte
}

func (r *run) len() int {
	if r == nil {
		return 0
	}
	return len(r.keys)
}

// readView is what a snapshot's region scans read: a run and the writes
// since (delta, nil when there are none).
type readView struct {
	base  *run
	delta *btree.BTreeG[vitem]
}

// view returns the index's current read view. The caller holds the write
// lock (copying the delta marks the index's own delta as shared).
func (x *index) view() readView {
	v := readView{base: x.base}
	if x.delta != nil && x.delta.Len() > 0 {
		v.delta = x.delta.Copy()
	}
	return v
}

// sealRun brings the read view up to date with the sorted pending batch
// (order into p) that seal is about to move into the tree.
func (x *index) sealRun(p *pendingList, order []sortKey) {
	dn := len(order)
	if x.delta != nil {
		dn += x.delta.Len()
	}
	if dn < runMin && x.base.len() > 0 || dn*runRatio <= x.base.len() {
		if x.delta == nil {
			// Narrow nodes: every read between writes copies the delta,
			// so the next write copies its path, and the tree's 9 KiB
			// nodes made that most of a write (a put before each side-16
			// box on 1M points: ~380 µs a pair with degree 48, ~125 with 8).
			x.delta = btree.NewBTreeGOptions(vitemLess, btree.Options{NoLocks: true, Degree: 8})
		}
		var hint btree.PathHint
		for _, o := range order {
			x.delta.SetHint(itemAt(p, o), &hint)
		}
		return
	}
	x.base = mergeRun(x.base, x.delta, p, order, x.curve.Dims())
	x.delta = nil
}

// mergeRun returns a new run of the live values of base overlaid with the
// delta tree and then the pending batch (later layers win on a key).
func mergeRun(base *run, delta *btree.BTreeG[vitem], p *pendingList, order []sortKey, dims int) *run {
	if base.len() == 0 && delta == nil {
		// The first seal (a store just opened, or loaded): the batch
		// alone, without copying it into a list first.
		r := &run{dims: dims, keys: make([]curve.Key, 0, len(order)), coords: make([]int32, 0, len(order)*dims), vals: make([][]byte, 0, len(order))}
		for _, o := range order {
			if it := p.at(o.pos); !it.tomb() {
				r.keys = append(r.keys, o.key)
				r.coords = append(r.coords, it.c[:dims]...)
				r.vals = append(r.vals, it.val)
			}
		}
		return r
	}
	// The two upper layers first, into one sorted list of pointers.
	var upd []vitem
	j := 0
	take := func(k *curve.Key) { // pending items with keys below k (all when k is nil)
		for ; j < len(order) && (k == nil || keyLess(&order[j].key, k)); j++ {
			upd = append(upd, itemAt(p, order[j]))
		}
	}
	if delta != nil {
		upd = make([]vitem, 0, delta.Len()+len(order))
		delta.Scan(func(it vitem) bool {
			take(&it.key)
			if j < len(order) && order[j].key == it.key {
				upd = append(upd, itemAt(p, order[j]))
				j++
			} else {
				upd = append(upd, it)
			}
			return true
		})
	} else {
		upd = make([]vitem, 0, len(order))
	}
	take(nil)
	n := base.len() + len(upd)
	r := &run{dims: dims, keys: make([]curve.Key, 0, n), coords: make([]int32, 0, n*dims), vals: make([][]byte, 0, n)}
	add := func(k *curve.Key, c []int32, v []byte) {
		r.keys = append(r.keys, *k)
		r.coords = append(r.coords, c...)
		r.vals = append(r.vals, v)
	}
	i := 0
	for ui := range upd {
		u := &upd[ui]
		for ; i < base.len() && keyLess(&base.keys[i], &u.key); i++ {
			add(&base.keys[i], base.coords[i*dims:i*dims+dims], base.vals[i])
		}
		if i < base.len() && base.keys[i] == u.key {
			i++ // replaced or deleted
		}
		if !u.tomb() {
			add(&u.key, u.c[:dims], u.val)
		}
	}
	for ; i < base.len(); i++ {
		add(&base.keys[i], base.coords[i*dims:i*dims+dims], base.vals[i])
	}
	return r
}

// search returns the index of the first key >= k at or after from,
// galloping from from: seeks in a scan are mostly short hops.
func (r *run) search(from int, k *curve.Key) int {
	n := len(r.keys)
	lo, hi := from, from
	for step := 1; hi < n && keyLess(&r.keys[hi], k); step <<= 1 {
		lo = hi + 1
		hi = from + step
	}
	hi = min(hi, n)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if keyLess(&r.keys[m], k) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// scanView calls fn for every live value of v inside [min, max] in curve
// order until fn returns false. The coordinate slice fn gets is dims long
// and must not be kept or changed, unless out is given: then each
// coordinate is copied into out (dims long) and fn gets out, so that fn
// can be a caller's yield itself, with no closure between the scan and it.
func scanView(v readView, cv *curve.Curve, min, max, out []int32, fn func(c []int32, val []byte) bool) {
	var delta []vitem
	if v.delta != nil {
		delta = collectDelta(v.delta, cv, min, max)
	}
	s := scanPool.Get().(*regionScan)
	defer scanPool.Put(s)
	j := 0 // next delta item
	// flush emits the delta's live items with keys below k (all when k is
	// nil) and reports whether fn wants more; eq reports whether the
	// delta's next item has key k, which then replaces the run's.
	flush := func(k *curve.Key) (more, eq bool) {
		for ; j < len(delta); j++ {
			d := &delta[j]
			if k != nil && !keyLess(&d.key, k) {
				return true, d.key == *k
			}
			if !d.tomb() && !fn(emit(out, d.c[:v.base.dims]), d.val) {
				return false, false
			}
		}
		return true, false
	}
	if r := v.base; r.len() > 0 && s.cu.Reset(cv, min, max) {
		d := r.dims
		lo, hi, ok := s.cu.Seek(curve.Key{})
		i, outside := 0, 0
		if ok {
			i = r.search(0, &lo)
		}
		for ok && i < len(r.keys) {
			k := &r.keys[i]
			c := r.coords[i*d : i*d+d : i*d+d]
			if keyLess(&hi, k) && !inBoxSlice(c, min, max) {
				if outside++; outside <= runOutside {
					i++
					continue
				}
				outside = 0
				if lo, hi, ok = s.cu.Seek(*k); ok {
					i = r.search(i, &lo)
				}
				continue
			}
			outside = 0
			if delta != nil {
				more, eq := flush(k)
				if !more {
					return
				}
				if eq {
					i++
					continue // flush's next call emits the delta's version
				}
			}
			if !fn(emit(out, c), r.vals[i]) {
				return
			}
			i++
		}
	}
	flush(nil)
}

// emit returns c, or c copied into out when out is given.
func emit(out, c []int32) []int32 {
	if out == nil {
		return c
	}
	copy(out, c)
	return out
}

// collectDelta returns the items of t in the box, tombstones included,
// in curve order.
func collectDelta(t *btree.BTreeG[vitem], cv *curve.Curve, min, max []int32) []vitem {
	var out []vitem
	scanTreeItems(t, cv, min, max, func(it *vitem) bool {
		out = append(out, *it)
		return true
	})
	if out == nil {
		out = []vitem{}
	}
	return out
}

// inBoxSlice reports whether c lies in the box [min, max].
func inBoxSlice(c, min, max []int32) bool {
	for i := range c {
		if c[i] < min[i] || c[i] > max[i] {
			return false
		}
	}
	return true
}
