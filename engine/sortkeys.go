package engine

import (
	"cmp"
	"slices"
)

// radixMin is the batch below which sortKeys compares instead: a radix
// pass costs a 256-entry count however few items it moves.
const radixMin = 512

// compareSortKeys orders by curve key, then by position.
func compareSortKeys(a, b sortKey) int {
	if c := a.key.Compare(b.key); c != 0 {
		return c
	}
	return cmp.Compare(a.pos, b.pos)
}

// sortKeys sorts ks by curve key; items with equal keys keep their
// order (seal appends them in write order, and the last write wins). A
// seal's batch is mostly random keys, and comparing 32-byte keys through
// a function was most of a seal (about 80 ms for 264 K items, with the
// namespace's write lock held). A least-significant-digit radix sort
// moves each item once per byte instead, and only for the bytes in which
// the batch's keys differ: a 1-D namespace's keys fill one word, and
// points in a small box share their high bits, so there are a few
// passes, not 32. It is stable, as this needs.
func sortKeys(ks []sortKey) {
	if len(ks) < radixMin {
		slices.SortFunc(ks, compareSortKeys)
		return
	}
	var diff [4]uint64
	first := ks[0].key
	for i := range ks {
		for w := range diff {
			diff[w] |= ks[i].key[w] ^ first[w]
		}
	}
	src, dst := ks, make([]sortKey, len(ks))
	var count [256]int
	// The least significant byte first: the last word's low byte.
	for w := len(diff) - 1; w >= 0; w-- {
		for shift := uint(0); shift < 64; shift += 8 {
			if (diff[w]>>shift)&0xff == 0 {
				continue // every key has the same byte here
			}
			clear(count[:])
			for i := range src {
				count[(src[i].key[w]>>shift)&0xff]++
			}
			at := 0
			for b := range count {
				at, count[b] = at+count[b], at
			}
			for i := range src {
				b := (src[i].key[w] >> shift) & 0xff
				dst[count[b]] = src[i]
				count[b]++
			}
			src, dst = dst, src
		}
	}
	if &src[0] != &ks[0] {
		copy(ks, src)
	}
}
