package engine

import (
	"github.com/cubelinux/cube/engine/curve"
	"github.com/tidwall/btree"
)

// nearSource is what a nearby or within query reads: a read-write
// transaction's B-tree (which holds its own writes), or a read view, the
// columnar run and its delta that Region reads (a snapshot's, or the
// namespace's now). The run is arrays in curve order, cheaper to scan
// than the tree's nodes.
type nearSource struct {
	t *btree.BTreeG[vitem] // nil: read v
	v readView
}

func (tx *Tx) nearSource() nearSource {
	if !tx.writable {
		return nearSource{v: tx.snap.view}
	}
	return nearSource{t: tx.tree()}
}

// size is at least the number of live points (tombstones and values
// the delta replaces count too).
func (s *nearSource) size() int {
	if s.t != nil {
		return s.t.Len()
	}
	n := s.v.base.len()
	if s.v.delta != nil {
		n += s.v.delta.Len()
	}
	return n
}

// probe calls visit with live points next to key k on the curve, from k
// up (k included) when up, else from below k down, until visit returns
// false or the points run out. It may skip live points (the view's
// delta's own), never report a dead one: the points it reports are what
// bounds a nearest-neighbour distance from above.
func (s *nearSource) probe(k curve.Key, up bool, visit func(c *pkey) bool) {
	if s.t != nil {
		pivot := vitem{key: k}
		fn := func(it vitem) bool {
			if it.tomb() || !up && it.key == k {
				return true // a tombstone; or the pivot, which up had
			}
			return visit(&it.c)
		}
		if up {
			s.t.Ascend(pivot, fn)
		} else {
			s.t.Descend(pivot, fn)
		}
		return
	}
	r := s.v.base
	if r.len() == 0 {
		return
	}
	d := r.dims
	i := r.search(0, &k)
	step := 1
	if !up {
		i, step = i-1, -1
	}
	var c pkey
	for ; i >= 0 && i < len(r.keys); i += step {
		if s.v.delta != nil {
			// The delta's tombstone hides the run's value; a value the
			// delta replaces is at the same coordinate, still live.
			// Break caught by TestGeoNearbyRandom: reporting the run's
			// deleted points too (a bound from the dead).
			if it, ok := s.v.delta.Get(vitem{key: r.keys[i]}); ok && it.tomb() {
				continue
			}
		}
		copy(c[:d], r.coords[i*d:i*d+d])
		if !visit(&c) {
			return
		}
	}
}

// scan calls fn for every live point inside [min, max] in curve order
// until fn returns false.
func (s *nearSource) scan(cv *curve.Curve, min, max []int32, fn func(c *pkey, val []byte) bool) {
	if s.t != nil {
		scanTree(s.t, cv, min, max, fn)
		return
	}
	var p pkey
	scanView(s.v, cv, min, max, nil, func(c []int32, val []byte) bool {
		copy(p[:], c)
		return fn(&p, val)
	})
}
