package pdk

import (
	"encoding/binary"
	"math"
)

// Decoders of the packed records of docs/ABI.md §4. They check every length
// against the buffer, so a record that does not fit ends the batch instead
// of reading past it (the host is trusted, but a decoder that cannot
// overrun is cheap).

// decodeCoord reads dims little-endian int32s from b into c.
func decodeCoord(b []byte, c []int32) {
	for i := range c {
		c[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// pointRecord decodes the point record at the start of b into c (len dims)
// and returns its value and the record's size, or size 0 if b does not hold
// a whole record.
func pointRecord(b []byte, c []int32) (value []byte, size int) {
	cw := 4 * len(c)
	if len(b) < cw+4 {
		return nil, 0
	}
	n := int(binary.LittleEndian.Uint32(b[cw:]))
	end := cw + 4 + n
	if n > len(b) || end > len(b) {
		return nil, 0
	}
	decodeCoord(b, c)
	size = (end + 3) &^ 3
	if size > len(b) {
		size = len(b)
	}
	return b[cw+4 : end : end], size
}

// edgeRecord decodes the edge record at the start of b into e, whose From
// and To have len dims, and returns the record's size, or 0 if b does not
// hold a whole record.
func edgeRecord(b []byte, e *Edge) int {
	cw := 4 * len(e.From)
	if len(b) < 16+2*cw {
		return 0
	}
	ln := int(binary.LittleEndian.Uint32(b[8:]))
	vn := int(binary.LittleEndian.Uint32(b[12:]))
	start := 16 + 2*cw
	if ln > len(b) || vn > len(b) || start+ln+vn > len(b) {
		return 0
	}
	e.Weight = math.Float64frombits(binary.LittleEndian.Uint64(b))
	decodeCoord(b[16:], e.From)
	decodeCoord(b[16+cw:], e.To)
	e.Label = string(b[start : start+ln])
	end := start + ln + vn
	e.Value = b[start+ln : end : end]
	size := (end + 7) &^ 7
	if size > len(b) {
		size = len(b)
	}
	return size
}

// walkSteps decodes packed walk steps.
func walkSteps(b []byte, dims int) []Step {
	cw := 4 * dims
	size := 4 + 2*cw
	steps := make([]Step, 0, len(b)/size)
	for off := 0; off+size <= len(b); off += size {
		s := Step{
			Depth: int(int32(binary.LittleEndian.Uint32(b[off:]))),
			Coord: make([]int32, dims),
			From:  make([]int32, dims),
		}
		decodeCoord(b[off+4:], s.Coord)
		decodeCoord(b[off+4+cw:], s.From)
		steps = append(steps, s)
	}
	return steps
}

// pathCoords decodes packed coordinates.
func pathCoords(b []byte, dims int) [][]int32 {
	cw := 4 * dims
	cs := make([][]int32, 0, len(b)/cw)
	for off := 0; off+cw <= len(b); off += cw {
		c := make([]int32, dims)
		decodeCoord(b[off:], c)
		cs = append(cs, c)
	}
	return cs
}

// encodeCoords lays coordinates out as the ABI wants them.
func encodeCoords(dst []byte, cs ...[]int32) []byte {
	for _, c := range cs {
		for _, x := range c {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(x))
		}
	}
	return dst
}

// neighborRecord decodes the neighbour record at the start of b (an f64
// distance, then a point record, padded to 8) into c (len dims) and
// returns the distance, the value and the record's size, or size 0 if b
// does not hold a whole record.
func neighborRecord(b []byte, c []int32) (dist float64, value []byte, size int) {
	if len(b) < 8 {
		return 0, nil, 0
	}
	value, size = pointRecord(b[8:], c)
	if size == 0 {
		return 0, nil, 0
	}
	size = (8 + size + 7) &^ 7
	if size > len(b) {
		size = len(b)
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), value, size
}
