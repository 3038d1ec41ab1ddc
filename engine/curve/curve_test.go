package curve_test

import (
	"errors"
	"flag"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cubelinux/cube/engine/curve"
)

var seedFlag = flag.Uint64("curve.seed", 0, "seed for random tests (0: time based)")

// rng returns a seeded generator and logs the seed so that a failure can be
// replayed with -curve.seed.
func rng(t testing.TB) *rand.Rand {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -curve.seed=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// iterations picks the full count, or the short one under -short or -race
// (the race detector slows these loops some fifty times).
func iterations(full, short int) int {
	if testing.Short() || raceEnabled {
		return short
	}
	return full
}

var kinds = []curve.Kind{curve.Hilbert, curve.Morton}

func mustNew(t testing.TB, k curve.Kind, dims int) *curve.Curve {
	t.Helper()
	c, err := curve.New(k, dims)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var extremes = []int32{math.MinInt32, math.MinInt32 + 1, -1, 0, 1, math.MaxInt32 - 1, math.MaxInt32}

// randCoord favours the extremes and small values, where bugs live.
func randCoord(r *rand.Rand) int32 {
	switch r.IntN(4) {
	case 0:
		return extremes[r.IntN(len(extremes))]
	case 1:
		return int32(r.IntN(64) - 32)
	default:
		return int32(r.Uint32())
	}
}

func TestParseKind(t *testing.T) {
	tests := []struct {
		in   string
		want curve.Kind
		err  bool
	}{
		{"hilbert", curve.Hilbert, false},
		{"morton", curve.Morton, false},
		{" Hilbert ", curve.Hilbert, false},
		{"MORTON", curve.Morton, false},
		{"", 0, true},
		{"zorder", 0, true},
		{"hilbert2", 0, true},
	}
	for _, tt := range tests {
		got, err := curve.ParseKind(tt.in)
		if tt.err {
			if !errors.Is(err, curve.ErrKind) {
				t.Errorf("ParseKind(%q) err = %v, want ErrKind", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseKind(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if back, _ := curve.ParseKind(got.String()); back != got {
			t.Errorf("String round trip of %v gave %v", got, back)
		}
	}
	if s := curve.Kind(7).String(); s != "kind(7)" {
		t.Errorf("Kind(7).String() = %q", s)
	}
}

func TestNewErrors(t *testing.T) {
	for _, d := range []int{-1, 0, 9, 100} {
		if _, err := curve.New(curve.Hilbert, d); !errors.Is(err, curve.ErrDims) {
			t.Errorf("New(hilbert, %d) err = %v, want ErrDims", d, err)
		}
	}
	if _, err := curve.New(curve.Kind(2), 2); !errors.Is(err, curve.ErrKind) {
		t.Errorf("New(kind 2) err = %v, want ErrKind", err)
	}
	for _, k := range kinds {
		for d := 1; d <= curve.MaxDims; d++ {
			c := mustNew(t, k, d)
			if c.Dims() != d || c.Kind() != k {
				t.Errorf("New(%v,%d) reports %v,%d", k, d, c.Kind(), c.Dims())
			}
		}
	}
}

func TestKeyCompare(t *testing.T) {
	tests := []struct {
		a, b curve.Key
		want int
	}{
		{curve.Key{}, curve.Key{}, 0},
		{curve.Key{1}, curve.Key{2}, -1},
		{curve.Key{2}, curve.Key{1, 5, 5, 5}, 1},
		{curve.Key{0, 0, 0, 1}, curve.Key{0, 0, 1, 0}, -1},
		{curve.Key{math.MaxUint64}, curve.Key{0, math.MaxUint64}, 1},
	}
	for _, tt := range tests {
		if got := tt.a.Compare(tt.b); got != tt.want {
			t.Errorf("%v.Compare(%v) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := tt.a.Less(tt.b); got != (tt.want < 0) {
			t.Errorf("%v.Less(%v) = %v", tt.a, tt.b, got)
		}
	}
}

// TestMortonKnown pins the Morton layout: axis 0 is the most significant
// bit of each level, coordinates are offset by 2^31, keys are left-aligned.
func TestMortonKnown(t *testing.T) {
	tests := []struct {
		p    []int32
		want curve.Key
	}{
		{[]int32{math.MinInt32}, curve.Key{0}},
		{[]int32{0}, curve.Key{0x80000000 << 32}},
		{[]int32{-1}, curve.Key{0x7fffffff << 32}},
		{[]int32{math.MinInt32, math.MinInt32}, curve.Key{0}},
		{[]int32{0, math.MinInt32}, curve.Key{1 << 63}},
		{[]int32{math.MinInt32, 0}, curve.Key{1 << 62}},
		{[]int32{math.MinInt32 + 1, math.MinInt32}, curve.Key{2}},
		{[]int32{math.MinInt32, math.MinInt32 + 1}, curve.Key{1}},
		{[]int32{math.MinInt32, math.MinInt32, math.MinInt32 + 1}, curve.Key{0, 1 << 32}},
		{[]int32{math.MinInt32 + 1, math.MinInt32, math.MinInt32}, curve.Key{0, 4 << 32}},
		{[]int32{0, math.MinInt32, math.MinInt32}, curve.Key{1 << 63}},
		{[]int32{-1, -1, -1}, curve.Key{0x1fffffffffffffff, 0xffffffff << 32}},
		{[]int32{math.MaxInt32, math.MaxInt32, math.MaxInt32, math.MaxInt32}, curve.Key{math.MaxUint64, math.MaxUint64}},
		{[]int32{math.MinInt32, math.MinInt32, math.MinInt32, math.MinInt32, math.MinInt32 + 1}, curve.Key{0, 0, 1 << 32}},
		{[]int32{math.MinInt32 + 1, 0, 0, 0, 0, 0, 0, 0}, curve.Key{1<<62 | 1<<61 | 1<<60 | 1<<59 | 1<<58 | 1<<57 | 1<<56, 0, 0, 1 << 7}},
	}
	for _, tt := range tests {
		c := mustNew(t, curve.Morton, len(tt.p))
		if got := c.Encode(tt.p); got != tt.want {
			t.Errorf("morton Encode(%v) = %x, want %x", tt.p, got, tt.want)
		}
	}
}

// TestHilbertKnown pins the start of the Hilbert curve: it begins at the
// origin of the unsigned space (MinInt32 on every axis) and its first 2^d
// keys fill the first unit cube.
func TestHilbertKnown(t *testing.T) {
	for d := 1; d <= curve.MaxDims; d++ {
		c := mustNew(t, curve.Hilbert, d)
		p := make([]int32, d)
		c.Decode(curve.Key{}, p)
		for j := range p {
			if p[j] != math.MinInt32 {
				t.Fatalf("dims %d: key 0 decodes to %v", d, p)
			}
		}
	}
	// 2-D: the first four keys visit the unit square as a "U".
	c := mustNew(t, curve.Hilbert, 2)
	seen := map[[2]int32]bool{}
	for i := uint64(0); i < 4; i++ {
		p := make([]int32, 2)
		c.Decode(curve.Key{i}, p)
		seen[[2]int32{p[0] - math.MinInt32, p[1] - math.MinInt32}] = true
	}
	if len(seen) != 4 || !seen[[2]int32{0, 0}] || !seen[[2]int32{1, 1}] {
		t.Errorf("first four 2-D Hilbert keys visit %v", seen)
	}
}

// TestHilbertGolden freezes the Hilbert key format: keys are stored, so a
// change to the state machine, its start state or the digit layout must
// fail here rather than silently reorder a persisted index.
func TestHilbertGolden(t *testing.T) {
	tests := []struct {
		p    []int32
		want curve.Key
	}{
		{[]int32{1, 2}, curve.Key{0x8000000000000007, 0x0, 0x0, 0x0}},
		{[]int32{-5, 7}, curve.Key{0xd55555555555557a, 0x0, 0x0, 0x0}},
		{[]int32{1, 2, 3}, curve.Key{0xba69a69a69a69a69, 0xa69a69b200000000, 0x0, 0x0}},
		{[]int32{-100000, 5, 2147483647}, curve.Key{0xc000000000016a69, 0xfcb3563c00000000, 0x0, 0x0}},
		{[]int32{1, -2, 3, -4}, curve.Key{0x628e8e8e8e8e8e8e, 0x8e8e8e8e8e8e8e66, 0x0, 0x0}},
		{[]int32{9, 8, 7, 6, 5, 4, 3, 2}, curve.Key{0xaa2a80fe80fe80fe, 0x80fe80fe80fe80fe, 0x80fe80fe80fe80fe, 0x80fe80fe7ed460bc}},
	}
	for _, tt := range tests {
		c := mustNew(t, curve.Hilbert, len(tt.p))
		if got := c.Encode(tt.p); got != tt.want {
			t.Errorf("hilbert Encode(%v) = %#x, want %#x", tt.p, got, tt.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	r := rng(t)
	n := iterations(2000, 200)
	for _, k := range kinds {
		for d := 1; d <= curve.MaxDims; d++ {
			c := mustNew(t, k, d)
			p := make([]int32, d)
			q := make([]int32, d)
			check := func() {
				key := c.Encode(p)
				if !unusedZero(key, d) {
					t.Fatalf("%v %dd: Encode(%v) = %x has bits past %d", k, d, p, key, 32*d)
				}
				c.Decode(key, q)
				for j := range p {
					if p[j] != q[j] {
						t.Fatalf("%v %dd: Decode(Encode(%v)) = %v", k, d, p, q)
					}
				}
			}
			for _, x := range extremes {
				for j := range p {
					p[j] = x
				}
				check()
			}
			for range n {
				for j := range p {
					p[j] = randCoord(r)
				}
				check()
			}
		}
	}
}

func unusedZero(k curve.Key, d int) bool {
	for bit := 32 * d; bit < 256; bit++ {
		if k[bit/64]>>(63-bit%64)&1 != 0 {
			return false
		}
	}
	return true
}

// TestOrder1D: in one dimension both curves are the signed integer order.
func TestOrder1D(t *testing.T) {
	r := rng(t)
	for _, k := range kinds {
		c := mustNew(t, k, 1)
		vals := append([]int32{}, extremes...)
		for range 500 {
			vals = append(vals, randCoord(r))
		}
		for _, a := range vals {
			b := vals[r.IntN(len(vals))]
			ka, kb := c.Encode([]int32{a}), c.Encode([]int32{b})
			want := 0
			if a < b {
				want = -1
			} else if a > b {
				want = 1
			}
			if got := ka.Compare(kb); got != want {
				t.Fatalf("%v: Compare(key(%d), key(%d)) = %d, want %d", k, a, b, got, want)
			}
		}
	}
}

// TestHilbertAdjacency walks runs of consecutive keys and checks that each
// step moves to a cell at Manhattan distance exactly 1, starting near 0
// and near the int32 extremes.
func TestHilbertAdjacency(t *testing.T) {
	r := rng(t)
	for d := 2; d <= curve.MaxDims; d++ {
		c := mustNew(t, curve.Hilbert, d)
		starts := [][]int32{}
		for _, x := range []int32{0, -1, math.MinInt32, math.MaxInt32, math.MinInt32 + 7, math.MaxInt32 - 100} {
			p := make([]int32, d)
			for j := range p {
				p[j] = x
			}
			starts = append(starts, p)
		}
		for range 8 {
			p := make([]int32, d)
			for j := range p {
				p[j] = randCoord(r)
			}
			starts = append(starts, p)
		}
		steps := 4096
		if d > 4 {
			steps = 1024
		}
		prev := make([]int32, d)
		cur := make([]int32, d)
		for _, s := range starts {
			k := c.Encode(s)
			c.Decode(k, prev)
			for range steps {
				if !inc(&k, d) {
					break
				}
				c.Decode(k, cur)
				dist := uint64(0)
				for j := range cur {
					dd := int64(cur[j]) - int64(prev[j])
					if dd < 0 {
						dd = -dd
					}
					dist += uint64(dd)
				}
				if dist != 1 {
					t.Fatalf("dims %d: key %x decodes to %v, previous %v: distance %d", d, k, cur, prev, dist)
				}
				prev, cur = cur, prev
			}
		}
	}
}

// inc adds one to the key's last used bit; false on overflow.
func inc(k *curve.Key, d int) bool {
	bit := 32*d - 1
	w := bit / 64
	add := uint64(1) << (63 - bit%64)
	for i := w; i >= 0; i-- {
		s := k[i] + add
		carry := s < k[i]
		k[i] = s
		if !carry {
			return true
		}
		add = 1
	}
	return false
}

// TestShortPoint: a short p reads missing axes as 0 and a short output
// slice gets only its own coordinates; neither panics.
func TestShortPoint(t *testing.T) {
	for _, k := range kinds {
		for d := 1; d <= curve.MaxDims; d++ {
			c := mustNew(t, k, d)
			full := make([]int32, d)
			full[0] = 5
			if got, want := c.Encode([]int32{5}), c.Encode(full); got != want {
				t.Errorf("%v %dd: short Encode = %x, want %x", k, d, got, want)
			}
			_ = c.Encode(nil)
			out := []int32{0}
			c.Decode(c.Encode(full), out)
			if out[0] != 5 {
				t.Errorf("%v %dd: short Decode = %v", k, d, out)
			}
			c.Decode(curve.Key{}, nil)
		}
	}
}
