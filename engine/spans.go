package engine

import (
	"iter"
	"slices"

	"github.com/cubelinux/cube/engine/curve"
)

// Region reads in stretches. A snapshot's run keeps the points of a cell
// of the curve side by side (coordinates packed, value slices in a row),
// and a key inside the cursor's current run is a hit without a look at its
// coordinates, so a reader that copies points in bulk (the WASM ABI's
// region_columns) can take a whole stretch of the run at once: one call
// per stretch instead of one per point, and the coordinates as one slice.

// RegionSpans is Region for readers that copy points in bulk. fn gets
// the points of the box [min, max] in curve order, in stretches: coords
// holds len(vals) coordinates of Dims() int32 each, packed. A read-only
// transaction hands out stretches of its snapshot's own arrays (a cell of
// the curve at a time; a point that the delta of recent writes holds, or
// that lies outside the cursor's run, comes alone); a writable
// transaction's stretches are one point each. The slices must not be
// changed, and coords and vals themselves are valid only until fn
// returns; each value stays valid for the transaction, as Region's do.
func (tx *Tx) RegionSpans(min, max []int32) (iter.Seq2[[]int32, [][]byte], error) {
	if err := tx.check(false); err != nil {
		return nil, err
	}
	ns := tx.ns
	if err := checkBox(min, max, ns.dims); err != nil {
		return nil, err
	}
	min, max = slices.Clone(min), slices.Clone(max)
	if !tx.writable {
		v := tx.snap.view
		return func(yield func([]int32, [][]byte) bool) {
			scanViewSpans(v, ns.curve, min, max, yield)
		}, nil
	}
	t := tx.tree()
	return func(yield func([]int32, [][]byte) bool) {
		var c pkey
		var one [1][]byte
		scanTree(t, ns.curve, min, max, func(p *pkey, val []byte) bool {
			c, one[0] = *p, val
			return yield(c[:ns.dims:ns.dims], one[:])
		})
	}, nil
}

// scanViewSpans is scanView in stretches (see RegionSpans): it walks the
// run and the delta as scanView does, and where scanView would call fn
// for a key inside the cursor's run, it hands over every following key of
// the run up to the end of the cursor's run or the delta's next key,
// whichever comes first, in one call. Keep the two in step: a test
// compares them on random boxes over runs with deltas.
func scanViewSpans(v readView, cv *curve.Curve, min, max []int32, fn func(coords []int32, vals [][]byte) bool) {
	dims := len(min)
	var delta []vitem
	if v.delta != nil {
		delta = collectDelta(v.delta, cv, min, max)
	}
	s := scanPool.Get().(*regionScan)
	defer scanPool.Put(s)
	var one [1][]byte
	j := 0 // next delta item
	flush := func(k *curve.Key) (more, eq bool) {
		for ; j < len(delta); j++ {
			d := &delta[j]
			if k != nil && !keyLess(&d.key, k) {
				return true, d.key == *k
			}
			if !d.tomb() {
				one[0] = d.val
				if !fn(d.c[:dims:dims], one[:]) {
					return false, false
				}
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
			inRun := !keyLess(&hi, k)
			if !inRun && !inBoxSlice(r.coords[i*d:i*d+d:i*d+d], min, max) {
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
			e := i + 1
			if inRun {
				e = r.after(i, &hi)
				if j < len(delta) {
					if b := r.search(i, &delta[j].key); b < e {
						e = b
					}
				}
			}
			if !fn(r.coords[i*d:e*d:e*d], r.vals[i:e:e]) {
				return
			}
			i = e
		}
	}
	flush(nil)
}

// after returns the index of the first key > k at or after from,
// galloping from from as search does.
func (r *run) after(from int, k *curve.Key) int {
	n := len(r.keys)
	lo, hi := from, from
	for step := 1; hi < n && !keyLess(k, &r.keys[hi]); step <<= 1 {
		lo = hi + 1
		hi = from + step
	}
	hi = min(hi, n)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !keyLess(k, &r.keys[m]) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
