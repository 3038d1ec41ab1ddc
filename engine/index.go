package engine

import (
	"slices"
	"sync"

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
// The tree keeps a tombstone for every delete until a checkpoint covers
// it, so that the next delta checkpoint records it; they are purged once a
// checkpoint covers them. Even a delete of a key the tree never held keeps
// its tombstone: after recovery, a put from the checkpoint chain and a
// delete from the log can meet in one pending batch, and dropping the pair
// would let the next delta forget the delete (the power-loss test found
// this).

// tombBit marks a tombstone in vitem.lsn.
const tombBit = uint64(1) << 63

// rebuildRatio: a seal that brings more than 1/rebuildRatio new items
// rebuilds the tree by merging (sequential, O(n+m)) instead of inserting
// each item (a descent each, O(m log n) with cache misses).
const rebuildRatio = 8

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
	mu      *sync.RWMutex   // the namespace's: a background seal installs under it
	seals   *sync.WaitGroup // the store's background seals
	live    map[pkey]slot
	pending pendingList
	sealing *pendingList          // the batch a background seal is ordering, or nil
	gen     uint64                // counts changes to tree, tombs, base and delta
	sealed  func(installing bool) // tests: a background seal calls it before it installs (true) and after (false)
	tree    *btree.BTreeG[vitem]
	tombs   []curve.Key          // keys of tombstones in tree, for purging
	base    *run                 // snapshot region reads: the run ...
	delta   *btree.BTreeG[vitem] // ... and the writes sealed since (runs.go)
	bytes   int64                // sum of live value sizes
}

func newTree() *btree.BTreeG[vitem] {
	// Degree 48 (leaves of up to 95 items): scans hop between nodes less
	// often (-18% for a 65,536-point region than degree 16), and sealed
	// batches insert in order, so wider nodes do not slow writes.
	return btree.NewBTreeGOptions(vitemLess, btree.Options{NoLocks: true, Degree: 48})
}

func (x *index) init(c *curve.Curve, mu *sync.RWMutex, seals *sync.WaitGroup) {
	x.curve = c
	x.mu = mu
	x.seals = seals
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
	x.pending.push(vitem{c: c, val: v, lsn: lsn})
	x.bound()
}

// del removes the value at c and reports whether there was one.
func (x *index) del(c pkey, lsn uint64) bool {
	old, ok := x.live[c]
	if !ok {
		return false
	}
	x.bytes -= int64(len(old.val))
	delete(x.live, c)
	x.pending.push(vitem{c: c, lsn: lsn | tombBit})
	x.bound()
	return true
}

// pendingSlack is how many items pending may hold beyond twice the live
// values before a write seals it (bound). A variable for tests.
var pendingSlack = 64 << 10

// bound seals pending once it holds more than twice as many items as
// there are live values, plus pendingSlack. Pending gains an item per
// write, and only ordered reads and checkpoints (every 64 MiB of log)
// emptied it: a key written over and over, or keys put and deleted in
// turn, made it millions of 96-byte items for a few live values, each
// item pinning its value and scanned by every GC cycle. A load of new
// keys never reaches the bound (each item is a live value), so it still
// seals once, at its end.
//
// The seal runs in the background (sealAsync): done here, under the
// namespace's write lock, it stopped every write and read of the
// namespace for as long as it took (up to 200 ms for 264 K writes over
// 100 K keys). Only if pending outgrows the bound twice over while one
// runs does a write seal here.
func (x *index) bound() {
	n, limit := x.pending.n, 2*len(x.live)+pendingSlack
	switch {
	case n <= limit:
	case x.sealing == nil:
		x.sealAsync()
	case n > 2*limit:
		x.seal()
	}
}

// sealAsync hands pending to a background seal. The caller holds the
// write lock.
func (x *index) sealAsync() {
	b := new(pendingList)
	*b = x.pending
	x.pending = pendingList{}
	x.sealing = b
	x.sealBackground(b)
}

// sealBackground orders b, the batch handed over, into a copy of the
// tree and of the read view (copies are O(1): the trees are copy on
// write), and installs them under the lock if the index has not changed
// meanwhile. If a seal here took the batch (an ordered read, which seals
// it itself), the work is dropped; if only the tree changed (purged
// tombstones), it starts over from the tree as it is. The batch is not
// written to once handed over, so both may read it at once. The caller
// holds the write lock.
func (x *index) sealBackground(b *pendingList) {
	bg := &index{curve: x.curve, tree: x.tree.Copy(), tombs: slices.Clone(x.tombs), base: x.base}
	if x.delta != nil {
		bg.delta = x.delta.Copy()
	}
	gen, sealed := x.gen, x.sealed
	x.seals.Add(1)
	go func() {
		defer x.seals.Done()
		bg.sealList(b)
		if sealed != nil {
			sealed(true)
		}
		x.mu.Lock()
		switch {
		case x.sealing != b:
		case x.gen == gen:
			x.tree, x.tombs, x.base, x.delta = bg.tree, bg.tombs, bg.base, bg.delta
			x.sealing = nil
			x.gen++
		default:
			x.sealBackground(b)
		}
		x.mu.Unlock()
		if sealed != nil {
			sealed(false)
		}
	}()
}

// seal moves pending, and the batch of a background seal if one is
// running, into the tree. The caller holds the namespace's write lock. A
// write-only stretch of new keys costs no ordering work until a scan,
// snapshot or checkpoint (which the log size triggers) asks for it;
// writes over the same keys are sealed when bound says.
func (x *index) seal() {
	if b := x.sealing; b != nil {
		x.sealing = nil // the background seal's work is dropped
		x.sealList(b)
	}
	if x.pending.n > 0 {
		x.sealList(&x.pending)
		x.pending.reset()
	}
}

// sealList moves p's items into the tree and the read view. It reads p
// and writes nothing to it.
func (x *index) sealList(p *pendingList) {
	if p.n == 0 {
		return
	}
	x.gen++
	dims := x.curve.Dims()
	// Sort small (key, position) pairs, not the 96-byte items, stably,
	// so that of a key's writes the later one comes last and wins.
	order := make([]sortKey, 0, p.n)
	for _, c := range p.chunks {
		for i := range c {
			order = append(order, sortKey{key: x.curve.Encode(c[i].c[:dims]), pos: int32(len(order))})
		}
	}
	sortKeys(order)
	// Keep the last write of each key.
	w := 0
	for i := range order {
		if i+1 < len(order) && order[i+1].key == order[i].key {
			continue
		}
		order[w] = order[i]
		w++
	}
	order = order[:w]
	x.sealRun(p, order)
	if x.tree.Len() == 0 || len(order)*rebuildRatio > x.tree.Len() {
		x.rebuild(p, order)
	} else {
		var hint btree.PathHint
		for _, o := range order {
			it := itemAt(p, o)
			if it.tomb() {
				x.tombs = append(x.tombs, it.key)
			}
			x.tree.SetHint(it, &hint)
		}
	}
}

// itemAt is the pending item o points to, with its curve key.
func itemAt(p *pendingList, o sortKey) vitem {
	it := *p.at(o.pos)
	it.key = o.key
	return it
}

// pendingList is an append-only list in fixed chunks, so that growing it
// never copies what is already there (a plain slice of 96-byte items
// spent most of a bulk load in memmove).
type pendingList struct {
	chunks [][]vitem
	n      int
}

const pendingChunk = 4096

func (l *pendingList) add(it vitem) {
	if l.n%pendingChunk == 0 && l.n/pendingChunk == len(l.chunks) {
		l.chunks = append(l.chunks, make([]vitem, 0, pendingChunk))
	}
	c := &l.chunks[l.n/pendingChunk]
	*c = append(*c, it)
	l.n++
}

// push adds a write: in place of the last item if that is a write to
// the same key, since a seal keeps only a key's last write anyway, so
// that a key written again and again takes one item.
func (l *pendingList) push(it vitem) {
	if l.n > 0 {
		if last := l.at(int32(l.n - 1)); last.c == it.c {
			*last = it
			return
		}
	}
	l.add(it)
}

func (l *pendingList) at(i int32) *vitem {
	return &l.chunks[i/pendingChunk][i%pendingChunk]
}

// reset empties the list but keeps its first chunk: a store that
// interleaves writes and reads seals a few items at a time, and a fresh
// 384 KiB chunk for each batch made its garbage (and GC) cost more than
// the seal itself. The items are cleared so that they pin no values.
func (l *pendingList) reset() {
	if len(l.chunks) == 0 {
		return
	}
	c := l.chunks[0]
	clear(c)
	l.chunks = append(l.chunks[:0:0], c[:0])
	l.n = 0
}

type sortKey struct {
	key curve.Key
	pos int32
}

// rebuild merges the tree with the sorted pending items into a new tree,
// loading it in order. Snapshots holding the old tree keep it.
func (x *index) rebuild(p *pendingList, order []sortKey) {
	t := newTree()
	j := 0
	emit := func(it vitem) {
		if it.tomb() {
			x.tombs = append(x.tombs, it.key)
		}
		t.Load(it)
	}
	// flush emits pending items with keys below k (all when k is nil).
	flush := func(k *curve.Key) {
		for ; j < len(order) && (k == nil || order[j].key.Less(*k)); j++ {
			emit(itemAt(p, order[j]))
		}
	}
	x.tombs = x.tombs[:0]
	x.tree.Scan(func(old vitem) bool {
		flush(&old.key)
		if j < len(order) && order[j].key == old.key {
			emit(itemAt(p, order[j])) // the newer write replaces it (a delete becomes a tombstone)
			j++
		} else {
			emit(old)
		}
		return true
	})
	flush(nil)
	x.tree = t
}

// purgeTombs drops tombstones that a durable checkpoint at lsn covers.
func (x *index) purgeTombs(lsn uint64) {
	x.gen++
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
