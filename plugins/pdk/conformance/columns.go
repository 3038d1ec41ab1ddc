package conformance

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cubelinux/cube/vm"
)

// The region_columns check. vm/wasm/testdata/columns.wasm reads a whole
// box or radius and outputs its points as region_next's packed records
// however it read them: mode 0 with region_next, mode 1 with
// region_columns at given capacities (cap_points, vals_cap), mode 2 the
// two in turn on one cursor. CheckColumns runs it on a host holding
// ColumnsData: at every pair of ColumnsCaps, modes 1 and 2 must output
// exactly the bytes mode 0 outputs with a large buffer, and those must be
// the query's points by brute force. The capacities cross the edges: no
// room for a point, room for one, for a few, values longer than the
// value buffer (the guest then retries with the size status 2 reported,
// which must be exact), and room for everything.

// ColumnsFile is the check's guest, relative to the repository's root.
const ColumnsFile = "vm/wasm/testdata/columns.wasm"

// ColumnsQuery is a box (Min, Max) or, when Radius, the points at
// distance at most R from Centre.
type ColumnsQuery struct {
	Name     string
	Min, Max []int32
	Radius   bool
	Centre   []int32
	R        float64
}

// ColumnsData is 2-D points on a 30x30 grid with values of lengths 0 to
// 11 and a few long ones (300 bytes, 3000, and 70 KiB, longer than most
// value buffers of ColumnsCaps).
func ColumnsData() Data {
	d := Data{Dims: 2}
	for x := int32(0); x < 30; x++ {
		for y := int32(0); y < 30; y++ {
			n := int((x*7 + y*3) % 12)
			switch {
			case x == 3 && y == 4:
				n = 300
			case x == 20 && y == 21:
				n = 3000
			case x == 10 && y == 10:
				n = 70 << 10
			}
			v := make([]byte, n)
			for i := range v {
				v[i] = byte(int(x)*31 + int(y)*17 + i)
			}
			d.Points = append(d.Points, vm.Point{Coord: []int32{x, y}, Value: v})
		}
	}
	return d
}

// ColumnsQueries are boxes (all, part, one point, empty) and radii
// (with points, empty).
func ColumnsQueries() []ColumnsQuery {
	return []ColumnsQuery{
		{Name: "all", Min: xy(math.MinInt32, math.MinInt32), Max: xy(math.MaxInt32, math.MaxInt32)},
		{Name: "part", Min: xy(2, 3), Max: xy(17, 25)},
		{Name: "one point", Min: xy(10, 10), Max: xy(10, 10)},
		{Name: "empty", Min: xy(100, 100), Max: xy(200, 200)},
		{Name: "radius", Radius: true, Centre: xy(12, 14), R: 9.5},
		{Name: "empty radius", Radius: true, Centre: xy(-50, -50), R: 3},
	}
}

// ColumnsCaps are the (cap_points, vals_cap) pairs CheckColumns reads at.
func ColumnsCaps() [][2]uint32 {
	var cs [][2]uint32
	for _, n := range []uint32{0, 1, 2, 7, 64, 1024} {
		for _, v := range []uint32{0, 1, 11, 64, 4096, 400 << 10} {
			cs = append(cs, [2]uint32{n, v})
		}
	}
	return cs
}

// ColumnsArgs are the guest's arguments for a query.
func ColumnsArgs(mode int, capPoints, valsCap uint32, q ColumnsQuery) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(mode))
	b = binary.LittleEndian.AppendUint32(b, capPoints)
	b = binary.LittleEndian.AppendUint32(b, valsCap)
	kind, r, cs := uint32(0), 0.0, append(slices.Clone(q.Min), q.Max...)
	if q.Radius {
		kind, r, cs = 1, q.R, q.Centre
	}
	b = binary.LittleEndian.AppendUint32(b, kind)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r))
	return append(b, Coords(cs...)...)
}

// CheckColumns runs every query of ColumnsQueries on the data of
// ColumnsData through run (columns.wasm on a host holding that data) and
// returns what disagrees.
func CheckColumns(run func(args []byte) ([]byte, error)) error {
	d := ColumnsData()
	var errs []string
	for _, q := range ColumnsQueries() {
		want, err := run(ColumnsArgs(0, 0, 400<<10, q))
		if err != nil {
			return fmt.Errorf("%s: region_next: %w", q.Name, err)
		}
		if got, brute := sortedRecords(want, d.Dims), bruteRecords(d, q); got != brute {
			errs = append(errs, fmt.Sprintf("%s: region_next gave %d bytes of records, brute force %d", q.Name, len(got), len(brute)))
		}
		for _, c := range ColumnsCaps() {
			for mode := 1; mode <= 2; mode++ {
				got, err := run(ColumnsArgs(mode, c[0], c[1], q))
				if err != nil {
					errs = append(errs, fmt.Sprintf("%s: mode %d, cap_points %d, vals_cap %d: %v", q.Name, mode, c[0], c[1], err))
					continue
				}
				if !bytes.Equal(got, want) {
					errs = append(errs, fmt.Sprintf("%s: mode %d, cap_points %d, vals_cap %d: %d bytes of records, region_next's %d (first difference at %d)",
						q.Name, mode, c[0], c[1], len(got), len(want), firstDiff(got, want)))
				}
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: region_columns:\n%s", ErrMismatch, strings.Join(errs, "\n"))
	}
	return nil
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// sortedRecords splits a stream of point records and returns them sorted,
// joined, so that two orders of one set compare equal.
func sortedRecords(b []byte, dims int) string {
	cw := 4 * dims
	var rs []string
	for len(b) >= cw+4 {
		size := vm.PointRecordSize(dims, int(binary.LittleEndian.Uint32(b[cw:])))
		if size > len(b) {
			break
		}
		rs = append(rs, string(b[:size]))
		b = b[size:]
	}
	if len(b) > 0 {
		rs = append(rs, "trailing "+string(b))
	}
	slices.Sort(rs)
	return strings.Join(rs, "")
}

func bruteRecords(d Data, q ColumnsQuery) string {
	var b []byte
	for _, p := range d.Points {
		in := true
		if q.Radius {
			dx, dy := float64(p.Coord[0]-q.Centre[0]), float64(p.Coord[1]-q.Centre[1])
			in = dx*dx+dy*dy <= q.R*q.R
		} else {
			for i, c := range p.Coord {
				in = in && q.Min[i] <= c && c <= q.Max[i]
			}
		}
		if in {
			b = vm.AppendPointRecord(b, p.Coord, p.Value)
		}
	}
	return sortedRecords(b, d.Dims)
}

// columnsModel is kitcheck's "columns" run: each kit reads three queries
// (a box in batches of 7, a radius in batches of 1, an empty box with the
// kit's default batch) with its column reader and with its point
// iterator, and prints
//
//	columns <query>: n=<points> bytes=<their values' bytes> same
//
// "same" when the two gave the same points in the same order (a kit
// prints "differs" otherwise).
func columnsModel(ctx context.Context, h vm.Host) (string, error) {
	var out []string
	for _, q := range []struct {
		name string
		cur  vm.Cursor[vm.Point]
	}{
		{"region -20,-20..20,20", h.Region(ctx, xy(-20, -20), xy(20, 20))},
		{"within 37,-12 r=15", h.Within(ctx, nearCentres[1], 15)},
		{"region 100,100..200,200", h.Region(ctx, xy(100, 100), xy(200, 200))},
	} {
		n, size := 0, 0
		for p, ok := q.cur.Next(); ok; p, ok = q.cur.Next() {
			n++
			size += len(p.Value)
		}
		q.cur.Close()
		if err := q.cur.Err(); err != nil {
			return "", err
		}
		out = append(out, "columns "+q.name+": n="+strconv.Itoa(n)+" bytes="+strconv.Itoa(size)+" same")
	}
	return strings.Join(out, "\n"), nil
}
