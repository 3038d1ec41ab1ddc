package pdk

import (
	"iter"
	"unsafe"
)

// Columns is one batch of points read as columns (the ABI's
// region_columns): point i has the coordinate Coords[i*Dims():(i+1)*Dims()]
// and a value of Lens[i] bytes, the values following one another in Vals.
// Value(i) walks Lens to find one; a loop over all of them keeps its own
// offset:
//
//	off := 0
//	for i := range cols.N {
//		v := cols.Vals[off : off+int(cols.Lens[i])]
//		off += len(v)
//	}
type Columns struct {
	N      int
	Coords []int32
	Lens   []uint32
	Vals   []byte
}

// Value returns point i's value.
func (c *Columns) Value(i int) []byte {
	off := 0
	for _, l := range c.Lens[:i] {
		off += int(l)
	}
	return c.Vals[off : off+int(c.Lens[i])]
}

// RegionColumns iterates the points in the box [min, max] (inclusive on
// every axis) in batches of up to maxPoints points (1024 when maxPoints
// < 1), as columns: one host call a batch, the values copied with no
// record around them, for loops that read many points and little of
// each (a sum, a count, a filter):
//
//	for cols := range pdk.RegionColumns(min, max, 0) { ... cols.N points ... }
//
// The batch and its slices are reused: valid only until the loop moves
// on. The order is the namespace's curve order, as Region's. A failure
// ends the loop and fails the run (see Err).
func RegionColumns(min, max []int32, maxPoints int) iter.Seq[*Columns] {
	return func(yield func(*Columns) bool) {
		if cursor, ok := openRegion(min, max); ok {
			columns("region", cursor, maxPoints, yield)
		}
	}
}

// WithinColumns is RegionColumns over the points at distance at most r
// from c, as Within reads them.
func WithinColumns(c []int32, r float64, maxPoints int) iter.Seq[*Columns] {
	return func(yield func(*Columns) bool) {
		if cursor, ok := openWithin(c, r); ok {
			columns("within", cursor, maxPoints, yield)
		}
	}
}

// columns reads an open cursor with region_columns, batch by batch,
// growing the value buffer when one value does not fit, and closes it.
func columns(op string, cursor uint32, maxPoints int, yield func(*Columns) bool) {
	defer abiCursorClose(cursor)
	if maxPoints < 1 {
		maxPoints = 1024
	}
	d := Dims()
	coords, lens, vals := make([]int32, maxPoints*d+1), make([]uint32, maxPoints), make([]byte, batchBytes)
	batch := new(Columns)
	for {
		var n, vbytes uint32
		st := abiRegionColumns(cursor, unsafe.Pointer(&coords[0]), unsafe.Pointer(&lens[0]), unsafe.Pointer(&vals[0]),
			uint32(maxPoints), uint32(len(vals)), unsafe.Pointer(&n), unsafe.Pointer(&vbytes))
		if st == statusTooSmall {
			vals = make([]byte, max(int(vbytes), 2*len(vals)))
			continue
		}
		if st != statusOK {
			fail(statusErr(op, st))
			return
		}
		if n == 0 {
			return
		}
		*batch = Columns{N: int(n), Coords: coords[:int(n)*d], Lens: lens[:n], Vals: vals[:vbytes]}
		if !yield(batch) {
			return
		}
	}
}
