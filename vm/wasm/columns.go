package wasm

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"slices"

	"github.com/tetratelabs/wazero/api"

	"github.com/cubelinux/cube/vm"
)

// hostRegionColumns: (cursor, coords, lens, vals, cap_points, vals_cap,
// n_out, vbytes_out). The next points of a region or radius cursor, as
// many as fit, as three columns (docs/ABI.md §4): coordinates packed
// (4*dims bytes a point) from coords, a u32 value length a point from
// lens, and the values one after another, unpadded, from vals. At most
// cap_points points, and values of at most vals_cap bytes in all.
func hostRegionColumns(ctx context.Context, rs *runState, m api.Module, s []uint64) {
	const fn = "region_columns"
	mem := memory(m)
	room := uint64(u32(s[4]))
	nOut := view(mem, fn, "count out-pointer", u32(s[6]), 4)
	vOut := view(mem, fn, "value bytes out-pointer", u32(s[7]), 4)
	coords := viewLong(mem, fn, "coordinate column", u32(s[1]), room*uint64(4*rs.dims))
	lens := viewLong(mem, fn, "length column", u32(s[2]), room*4)
	vals := view(mem, fn, "value buffer", u32(s[3]), u32(s[5]))
	c := rs.cursorOf(u32(s[0]), true)
	if c == nil {
		s[0] = StatusBadArg
		return
	}
	var n, used, need int
	var stuck bool
	if c.cols != nil && c.pp == nil {
		n, used, stuck, need = c.cols.FillColumns(coords, lens, vals)
	} else {
		n, used, stuck, need = fillColumns(c, rs.dims, coords, lens, vals)
	}
	if stuck {
		binary.LittleEndian.PutUint32(nOut, 0)
		binary.LittleEndian.PutUint32(vOut, uint32(need))
		s[0] = StatusTooSmall
		return
	}
	// Not stuck: need is 0, so packed answers the points taken, the end,
	// or the cursor's error, as for region_next. (A stuck call is answered
	// above: its value may be empty, a need of 0 that packed would read
	// as the end.)
	rs.packed(fn, s, nOut, vOut, n, used, 0, c.points.Err)
}

// viewLong is view for a length computed in 64 bits (a count times a
// size), which traps when it does not fit in 32.
func viewLong(m api.Memory, fn, what string, ptr uint32, n uint64) []byte {
	if n > math.MaxUint32 && m != nil {
		trap(fn, "%s [0x%x, +%d) is outside guest memory (%d bytes)", what, ptr, n, m.Size())
	}
	return view(m, fn, what, ptr, uint32(n))
}

// fillColumns is vm.ColumnFiller.FillColumns for a cursor whose host does
// not have it: one point at a time through Next, the point that does not
// fit held in c.pp (as region_next holds it, so the two mix).
func fillColumns(c *cursor, dims int, coords, lens, vals []byte) (n, used int, stuck bool, need int) {
	room := len(lens) / 4
	for n < room || n == 0 {
		var p vm.Point
		if c.pp != nil {
			p, c.pp = *c.pp, nil
		} else {
			var ok bool
			if p, ok = c.points.Next(); !ok {
				break
			}
		}
		if n == room || len(p.Value) > len(vals)-used {
			k := vm.Point{Coord: slices.Clone(p.Coord), Value: bytes.Clone(p.Value)}
			c.pp = &k
			if n == 0 {
				return 0, 0, true, len(p.Value)
			}
			break
		}
		putCoord(coords[4*dims*n:], p.Coord)
		binary.LittleEndian.PutUint32(lens[4*n:], uint32(len(p.Value)))
		used += copy(vals[used:], p.Value)
		n++
	}
	return n, used, false, 0
}
