package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cubelinux/cube/engine/curve"
)

// TestSortKeys checks sortKeys against a comparison sort by (key,
// position) on batches above and below radixMin whose keys differ in
// chosen words and bytes only, with repeated keys. Seen failing with
// the radix passes taken most significant byte first (out of order),
// with the scatter walking the items backwards (equal keys out of write
// order), and with the skip of equal bytes testing the wrong word.
func TestSortKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{0, 1, 7, radixMin - 1, radixMin, 5000, 70_000} {
		for _, shape := range []string{"word0-low", "word0", "word2", "all", "few", "same"} {
			t.Run(fmt.Sprintf("%d/%s", n, shape), func(t *testing.T) {
				base := curve.Key{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()}
				ks := make([]sortKey, n)
				for i := range ks {
					k := base
					switch shape {
					case "word0-low":
						k[0] = k[0]&^0xffffff | rng.Uint64()&0xffffff
					case "word0":
						k[0] = rng.Uint64()
					case "word2":
						k[2] = k[2]&^(0xff<<40) | rng.Uint64()&(0xff<<40)
						k[3] = rng.Uint64() & 3
					case "all":
						k = curve.Key{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()}
					case "few":
						k[1] = rng.Uint64N(4) << 60
						k[3] = rng.Uint64N(3)
					}
					ks[i] = sortKey{key: k, pos: int32(i)}
				}
				want := slices.Clone(ks)
				slices.SortFunc(want, compareSortKeys)
				sortKeys(ks)
				for i := range ks {
					if ks[i] != want[i] {
						t.Fatalf("item %d is %x (written %d), want %x (written %d)", i, ks[i].key, ks[i].pos, want[i].key, want[i].pos)
					}
				}
			})
		}
	}
}

// BenchmarkSortKeys sorts a seal's batch of 262,144 writes to random
// points of a 1024x1024x1024 3-D namespace (Hilbert keys), with
// sortKeys and with the comparison sort it replaced.
func BenchmarkSortKeys(b *testing.B) {
	c, err := curve.New(curve.Hilbert, 3)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(6, 6))
	ks := make([]sortKey, 1<<18)
	for i := range ks {
		ks[i] = sortKey{key: c.Encode([]int32{rng.Int32N(1024), rng.Int32N(1024), rng.Int32N(1024)}), pos: int32(i)}
	}
	work := make([]sortKey, len(ks))
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			copy(work, ks)
			sortKeys(work)
		}
	})
	b.Run("compare", func(b *testing.B) {
		for b.Loop() {
			copy(work, ks)
			slices.SortFunc(work, compareSortKeys)
		}
	})
}
