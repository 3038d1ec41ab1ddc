package curve_test

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/cubelinux/cube/engine/curve"
)

// boxKeys returns the sorted keys of every point in the box.
func boxKeys(c *curve.Curve, min, max []int32) []curve.Key {
	var keys []curve.Key
	forEachPoint(min, max, func(p []int32) { keys = append(keys, c.Encode(p)) })
	slices.SortFunc(keys, curve.Key.Compare)
	return keys
}

// checkSeek checks one answer of Cursor.Seek and NextInBox for probe k
// against keys, the sorted keys of the box: the run must hold the
// smallest box key >= k, and every key from its lo to its hi must be a key
// of the box.
func checkSeek(t *testing.T, c *curve.Curve, cu *curve.Cursor, keys []curve.Key, min, max []int32, k curve.Key) {
	t.Helper()
	d := c.Dims()
	i, _ := slices.BinarySearchFunc(keys, k, curve.Key.Compare)
	lo, hi, ok := cu.Seek(k)
	next, nok := c.NextInBox(k, min, max)
	if i == len(keys) {
		if ok || nok {
			t.Fatalf("%v %dd box %v..%v: Seek(%x) = %x..%x %v, NextInBox = %x %v; want none", c.Kind(), d, min, max, k, lo, hi, ok, next, nok)
		}
		return
	}
	want := keys[i]
	if !nok || next != want {
		t.Fatalf("%v %dd box %v..%v: NextInBox(%x) = %x %v, want %x", c.Kind(), d, min, max, k, next, nok, want)
	}
	if !ok || want.Less(lo) || hi.Less(want) {
		t.Fatalf("%v %dd box %v..%v: Seek(%x) = %x..%x %v, want a run holding %x", c.Kind(), d, min, max, k, lo, hi, ok, want)
	}
	j, found := slices.BinarySearchFunc(keys, lo, curve.Key.Compare)
	if !found {
		t.Fatalf("%v %dd box %v..%v: Seek(%x) run starts at %x, not a box key", c.Kind(), d, min, max, k, lo)
	}
	for x := lo; ; j++ {
		if j == len(keys) || keys[j] != x {
			t.Fatalf("%v %dd box %v..%v: Seek(%x) run %x..%x holds %x, not a box key", c.Kind(), d, min, max, k, lo, hi, x)
		}
		if x == hi {
			break
		}
		inc(&x, d)
	}
}

// TestCursor compares Cursor.Seek with brute force on small boxes
// anywhere in the space: rising probes around the box, then a walk that
// reads every run in turn and must meet every key of the box once, in
// order, then a falling probe (which restarts the walk).
//
// Breaks it caught: Seek still skipping to the probe's digit in a cell
// entered after the probe (keys at the start of later cells missed), and
// Seek returning a cell that only meets the box as a run.
func TestCursor(t *testing.T) {
	r := rng(t)
	sides := []int{0, 40, 12, 6, 4, 3, 2, 2, 2}
	iters := iterations(30, 6)
	for _, k := range kinds {
		for d := 1; d <= curve.MaxDims; d++ {
			c := mustNew(t, k, d)
			for range iters {
				min, max := randBox(r, d, sides[d])
				keys := boxKeys(c, min, max)
				probes := []curve.Key{{}, keys[0], keys[len(keys)-1]}
				p := make([]int32, d)
				for range 200 {
					for j := range p {
						lo, hi := int64(min[j])-3, int64(max[j])+3
						p[j] = int32(max64(min64(lo+r.Int64N(hi-lo+1), 1<<31-1), -1<<31))
					}
					pk := c.Encode(p)
					probes = append(probes, pk)
					if inc(&pk, d) {
						probes = append(probes, pk)
					}
				}
				probes = append(probes, curve.Key{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)})
				slices.SortFunc(probes, curve.Key.Compare)
				var cu curve.Cursor
				if !cu.Reset(c, min, max) {
					t.Fatalf("Reset(%v, %v) = false", min, max)
				}
				for _, pk := range probes {
					checkSeek(t, c, &cu, keys, min, max, pk)
				}
				// The walk a scan makes when every key is present.
				cu.Reset(c, min, max)
				var next curve.Key
				n := 0
				for {
					lo, hi, ok := cu.Seek(next)
					if !ok {
						break
					}
					if lo != keys[n] {
						t.Fatalf("%v %dd box %v..%v: walk run %d starts at %x, want %x", k, d, min, max, n, lo, keys[n])
					}
					for x := lo; ; {
						if n == len(keys) || keys[n] != x {
							t.Fatalf("%v %dd box %v..%v: walk meets %x out of order", k, d, min, max, x)
						}
						n++
						if x == hi {
							break
						}
						inc(&x, d)
					}
					next = hi
					if !inc(&next, d) {
						break
					}
				}
				if n != len(keys) {
					t.Fatalf("%v %dd box %v..%v: walk met %d keys, want %d", k, d, min, max, n, len(keys))
				}
				checkSeek(t, c, &cu, keys, min, max, probes[len(probes)/2])
			}
		}
	}
}

func TestCursorEmpty(t *testing.T) {
	c := mustNew(t, curve.Hilbert, 2)
	var cu curve.Cursor
	if _, _, ok := cu.Seek(curve.Key{}); ok {
		t.Error("zero Cursor found a key")
	}
	if cu.Reset(c, []int32{5, 4}, []int32{-3, 9}) {
		t.Error("Reset of an inverted box = true")
	}
	if _, _, ok := cu.Seek(curve.Key{}); ok {
		t.Error("inverted box found a key")
	}
	if cu.Reset(c, []int32{5}, []int32{6, 9}) {
		t.Error("Reset of a short box = true")
	}
	if _, _, ok := cu.Seek(curve.Key{}); ok {
		t.Error("short box found a key")
	}
}

// FuzzNextInBox: bytes pick a curve, dims, a small box anywhere in the
// space and probe keys (raw, or near a point); NextInBox and a Cursor fed
// the probes in rising order must both give the smallest key >= the probe
// whose point is in the box, found by brute force over the box.
func FuzzNextInBox(f *testing.F) {
	f.Add([]byte{0, 1, 0x80, 0, 0, 0, 9, 0x7f, 0xff, 0xff, 0xf0, 9, 1, 2, 3})
	f.Add([]byte{1, 2, 0xff, 0xff, 0xff, 0xfb, 7, 0, 0, 0, 3, 5, 0x12, 0x34, 0x56, 0x78, 2, 9, 9, 9, 9})
	f.Add([]byte{0, 7, 0, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff, 1, 0x80, 0, 0, 0, 1})
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
		maxSide := []int{0, 300, 40, 12, 6, 4, 3, 2, 2}[dims]
		rest := data[2:]
		take := func(n int) []byte {
			b := make([]byte, n)
			copy(b, rest)
			rest = rest[min(n, len(rest)):]
			return b
		}
		lo, hi := make([]int32, dims), make([]int32, dims)
		for j := range lo {
			b := take(5)
			l := int64(int32(binary.BigEndian.Uint32(b)))
			side := int64(int(b[4]) % maxSide)
			if l+side > 1<<31-1 {
				l = 1<<31 - 1 - side
			}
			lo[j], hi[j] = int32(l), int32(l+side)
		}
		keys := boxKeys(c, lo, hi)
		var probes []curve.Key
		for len(rest) > 0 {
			b := take(1 + 4*dims)
			if b[0]&1 == 0 {
				// A point near the box, maybe just outside it.
				p := make([]int32, dims)
				for j := range p {
					off := int64(int8(b[1+4*j]))
					p[j] = int32(max64(min64(int64(lo[j])+off, 1<<31-1), -1<<31))
				}
				probes = append(probes, c.Encode(p))
			} else {
				// Any key, with stray bits past the used ones.
				var k curve.Key
				for i := range k {
					k[i] = uint64(binary.BigEndian.Uint32(b[1+4*(i%dims):])) << (32 * (i & 1))
				}
				probes = append(probes, k)
			}
		}
		slices.SortFunc(probes, curve.Key.Compare)
		var cu curve.Cursor
		cu.Reset(c, lo, hi)
		for _, k := range probes {
			checkSeek(t, c, &cu, keys, lo, hi, k)
		}
	})
}
