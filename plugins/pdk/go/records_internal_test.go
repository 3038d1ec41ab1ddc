package pdk

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

func le32(b []byte, v ...uint32) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

func TestPointRecord(t *testing.T) {
	rec := le32(nil, 1, uint32(0xffffffff)) // coord (1, -1)
	rec = le32(rec, 3)
	rec = append(rec, "abc"...)
	rec = append(rec, 0) // padding to 4
	for _, tc := range []struct {
		name  string
		in    []byte
		coord []int32
		value string
		size  int
	}{
		{"whole", rec, []int32{1, -1}, "abc", 16},
		{"two records", append(slices.Clone(rec), rec...), []int32{1, -1}, "abc", 16},
		{"no padding at the end", rec[:15], []int32{1, -1}, "abc", 15},
		{"value cut", rec[:13], nil, "", 0},
		{"length cut", rec[:10], nil, "", 0},
		{"empty", nil, nil, "", 0},
		{"huge length", le32(le32(nil, 1, 2), 0xffffffff), nil, "", 0},
	} {
		c := make([]int32, 2)
		v, size := pointRecord(tc.in, c)
		if size != tc.size || string(v) != tc.value || (size > 0 && !slices.Equal(c, tc.coord)) {
			t.Errorf("%s: got %v %q %d, want %v %q %d", tc.name, c, v, size, tc.coord, tc.value, tc.size)
		}
	}
}

func TestEdgeRecord(t *testing.T) {
	rec := binary.LittleEndian.AppendUint64(nil, math.Float64bits(2.5))
	rec = le32(rec, 4, 1)          // label 4 bytes, value 1 byte
	rec = le32(rec, 7, 0xfffffff8) // from 7, to -8 (1 dim)
	rec = append(rec, "road"...)
	rec = append(rec, 'v')
	size := len(rec)
	rec = append(rec, make([]byte, 8-size%8)...)
	e := Edge{From: make([]int32, 1), To: make([]int32, 1)}
	if got := edgeRecord(rec, &e); got != len(rec) || e.Weight != 2.5 || e.From[0] != 7 || e.To[0] != -8 ||
		e.Label != "road" || string(e.Value) != "v" {
		t.Fatalf("got %d %+v", got, e)
	}
	for n := 0; n < size; n++ {
		if got := edgeRecord(rec[:n], &e); got != 0 {
			t.Errorf("cut at %d: size %d, want 0", n, got)
		}
	}
}

func TestWalkStepsAndPath(t *testing.T) {
	b := le32(nil, 0, 1, 1, 1, 2, 2, 1) // depth 0 at 1 from 1; depth 1 at 2 from 1 (1 dim)
	b = le32(b, 0xffffffff)[:len(b)+4]  // and half a step, ignored
	steps := walkSteps(b[:len(b)-4], 1)
	want := []Step{{Coord: []int32{1}, Depth: 0, From: []int32{1}}, {Coord: []int32{2}, Depth: 1, From: []int32{1}}}
	if len(steps) != 2 || !slices.Equal(steps[1].Coord, want[1].Coord) || steps[1].Depth != 1 || !slices.Equal(steps[0].From, want[0].From) {
		t.Fatalf("steps %+v", steps)
	}
	p := pathCoords(le32(nil, 1, 2, 3, 4, 5), 2)
	if len(p) != 2 || !slices.Equal(p[1], []int32{3, 4}) {
		t.Fatalf("path %v", p)
	}
	if got := encodeCoords(nil, []int32{1, -1}, []int32{2}); !slices.Equal(got, le32(nil, 1, 0xffffffff, 2)) {
		t.Fatalf("encode %x", got)
	}
}

func TestNeighborRecord(t *testing.T) {
	rec := binary.LittleEndian.AppendUint64(nil, math.Float64bits(1.5))
	rec = le32(rec, 1, uint32(0xffffffff)) // coord (1, -1)
	rec = le32(rec, 3)
	rec = append(rec, "abc"...)
	rec = append(rec, 0) // padding to 8: 8 + 8 + 4 + 3 = 23 -> 24
	c := make([]int32, 2)
	if d, v, size := neighborRecord(rec, c); d != 1.5 || string(v) != "abc" || size != 24 || !slices.Equal(c, []int32{1, -1}) {
		t.Fatalf("got %v %q %d %v", d, v, size, c)
	}
	two := append(slices.Clone(rec), rec...)
	if _, _, size := neighborRecord(two, c); size != 24 {
		t.Fatalf("first of two records: size %d", size)
	}
	if _, v, size := neighborRecord(rec[:23], c); size != 23 || string(v) != "abc" {
		t.Errorf("no padding at the end: %q %d", v, size)
	}
	for n := 0; n < 23; n++ {
		if _, _, size := neighborRecord(rec[:n], c); size != 0 {
			t.Errorf("cut at %d: size %d, want 0", n, size)
		}
	}
}

// FuzzRecords feeds arbitrary bytes to the record decoders: they must never
// read past the buffer (a panic here) and must make progress or stop.
func FuzzRecords(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 'a', 'b', 'c', 0}, uint8(1))
	f.Add(make([]byte, 40), uint8(2))
	f.Fuzz(func(t *testing.T, b []byte, d uint8) {
		dims := int(d%8) + 1
		c := make([]int32, dims)
		for rest := b; len(rest) > 0; {
			_, size := pointRecord(rest, c)
			if size == 0 {
				break
			}
			if size > len(rest) {
				t.Fatalf("size %d past %d bytes", size, len(rest))
			}
			rest = rest[size:]
		}
		e := Edge{From: make([]int32, dims), To: make([]int32, dims)}
		for rest := b; len(rest) > 0; {
			size := edgeRecord(rest, &e)
			if size == 0 {
				break
			}
			if size > len(rest) {
				t.Fatalf("size %d past %d bytes", size, len(rest))
			}
			rest = rest[size:]
		}
		for rest := b; len(rest) > 0; {
			_, _, size := neighborRecord(rest, c)
			if size == 0 {
				break
			}
			if size > len(rest) {
				t.Fatalf("size %d past %d bytes", size, len(rest))
			}
			rest = rest[size:]
		}
		_ = walkSteps(b, dims)
		_ = pathCoords(b, dims)
	})
}
