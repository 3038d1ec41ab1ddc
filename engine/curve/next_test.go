package curve_test

import (
	"slices"
	"testing"

	"github.com/cubelinux/cube/engine/curve"
)

// TestNextInBox compares NextInBox with brute force: the sorted keys of
// every point in a small box, searched for the first key >= k.
func TestNextInBox(t *testing.T) {
	r := rng(t)
	sides := []int{0, 40, 12, 6, 4, 3}
	iters := iterations(30, 6)
	for _, k := range kinds {
		for d := 1; d <= 5; d++ {
			c := mustNew(t, k, d)
			for range iters {
				min, max := randBox(r, d, sides[d])
				var keys []curve.Key
				forEachPoint(min, max, func(p []int32) { keys = append(keys, c.Encode(p)) })
				slices.SortFunc(keys, curve.Key.Compare)
				// Probe keys: points around the box (inside and out) and
				// their neighbouring keys, plus the ends of key space.
				probes := []curve.Key{{}, keys[0], keys[len(keys)-1]}
				p := make([]int32, d)
				for range 300 {
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
				for _, pk := range probes {
					i, _ := slices.BinarySearchFunc(keys, pk, curve.Key.Compare)
					got, ok := c.NextInBox(pk, min, max)
					if i == len(keys) {
						if ok {
							t.Fatalf("%v %dd box %v..%v: NextInBox(%x) = %x, want none", k, d, min, max, pk, got)
						}
						continue
					}
					if !ok || got != keys[i] {
						t.Fatalf("%v %dd box %v..%v: NextInBox(%x) = %x %v, want %x", k, d, min, max, pk, got, ok, keys[i])
					}
				}
			}
		}
	}
}

func TestNextInBoxEdges(t *testing.T) {
	c := mustNew(t, curve.Hilbert, 2)
	min, max := []int32{-3, 4}, []int32{5, 9}
	if _, ok := c.NextInBox(curve.Key{}, max, min); ok {
		t.Error("inverted box found a key")
	}
	if _, ok := c.NextInBox(curve.Key{}, min[:1], max); ok {
		t.Error("short box found a key")
	}
	// A key with bits past Dims*32 rounds up to the next key.
	k := c.Encode([]int32{0, 5})
	k2 := k
	k2[1] = 1
	k3 := k
	inc(&k3, 2)
	want, _ := c.NextInBox(k3, min, max)
	if got, ok := c.NextInBox(k2, min, max); !ok || got != want {
		t.Errorf("NextInBox of a key with tail bits = %x %v, want %x", got, ok, want)
	}
}
