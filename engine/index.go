package engine

import (
	"slices"

	"github.com/cubelinux/cube/engine/curve"
	"github.com/tidwall/btree"
)

// The value index of one namespace has two halves:
//
//   - live, a hash map from coordinate to value, answers point reads and
//     writes in one probe;
//   - tree, a copy-on-write B-tree ordered by curve key, answers region
//     scans and gives snapshots for free (Copy is O(1)).
//
// A write goes to live at once and to pending, an unsorted list; the tree
// catches up in batches (seal), sorting the batch first so that its inserts
// walk the tree in order. Ordered readers seal before they read. This keeps
// a B-tree descent, and the curve encoding, off the path of a point write.
//
// The tree keeps tombstones for deletes made since the last checkpoint, so
// that the next delta checkpoint can record them; they are purged once a
// checkpoint covers them.

// tombBit marks a tombstone in vitem.lsn.
const tombBit = uint64(1) << 63

// pendingMax bounds the unsorted batch: sealing it costs a sort of this many
// items, which is the longest an ordered reader waits for the tree.
const pendingMax = 1 << 14

// vitem is one value in the ordered tree.
type vitem struct {
	key curve.Key
	c   pkey
	val []byte
	lsn uint64 // with tombBit for a tombstone
}

func (it *vitem) tomb() bool    { return it.lsn&tombBit != 0 }
func (it *vitem) seq() uint64   { return it.lsn &^ tombBit }
func vitemLess(a, b vitem) bool { return a.key.Less(b.key) }

// slot is one value in the hash map.
type slot struct {
	val []byte
	lsn uint64
}

type index struct {
	curve   *curve.Curve
	live    map[pkey]slot
	pending []vitem
	tree    *btree.BTreeG[vitem]
	tombs   []curve.Key // keys of tombstones in tree, for purging
	bytes   int64       // sum of live value sizes
}

func newTree() *btree.BTreeG[vitem] {
	return btree.NewBTreeGOptions(vitemLess, btree.Options{NoLocks: true, Degree: 16})
}

func (x *index) init(c *curve.Curve) {
	x.curve = c
	x.live = make(map[pkey]slot)
	x.tree = newTree()
}

// put stores v at c, written by the record at lsn. It takes ownership of v.
func (x *index) put(c pkey, v []byte, lsn uint64) {
	if old, ok := x.live[c]; ok {
		x.bytes -= int64(len(old.val))
	}
	x.live[c] = slot{val: v, lsn: lsn}
	x.bytes += int64(len(v))
	x.pending = append(x.pending, vitem{c: c, val: v, lsn: lsn})
	if len(x.pending) >= pendingMax {
		x.seal()
	}
}

// del removes the value at c and reports whether there was one.
func (x *index) del(c pkey, lsn uint64) bool {
	old, ok := x.live[c]
	if !ok {
		return false
	}
	x.bytes -= int64(len(old.val))
	delete(x.live, c)
	x.pending = append(x.pending, vitem{c: c, lsn: lsn | tombBit})
	if len(x.pending) >= pendingMax {
		x.seal()
	}
	return true
}

// seal moves pending into the tree. The caller holds the namespace's
// write lock.
func (x *index) seal() {
	if len(x.pending) == 0 {
		return
	}
	p := x.pending
	dims := x.curve.Dims()
	for i := range p {
		p[i].key = x.curve.Encode(p[i].c[:dims])
	}
	// Stable, so that of two writes to one key the later stays last.
	slices.SortStableFunc(p, func(a, b vitem) int { return a.key.Compare(b.key) })
	var hint btree.PathHint
	for i := range p {
		if i+1 < len(p) && p[i+1].key == p[i].key {
			continue // a later write to the same key wins
		}
		it := p[i]
		if it.tomb() {
			if _, ok := x.tree.GetHint(it, &hint); !ok {
				continue // written and deleted since the tree last saw it
			}
			x.tombs = append(x.tombs, it.key)
		}
		x.tree.SetHint(it, &hint)
	}
	clear(p) // drop references to values
	x.pending = p[:0]
	if cap(x.pending) > 4*pendingMax {
		x.pending = nil
	}
}

// purgeTombs drops tombstones that a durable checkpoint at lsn covers.
func (x *index) purgeTombs(lsn uint64) {
	keep := x.tombs[:0]
	for _, k := range x.tombs {
		it, ok := x.tree.Get(vitem{key: k})
		switch {
		case !ok || !it.tomb():
			// overwritten since: nothing to purge
		case it.seq() <= lsn:
			x.tree.Delete(it)
		default:
			keep = append(keep, k)
		}
	}
	x.tombs = keep
}

// treeGet reads one coordinate from a sealed tree (a snapshot).
func treeGet(t *btree.BTreeG[vitem], cv *curve.Curve, c []int32) ([]byte, uint64, bool) {
	it, ok := t.Get(vitem{key: cv.Encode(c)})
	if !ok || it.tomb() {
		return nil, 0, false
	}
	return it.val, it.lsn, true
}

// scanTree calls fn for every live item of t inside [min, max] in curve
// order until fn returns false. ranges is scratch space.
func scanTree(t *btree.BTreeG[vitem], cv *curve.Curve, min, max []int32, fn func(*vitem) bool) {
	ranges := cv.Ranges(min, max, 0)
	iter := t.Iter()
	defer iter.Release()
	for _, r := range ranges {
		if !iter.Seek(vitem{key: r.Lo}) {
			return
		}
		for {
			it := iter.Item()
			if r.Hi.Less(it.key) {
				break
			}
			if !it.tomb() && inBox(&it.c, min, max) {
				if !fn(&it) {
					return
				}
			}
			if !iter.Next() {
				return
			}
		}
	}
}
