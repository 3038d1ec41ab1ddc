package curve_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/cubelinux/cube/engine/curve"
)

// forEachPoint calls f for every point of the box (the slice is reused).
func forEachPoint(min, max []int32, f func(p []int32)) {
	p := append([]int32(nil), min...)
	for {
		f(p)
		j := len(p) - 1
		for ; j >= 0; j-- {
			if p[j] < max[j] {
				p[j]++
				break
			}
			p[j] = min[j]
		}
		if j < 0 {
			return
		}
	}
}

func boxPoints(min, max []int32) float64 {
	v := 1.0
	for j := range min {
		v *= float64(int64(max[j]) - int64(min[j]) + 1)
	}
	return v
}

func keyBig(k curve.Key) *big.Int {
	b := new(big.Int)
	for _, w := range k {
		b.Lsh(b, 64)
		b.Or(b, new(big.Int).SetUint64(w))
	}
	return b
}

// rangeKeys is the number of keys in rs, in units of the last used bit.
func rangeKeys(rs []curve.Range, dims int) *big.Int {
	sum := new(big.Int)
	shift := uint(256 - 32*dims)
	for _, r := range rs {
		d := new(big.Int).Sub(keyBig(r.Hi), keyBig(r.Lo))
		d.Rsh(d, shift)
		sum.Add(sum, d.Add(d, big.NewInt(1)))
	}
	return sum
}

// checkShape checks what holds for every answer: at most budget ranges,
// each Lo <= Hi, sorted, disjoint and not touching (touching ones are
// merged), and each range holds at least one key of the box.
func checkShape(t testing.TB, c *curve.Curve, min, max []int32, budget int, rs []curve.Range) {
	t.Helper()
	want := budget
	if want <= 0 {
		want = curve.DefaultBudget
	}
	if len(rs) == 0 || len(rs) > want {
		t.Fatalf("%v %dd box %v..%v budget %d: %d ranges", c.Kind(), c.Dims(), min, max, budget, len(rs))
	}
	for i, r := range rs {
		if r.Hi.Less(r.Lo) {
			t.Fatalf("range %d: Hi < Lo: %x", i, r)
		}
		if i > 0 {
			next := rs[i-1].Hi
			if !inc(&next, c.Dims()) || !next.Less(r.Lo) {
				t.Fatalf("box %v..%v: ranges %d and %d overlap or touch: %x %x", min, max, i-1, i, rs[i-1], r)
			}
		}
		k, ok := c.NextInBox(r.Lo, min, max)
		if !ok || r.Hi.Less(k) {
			t.Fatalf("%v %dd box %v..%v: range %d %x holds no point of the box", c.Kind(), c.Dims(), min, max, i, r)
		}
	}
}

func covered(rs []curve.Range, k curve.Key) bool {
	i := sort.Search(len(rs), func(i int) bool { return !rs[i].Hi.Less(k) })
	return i < len(rs) && !k.Less(rs[i].Lo)
}

// checkCover enumerates a small box and checks every point is covered.
func checkCover(t testing.TB, c *curve.Curve, min, max []int32, rs []curve.Range) {
	t.Helper()
	forEachPoint(min, max, func(p []int32) {
		if k := c.Encode(p); !covered(rs, k) {
			t.Fatalf("%v %dd box %v..%v: point %v (key %x) not covered by %x", c.Kind(), c.Dims(), min, max, p, k, rs)
		}
	})
}

// randBox makes a box with sides up to maxSide placed anywhere, often
// near 0 or the int32 extremes.
func randBox(r *rand.Rand, dims int, maxSide int) (min, max []int32) {
	min, max = make([]int32, dims), make([]int32, dims)
	for j := range min {
		side := int64(r.IntN(maxSide)) + 1
		var lo int64
		switch r.IntN(4) {
		case 0:
			lo = int64(r.IntN(2*maxSide)) - int64(maxSide)
		case 1:
			lo = math.MinInt32 + int64(r.IntN(maxSide))
		case 2:
			lo = math.MaxInt32 - side + 1 - int64(r.IntN(maxSide))
		default:
			lo = int64(int32(r.Uint32()))
		}
		lo = min64(max64(lo, math.MinInt32), math.MaxInt32-side+1)
		min[j], max[j] = int32(lo), int32(lo+side-1)
	}
	return min, max
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func TestRangesSmallBoxes(t *testing.T) {
	r := rng(t)
	iters := iterations(20, 5)
	sides := []int{0, 1, 16, 40, 12, 6, 4, 3, 2} // max side per dims, keeps boxes enumerable
	for _, k := range kinds {
		for d := 1; d <= curve.MaxDims; d++ {
			c := mustNew(t, k, d)
			for range iters {
				min, max := randBox(r, d, sides[d])
				for _, budget := range []int{1, 4, 64, 0} {
					rs := c.Ranges(min, max, budget)
					checkShape(t, c, min, max, budget, rs)
					checkCover(t, c, min, max, rs)
				}
				// With a budget beyond need the cover is exact.
				rs := c.Ranges(min, max, 1<<16)
				if got, want := rangeKeys(rs, d), big.NewInt(int64(boxPoints(min, max))); got.Cmp(want) != 0 {
					t.Fatalf("%v %dd box %v..%v: exact cover holds %v keys for %v points", k, d, min, max, got, want)
				}
			}
		}
	}
}

// TestRangesLargeBoxes checks boxes too large to enumerate on sampled
// points: corners, random interior points, and the shape rules.
func TestRangesLargeBoxes(t *testing.T) {
	r := rng(t)
	iters := iterations(12, 4)
	for _, k := range kinds {
		for d := 1; d <= curve.MaxDims; d++ {
			c := mustNew(t, k, d)
			for range iters {
				min, max := randBox(r, d, 1<<(r.IntN(31)+1))
				for _, budget := range []int{1, 4, 64} {
					rs := c.Ranges(min, max, budget)
					checkShape(t, c, min, max, budget, rs)
					p := make([]int32, d)
					for range 50 {
						for j := range p {
							switch r.IntN(3) {
							case 0:
								p[j] = min[j]
							case 1:
								p[j] = max[j]
							default:
								p[j] = int32(int64(min[j]) + r.Int64N(int64(max[j])-int64(min[j])+1))
							}
						}
						if key := c.Encode(p); !covered(rs, key) {
							t.Fatalf("%v %dd box %v..%v budget %d: %v not covered", k, d, min, max, budget, p)
						}
					}
				}
			}
		}
	}
}

func TestRangesWholeSpaceAndEmpty(t *testing.T) {
	for _, k := range kinds {
		for d := 1; d <= curve.MaxDims; d++ {
			c := mustNew(t, k, d)
			min, max := make([]int32, d), make([]int32, d)
			for j := range min {
				min[j], max[j] = math.MinInt32, math.MaxInt32
			}
			rs := c.Ranges(min, max, 0)
			var top curve.Key
			for bit := 0; bit < 32*d; bit++ {
				top[bit/64] |= 1 << (63 - bit%64)
			}
			if len(rs) != 1 || rs[0].Lo != (curve.Key{}) || rs[0].Hi != top {
				t.Errorf("%v %dd whole space: %x", k, d, rs)
			}
			max[0] = math.MinInt32 + 5
			min[0] = math.MinInt32 + 6
			if rs := c.Ranges(min, max, 0); len(rs) != 0 {
				t.Errorf("%v %dd empty box: %x", k, d, rs)
			}
			if rs := c.Ranges(min[:d-1], max, 0); len(rs) != 0 {
				t.Errorf("%v %dd short box: %x", k, d, rs)
			}
			one := make([]int32, d)
			if rs := c.Ranges(one, one, 3); len(rs) != 1 || rs[0].Lo != rs[0].Hi || rs[0].Lo != c.Encode(one) {
				t.Errorf("%v %dd single point: %x", k, d, rs)
			}
		}
	}
}

// TestOverscan reports how many keys the ranges cover per point of the
// box for typical queries, and holds the Hilbert numbers to a bound.
func TestOverscan(t *testing.T) {
	r := rng(t)
	cases := []struct {
		dims, side, budget int
		bound              float64 // Hilbert mean over-scan must stay below
	}{
		{2, 256, 64, 1.5},
		{3, 64, 64, 3},
		{3, 16, 64, 3},
		{3, 128, 64, 3},
		{4, 16, 64, 6},
	}
	for _, tc := range cases {
		for _, k := range kinds {
			c := mustNew(t, k, tc.dims)
			sum, worst, n := 0.0, 0.0, 20
			for range n {
				min, max := make([]int32, tc.dims), make([]int32, tc.dims)
				for j := range min {
					min[j] = int32(r.IntN(1<<20)) - 1<<19
					max[j] = min[j] + int32(tc.side) - 1
				}
				rs := c.Ranges(min, max, tc.budget)
				f, _ := new(big.Float).SetInt(rangeKeys(rs, tc.dims)).Float64()
				ratio := f / boxPoints(min, max)
				sum += ratio
				worst = math.Max(worst, ratio)
			}
			mean := sum / float64(n)
			t.Logf("%v %dd side %d budget %d: keys/points mean %.3f worst %.3f", k, tc.dims, tc.side, tc.budget, mean, worst)
			if k == curve.Hilbert && mean > tc.bound {
				t.Errorf("%v %dd side %d: over-scan %.3f above %.1f", k, tc.dims, tc.side, mean, tc.bound)
			}
		}
	}
}

func TestContains(t *testing.T) {
	tests := []struct {
		min, max, p []int32
		want        bool
	}{
		{[]int32{0, 0}, []int32{3, 3}, []int32{0, 3}, true},
		{[]int32{0, 0}, []int32{3, 3}, []int32{4, 3}, false},
		{[]int32{-5}, []int32{-1}, []int32{-1}, true},
		{[]int32{-5}, []int32{-1}, []int32{0}, false},
		{[]int32{math.MinInt32}, []int32{math.MaxInt32}, []int32{math.MinInt32}, true},
		{[]int32{0}, []int32{3, 3}, []int32{1, 1}, false},
		{[]int32{0, 0}, []int32{3, 3}, nil, true},
	}
	for _, tt := range tests {
		if got := curve.Contains(tt.min, tt.max, tt.p); got != tt.want {
			t.Errorf("Contains(%v,%v,%v) = %v", tt.min, tt.max, tt.p, got)
		}
	}
}

func TestAppendRangesNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race")
	}
	c := mustNew(t, curve.Hilbert, 3)
	min, max := []int32{-10, 20, 300}, []int32{53, 83, 363}
	dst := make([]curve.Range, 0, 64)
	c.AppendRanges(dst, min, max, 64) // warm the pool
	allocs := testing.AllocsPerRun(50, func() {
		dst = c.AppendRanges(dst[:0], min, max, 64)
	})
	if allocs > 0.5 {
		t.Errorf("AppendRanges allocates %.1f times per call", allocs)
	}
}
