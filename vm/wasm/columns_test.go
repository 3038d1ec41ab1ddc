package wasm_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/cubelinux/cube/plugins/pdk/conformance"
	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
	"github.com/cubelinux/cube/vm/wasm"
)

// TestRegionColumnsMatchesRegionNext runs the conformance check of
// region_columns (conformance.CheckColumns: every capacity edge, boxes
// and radii, alone and mixed with region_next on one cursor) on the
// reference host, whose cursors have no bulk path: this is the sandbox's
// own one-point-at-a-time path (examples' TestColumnsEngine runs the
// engine's).
//
// Breaks it caught: fillColumns taking one point more than cap_points
// (n_out over the capacity: the records came out of order); dropping the
// point that did not fit instead of holding it (points went missing);
// status 2 reporting the value bytes used so far instead of the next
// value's length (the guest's retry did not fit).
func TestRegionColumnsMatchesRegionNext(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "columns", vm.Limits{})
	h := vmtest.NewHost(2)
	if err := conformance.ColumnsData().Load(ctx, h); err != nil {
		t.Fatal(err)
	}
	err := conformance.CheckColumns(func(args []byte) ([]byte, error) {
		res, err := p.Run(ctx, h, args)
		return res.Output, err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRegionColumnsStatuses calls region_columns through the probe: the
// columns' layout, the end of the region (0 with n_out 0, and again
// after), status 2 with the value length needed, a closed cursor, an edge
// cursor and an unknown handle (6), a count too large for its column
// (trap), and that nothing is written past the n entries a call reports.
//
// Breaks it caught: writing the length column at the coordinates' offsets
// (the layout check); zeroing the unused rest of the columns (the
// sentinel check); taking a point past cap_points, into columns made one
// point longer (with cap_points 0: status 0 and n_out 1, not 2); a closed
// cursor read as an empty one (status 0, not 6); the columns' sizes
// computed in 32 bits (no trap for 0x40000000 points).
func TestRegionColumnsStatuses(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "probe", vm.Limits{})
	h := vmtest.NewHost(2)
	_ = h.Put(ctx, []int32{1, 1}, []byte("abcdef"))
	_ = h.Put(ctx, []int32{1, 2}, []byte("xy"))
	_ = h.Put(ctx, []int32{2, 2}, []byte("0123456789"))
	_ = h.Put(ctx, []int32{9, 9}, []byte(strings.Repeat("\xee", 112)))
	_ = h.Link(ctx, vm.Edge{From: []int32{1, 1}, To: []int32{1, 2}, Label: "r"})
	// data: box min at +0, max at +8, label "r" at +16, (9, 9) at +24
	data := append(coords(0, 0, 5, 5), 'r', 0, 0, 0, 0, 0, 0, 0)
	data = append(data, coords(9, 9)...)
	d := func(off int) uint64 { return uint64(dataAt + off) }
	o := func(off int) uint64 { return uint64(outAt + off) }
	// out: 0 cursor, 4 n, 8 value bytes, 16 coordinates (3 x 8), 48
	// lengths (3 x 4), 64 values. Every case starts by reading the value
	// at (9, 9), 112 bytes of 0xee, over [16, 128), so that bytes past
	// what a call reports can be seen to keep it.
	sentinel := call{fGet, []uint64{d(24), o(16), 112, o(12)}}
	cols := func(capPoints, valsCap uint64) call {
		return call{fRegionColumns, []uint64{1, o(16), o(48), o(64), capPoints, valsCap, o(4), o(8)}}
	}
	open := call{fRegionOpen, []uint64{d(0), d(8), o(0)}}
	for _, tc := range []struct {
		name  string
		calls []call
		want  []uint32
		check func(t *testing.T, m []byte)
	}{
		{"two of three", []call{open, cols(2, 64)}, []uint32{0, 0}, func(t *testing.T, m []byte) {
			n, vb := binary.LittleEndian.Uint32(m[4:]), binary.LittleEndian.Uint32(m[8:])
			if n != 2 || vb != 8 {
				t.Fatalf("n %d value bytes %d, want 2 and 8", n, vb)
			}
			if got, want := string(m[16:32]), string(coords(1, 1, 1, 2)); got != want {
				t.Errorf("coordinates %x, want %x", got, want)
			}
			if l0, l1 := binary.LittleEndian.Uint32(m[48:]), binary.LittleEndian.Uint32(m[52:]); l0 != 6 || l1 != 2 {
				t.Errorf("lengths %d %d", l0, l1)
			}
			if string(m[64:72]) != "abcdefxy" {
				t.Errorf("values %q", m[64:72])
			}
			if !all(m[32:48], 0xee) || !all(m[56:64], 0xee) || !all(m[72:128], 0xee) {
				t.Errorf("bytes past the reported entries were written: % x", m[16:128])
			}
		}},
		{"value longer than the buffer", []call{open, cols(3, 7)}, []uint32{0, 0}, func(t *testing.T, m []byte) {
			// (1,1) "abcdef" fits in 7, (1,2) "xy" does not after it
			if n, vb := binary.LittleEndian.Uint32(m[4:]), binary.LittleEndian.Uint32(m[8:]); n != 1 || vb != 6 {
				t.Errorf("n %d value bytes %d, want 1 and 6", n, vb)
			}
		}},
		{"not even one", []call{open, cols(3, 5)}, []uint32{0, wasm.StatusTooSmall}, func(t *testing.T, m []byte) {
			if n, need := binary.LittleEndian.Uint32(m[4:]), binary.LittleEndian.Uint32(m[8:]); n != 0 || need != 6 {
				t.Errorf("n %d need %d, want 0 and 6", n, need)
			}
		}},
		{"no room for a point", []call{open, cols(0, 64)}, []uint32{0, wasm.StatusTooSmall}, func(t *testing.T, m []byte) {
			if n, need := binary.LittleEndian.Uint32(m[4:]), binary.LittleEndian.Uint32(m[8:]); n != 0 || need != 6 {
				t.Errorf("n %d need %d, want 0 and 6", n, need)
			}
		}},
		{"the end, twice", []call{open, cols(3, 64), cols(3, 64), cols(0, 0)}, []uint32{0, 0, 0, 0}, func(t *testing.T, m []byte) {
			if n, vb := binary.LittleEndian.Uint32(m[4:]), binary.LittleEndian.Uint32(m[8:]); n != 0 || vb != 0 {
				t.Errorf("after the end: n %d value bytes %d", n, vb)
			}
		}},
		{"mixed with region_next", []call{open, cols(1, 64), {fRegionNext, []uint64{1, o(128), 512, o(4), o(8)}}}, []uint32{0, 0, 0}, func(t *testing.T, m []byte) {
			if n := binary.LittleEndian.Uint32(m[4:]); n != 2 {
				t.Errorf("region_next after one point by columns: n %d, want 2", n)
			}
			if got, want := string(m[128:128+12]), string(coords(1, 2, 2)); got != want {
				t.Errorf("region_next's first record %x, want %x", got, want)
			}
		}},
		{"closed cursor", []call{open, {fCursorClose, []uint64{1}}, cols(3, 64)}, []uint32{0, 0, wasm.StatusBadArg}, nil},
		{"unknown cursor", []call{{fRegionColumns, []uint64{7, o(16), o(48), o(64), 3, 64, o(4), o(8)}}}, []uint32{wasm.StatusBadArg}, nil},
		{"edge cursor", []call{{fEdgesOpen, []uint64{d(0), 2, d(16), 0, o(0)}}, cols(3, 64)}, []uint32{0, wasm.StatusBadArg}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, mem, err := probe(t, p, h, data, append([]call{sentinel}, tc.calls...)...)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				if st[0] != wasm.StatusOK {
					t.Fatalf("the sentinel's get: status %d", st[0])
				}
				if st[i+1] != tc.want[i] {
					t.Errorf("call %d: status %d, want %d", i, st[i+1], tc.want[i])
				}
			}
			if tc.check != nil {
				tc.check(t, mem)
			}
		})
	}
	// A count whose columns pass 4 GiB traps (computed in 64 bits, not
	// wrapped), as does a column past the end of memory.
	for _, capPoints := range []uint64{0x40000000, 0x20000000, 1 << 14} {
		_, _, err := probe(t, p, h, data, open, call{fRegionColumns, []uint64{1, 0, 0, o(64), capPoints, 64, o(4), o(8)}})
		if e := wantKind(t, err, vm.KindTrap); !strings.Contains(e.Msg, "region_columns") {
			t.Errorf("cap_points %#x: %q", capPoints, e.Msg)
		}
	}
	checkAlive(t, s)
}

// all reports whether every byte of b is c.
func all(b []byte, c byte) bool {
	for _, x := range b {
		if x != c {
			return false
		}
	}
	return true
}
