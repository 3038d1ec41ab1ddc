package curve_test

import (
	"encoding/binary"
	"testing"

	"github.com/cubelinux/cube/engine/curve"
)

// FuzzEncodeDecode: bytes pick a curve, dims and point; Encode/Decode must
// round-trip, and any 256-bit key must decode to a point that encodes back
// to the key with its unused bits cleared.
func FuzzEncodeDecode(f *testing.F) {
	f.Add([]byte{0, 2, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{1, 3, 0x80, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 1, 2, 3, 4})
	f.Add([]byte{0, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		kind := curve.Kind(data[0] & 1)
		dims := int(data[1]%curve.MaxDims) + 1
		c, err := curve.New(kind, dims)
		if err != nil {
			t.Fatal(err)
		}
		rest := data[2:]
		p := make([]int32, dims)
		for j := range p {
			var b [4]byte
			copy(b[:], rest)
			rest = rest[min(4, len(rest)):]
			p[j] = int32(binary.BigEndian.Uint32(b[:]))
		}
		q := make([]int32, dims)
		k := c.Encode(p)
		c.Decode(k, q)
		for j := range p {
			if p[j] != q[j] {
				t.Fatalf("%v %dd: Decode(Encode(%v)) = %v", kind, dims, p, q)
			}
		}
		var raw curve.Key
		var b [32]byte
		copy(b[:], data[2:])
		for i := range raw {
			raw[i] = binary.BigEndian.Uint64(b[8*i:])
		}
		c.Decode(raw, q)
		want := raw
		for bit := 32 * dims; bit < 256; bit++ {
			want[bit/64] &^= 1 << (63 - bit%64)
		}
		if got := c.Encode(q); got != want {
			t.Fatalf("%v %dd: Encode(Decode(%x)) = %x", kind, dims, raw, got)
		}
	})
}

// FuzzRanges: bytes pick a curve, dims (1..4), budget and a small box,
// anywhere in the space; every point of the box must be covered and the
// ranges well formed.
func FuzzRanges(f *testing.F) {
	f.Add([]byte{0, 1, 4, 0x80, 0, 0, 0, 9, 0x7f, 0xff, 0xff, 0xf0, 9})
	f.Add([]byte{1, 2, 1, 0xff, 0xff, 0xff, 0xfb, 7, 0, 0, 0, 3, 5, 0x12, 0x34, 0x56, 0x78, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 3 {
			return
		}
		kind := curve.Kind(data[0] & 1)
		dims := int(data[1]%4) + 1
		budget := int(data[2]%70) - 1
		c, err := curve.New(kind, dims)
		if err != nil {
			t.Fatal(err)
		}
		maxSide := []int{0, 300, 40, 12, 6}[dims]
		rest := data[3:]
		min, max := make([]int32, dims), make([]int32, dims)
		for j := range min {
			var b [5]byte
			copy(b[:], rest)
			if len(rest) > 5 {
				rest = rest[5:]
			} else {
				rest = nil
			}
			lo := int64(int32(binary.BigEndian.Uint32(b[:4])))
			side := int64(int(b[4]) % maxSide)
			if lo+side > 1<<31-1 {
				lo = 1<<31 - 1 - side
			}
			min[j], max[j] = int32(lo), int32(lo+side)
		}
		rs := c.Ranges(min, max, budget)
		checkShape(t, c, min, max, budget, rs)
		checkCover(t, c, min, max, rs)
	})
}
