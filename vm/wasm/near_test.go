package wasm_test

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
	"github.com/cubelinux/cube/vm/wasm"
)

// spyHost counts and records the distance calls that reach the host, so
// tests can tell what the ABI passed on (or did not).
type spyHost struct {
	vm.Host
	nearby  int
	k       int
	maxDist float64
	paths   int
	hops    int
	walks   int
}

func (h *spyHost) Walk(ctx context.Context, start []int32, o vm.WalkOptions) ([]vm.WalkStep, error) {
	h.walks++
	return h.Host.Walk(ctx, start, o)
}

func (h *spyHost) Nearby(ctx context.Context, c []int32, k int, maxDist float64) ([]vm.Neighbor, error) {
	h.nearby++
	h.k, h.maxDist = k, maxDist
	return h.Host.Nearby(ctx, c, k, maxDist)
}

func (h *spyHost) ShortestPath(ctx context.Context, from, to []int32, o vm.PathOptions) (vm.Path, bool, error) {
	h.paths++
	h.hops = o.MaxHops
	return h.Host.ShortestPath(ctx, from, to, o)
}

// neighbor is a decoded neighbour record.
type neighbor struct {
	dist  float64
	coord []int32
	value string
}

// decodeNeighbors reads n neighbour records of a dims-axis namespace,
// checking the layout of docs/ABI.md §4 as it goes: sizes padded to 8 with
// zeros, and exactly used bytes in all.
func decodeNeighbors(t *testing.T, b []byte, dims, n, used int) []neighbor {
	t.Helper()
	var out []neighbor
	off := 0
	cw := 4 * dims
	for range n {
		r := b[off:]
		nb := neighbor{dist: math.Float64frombits(binary.LittleEndian.Uint64(r)), coord: make([]int32, dims)}
		for i := range nb.coord {
			nb.coord[i] = int32(binary.LittleEndian.Uint32(r[8+4*i:]))
		}
		vn := int(binary.LittleEndian.Uint32(r[8+cw:]))
		nb.value = string(r[12+cw : 12+cw+vn])
		size := (12 + cw + vn + 7) &^ 7
		for _, p := range r[12+cw+vn : size] {
			if p != 0 {
				t.Fatalf("record %d: padding %x is not zero", len(out), r[12+cw+vn:size])
			}
		}
		off += size
		out = append(out, nb)
	}
	if off != used {
		t.Fatalf("%d records take %d bytes, the host said %d", n, off, used)
	}
	return out
}

func fromHost(ns []vm.Neighbor) []neighbor {
	out := make([]neighbor, len(ns))
	for i, n := range ns {
		out[i] = neighbor{n.Dist, n.Coord, string(n.Value)}
	}
	return out
}

func sameNeighbors(a, b []neighbor) bool {
	return slices.EqualFunc(a, b, func(x, y neighbor) bool {
		return x.dist == y.dist && slices.Equal(x.coord, y.coord) && x.value == y.value
	})
}

// nearHost is a small 2-D namespace: a 5 x 5 grid with values "x,y", and
// edges for the hop-bounded paths: 0,0 -> 4,4 directly (weight 10) and
// through 2,2 (1 + 1).
func nearHost() *vmtest.Host {
	h := vmtest.NewHost(2)
	for x := int32(0); x < 5; x++ {
		for y := int32(0); y < 5; y++ {
			_ = h.Put(ctx, []int32{x, y}, []byte{byte('0' + x), ',', byte('0' + y)})
		}
	}
	_ = h.Link(ctx, vm.Edge{From: []int32{0, 0}, To: []int32{4, 4}, Label: "r", Weight: 10})
	_ = h.Link(ctx, vm.Edge{From: []int32{0, 0}, To: []int32{2, 2}, Label: "r", Weight: 1})
	_ = h.Link(ctx, vm.Edge{From: []int32{2, 2}, To: []int32{4, 4}, Label: "r", Weight: 1})
	return h
}

// TestNearby calls nearby through a real module with good and hostile
// arguments.
func TestNearby(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "probe", vm.Limits{MemoryBytes: 1 << 20})
	// data: centre 2,2 at +0; 0,0 at +8
	data := coords(2, 2, 0, 0)
	d := func(off int) uint64 { return uint64(dataAt + off) }
	o := func(off int) uint64 { return uint64(outAt + off) }
	inf := f64(math.Inf(1))
	// nearby(centre, k, max_dist, buf, cap, n_out, needed_out); the
	// records go to out+16, n to out+0, needed to out+4.
	near := func(centre uint64, k uint64, maxDist uint64, cap uint64) call {
		return call{fNearby, []uint64{centre, k, maxDist, o(16), cap, o(0), o(4)}}
	}
	for _, tc := range []struct {
		name  string
		calls []call
		want  []uint32
		// the neighbours the last call returns, from the host itself
		k       int
		maxDist float64
		centre  []int32
		// the host calls the run must make (0: not checked)
		searches int
	}{
		// k = 3 from 2,2: the centre, then two of the four at distance 1.
		{name: "k nearest", calls: []call{near(d(0), 3, inf, 512)}, want: []uint32{0}, k: 3, centre: []int32{2, 2}, searches: 1},
		// The buffer holds 2 of 3 records: status 2 with the need, then
		// the retry with a big enough buffer gets the same answer from
		// the cache. Break caught: without the cache (a second search)
		// searches is 2.
		{name: "too small then retry", calls: []call{near(d(0), 3, inf, 40), near(d(0), 3, inf, 512)},
			want: []uint32{wasm.StatusTooSmall, 0}, k: 3, centre: []int32{2, 2}, searches: 1},
		// A retry with other arguments is a new search, not the cache's
		// answer. Break caught: a key without k returned 3 records.
		{name: "other arguments after too small", calls: []call{near(d(0), 3, inf, 8), near(d(0), 2, inf, 512)},
			want: []uint32{wasm.StatusTooSmall, 0}, k: 2, centre: []int32{2, 2}, searches: 2},
		// max_dist 0 is the centre alone: the host's 0 (no bound) must
		// not leak through. Break caught: passing 0 as is returned 5.
		{name: "max_dist 0", calls: []call{near(d(0), 5, 0, 512)}, want: []uint32{0}, k: 5, maxDist: math.SmallestNonzeroFloat64, centre: []int32{2, 2}},
		// A point at exactly max_dist stays.
		{name: "max_dist 1", calls: []call{near(d(0), 50, f64(1), 1024)}, want: []uint32{0}, k: 50, maxDist: 1, centre: []int32{2, 2}},
		{name: "max_dist from a corner", calls: []call{near(d(8), 50, f64(math.Sqrt2), 1024)}, want: []uint32{0}, k: 50, maxDist: math.Sqrt2, centre: []int32{0, 0}},
		// Huge k: every point (25 records of 24 bytes).
		{name: "huge k", calls: []call{near(d(0), 0x7fffffff, inf, 1000)}, want: []uint32{0}, k: 25, centre: []int32{2, 2}},
		{name: "k 0", calls: []call{near(d(0), 0, inf, 512)}, want: []uint32{wasm.StatusBadArg}, searches: -1},
		{name: "k negative", calls: []call{near(d(0), 0xffffffff, inf, 512)}, want: []uint32{wasm.StatusBadArg}, searches: -1},
		{name: "NaN", calls: []call{near(d(0), 3, f64(math.NaN()), 512)}, want: []uint32{wasm.StatusBadArg}, searches: -1},
		{name: "negative distance", calls: []call{near(d(0), 3, f64(-1), 512)}, want: []uint32{wasm.StatusBadArg}, searches: -1},
		{name: "-Inf", calls: []call{near(d(0), 3, f64(math.Inf(-1)), 512)}, want: []uint32{wasm.StatusBadArg}, searches: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &spyHost{Host: nearHost()}
			st, mem, err := probe(t, p, h, data, tc.calls...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(st, tc.want) {
				t.Fatalf("statuses %v, want %v", st, tc.want)
			}
			switch {
			case tc.searches < 0 && h.nearby != 0:
				t.Errorf("a refused call reached the host %d times", h.nearby)
			case tc.searches > 0 && h.nearby != tc.searches:
				t.Errorf("%d searches, want %d", h.nearby, tc.searches)
			}
			if tc.k == 0 {
				return
			}
			n, used := binary.LittleEndian.Uint32(mem), binary.LittleEndian.Uint32(mem[4:])
			ref, err := nearHost().Nearby(ctx, tc.centre, tc.k, tc.maxDist)
			if err != nil {
				t.Fatal(err)
			}
			got := decodeNeighbors(t, mem[16:], 2, int(n), int(used))
			if want := fromHost(ref); !sameNeighbors(got, want) {
				t.Errorf("neighbours\n got %v\nwant %v", got, want)
			}
		})
	}
}

// TestNearbyTooSmall: status 2 writes the count and the need and nothing
// into the buffer.
func TestNearbyTooSmall(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "probe", vm.Limits{})
	o := func(off int) uint64 { return uint64(outAt + off) }
	st, mem, err := probe(t, p, nearHost(), coords(2, 2), call{fNearby, []uint64{dataAt, 3, f64(math.Inf(1)), o(16), 71, o(0), o(4)}})
	if err != nil {
		t.Fatal(err)
	}
	if st[0] != wasm.StatusTooSmall || binary.LittleEndian.Uint32(mem) != 3 || binary.LittleEndian.Uint32(mem[4:]) != 72 {
		t.Fatalf("status %d n %d need %d, want 2, 3, 72", st[0], binary.LittleEndian.Uint32(mem), binary.LittleEndian.Uint32(mem[4:]))
	}
	if !slices.Equal(mem[16:16+72], make([]byte, 72)) {
		t.Errorf("status 2 wrote into the buffer: %x", mem[16:88])
	}
}

// TestNearbyClampsK: a k whose answer could never fit in guest memory at
// its limit is not passed on whole. Break caught: without the clamp the
// host was asked for 2147483647 neighbours.
func TestNearbyClampsK(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "probe", vm.Limits{MemoryBytes: 1 << 20})
	h := &spyHost{Host: nearHost()}
	o := func(off int) uint64 { return uint64(outAt + off) }
	if _, _, err := probe(t, p, h, coords(2, 2), call{fNearby, []uint64{dataAt, 0x7fffffff, f64(math.Inf(1)), o(16), 1000, o(0), o(4)}}); err != nil {
		t.Fatal(err)
	}
	if want := (1<<20)/24 + 1; h.k != want {
		t.Fatalf("host asked for k = %d, want %d (1 MiB / 24-byte records, plus one)", h.k, want)
	}
	if h.maxDist != 0 {
		t.Errorf("+Inf reached the host as %v, want 0 (no bound)", h.maxDist)
	}
}

// TestNearbyRandom compares the packed answer with the host's own on
// random data, arguments and values of random lengths (so records have
// every padding).
func TestNearbyRandom(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	s := newSandbox(t)
	p := compile(t, s, "probe", vm.Limits{})
	for dims := 1; dims <= 3; dims++ {
		h := vmtest.NewHost(dims)
		for range 300 {
			c := make([]int32, dims)
			for i := range c {
				c[i] = r.Int32N(41) - 20
			}
			_ = h.Put(ctx, c, make([]byte, r.IntN(9)))
		}
		for range 40 {
			c := make([]int32, dims)
			for i := range c {
				c[i] = r.Int32N(51) - 25
			}
			k := 1 + r.IntN(20)
			maxDist := math.Inf(1)
			if r.IntN(2) == 0 {
				maxDist = float64(r.IntN(6)) + r.Float64()
			}
			o := func(off int) uint64 { return uint64(outAt + off) }
			st, mem, err := probe(t, p, h, coords(c...), call{fNearby, []uint64{dataAt, uint64(k), f64(maxDist), o(16), 1000, o(0), o(4)}})
			if err != nil || st[0] != 0 {
				t.Fatalf("nearby %v k %d max %v: status %v, %v", c, k, maxDist, st, err)
			}
			hostMax := maxDist
			if math.IsInf(maxDist, 1) {
				hostMax = 0
			}
			ref, _ := h.Nearby(ctx, c, k, hostMax)
			got := decodeNeighbors(t, mem[16:], dims, int(binary.LittleEndian.Uint32(mem)), int(binary.LittleEndian.Uint32(mem[4:])))
			if !sameNeighbors(got, fromHost(ref)) {
				t.Fatalf("nearby %v k %d max %v:\n got %v\nwant %v", c, k, maxDist, got, fromHost(ref))
			}
		}
	}
}

// TestWithin opens radius cursors and reads them with region_next.
func TestWithin(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "probe", vm.Limits{})
	o := func(off int) uint64 { return uint64(outAt + off) }
	within := func(r float64) call { return call{fWithinOpen, []uint64{dataAt, f64(r), o(0)}} }
	next := call{fRegionNext, []uint64{1, o(16), 1000, o(4), o(8)}}
	for _, tc := range []struct {
		name string
		r    float64
		want []uint32
		// the points of the first batch, in the host's order
		points [][]int32
	}{
		{"r 1", 1, []uint32{0, 0, 0, 0}, [][]int32{{1, 2}, {2, 1}, {2, 2}, {2, 3}, {3, 2}}},
		{"r 0", 0, []uint32{0, 0, 0, 0}, [][]int32{{2, 2}}},
		{"r 1.5", 1.5, []uint32{0, 0, 0, 0}, [][]int32{{1, 1}, {1, 2}, {1, 3}, {2, 1}, {2, 2}, {2, 3}, {3, 1}, {3, 2}, {3, 3}}},
		{"+Inf", math.Inf(1), []uint32{0, 0, 0, 0}, nil},
		// Refused before any host sees them, and no cursor opened: the
		// next region_next has no handle 1.
		{"NaN", math.NaN(), []uint32{wasm.StatusBadArg, wasm.StatusBadArg, wasm.StatusBadArg, wasm.StatusBadArg}, nil},
		{"negative", -0.5, []uint32{wasm.StatusBadArg, wasm.StatusBadArg, wasm.StatusBadArg, wasm.StatusBadArg}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, mem, err := probe(t, p, nearHost(), coords(2, 2), within(tc.r), next, next, call{fCursorClose, []uint64{1}})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(st, tc.want) {
				t.Fatalf("statuses %v, want %v", st, tc.want)
			}
			if tc.want[0] != 0 {
				return
			}
			if n := binary.LittleEndian.Uint32(mem[4:]); n != 0 {
				t.Errorf("second batch has %d points, want the end", n)
			}
			want := tc.points
			if want == nil {
				for x := int32(0); x < 5; x++ {
					for y := int32(0); y < 5; y++ {
						want = append(want, []int32{x, y})
					}
				}
			}
			// The first batch is still in the buffer: point records.
			b := mem[16:]
			for i, c := range want {
				if got := []int32{int32(binary.LittleEndian.Uint32(b)), int32(binary.LittleEndian.Uint32(b[4:]))}; !slices.Equal(got, c) {
					t.Fatalf("point %d: %v, want %v", i, got, c)
				}
				if n := binary.LittleEndian.Uint32(b[8:]); n != 3 || string(b[12:15]) != string([]byte{byte('0' + c[0]), ',', byte('0' + c[1])}) {
					t.Fatalf("point %d: value %q", i, b[12:12+n])
				}
				b = b[16:]
			}
		})
	}
}

// TestShortestPathHops: the bound reaches the host and changes the answer;
// a negative bound is refused.
func TestShortestPathHops(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "probe", vm.Limits{})
	// data: 0,0 at +0, 4,4 at +8, label "r" at +16
	data := append(coords(0, 0, 4, 4), 'r')
	d := func(off int) uint64 { return uint64(dataAt + off) }
	o := func(off int) uint64 { return uint64(outAt + off) }
	// (from, to, label, label_len, dir, max_hops, weight_out, buf, cap, needed_out)
	hops := func(n uint64, cap uint64) call {
		return call{fShortestPathHops, []uint64{d(0), d(8), d(16), 1, 0, n, o(8), o(16), cap, o(0)}}
	}
	for _, tc := range []struct {
		name   string
		calls  []call
		want   []uint32
		weight float64
		path   []byte
		host   int // MaxHops the host saw last
	}{
		{"one hop", []call{hops(1, 64)}, []uint32{0}, 10, coords(0, 0, 4, 4), 1},
		{"two hops", []call{hops(2, 64)}, []uint32{0}, 2, coords(0, 0, 2, 2, 4, 4), 2},
		{"no bound", []call{hops(0, 64)}, []uint32{0}, 2, coords(0, 0, 2, 2, 4, 4), 0},
		// The cache of the first answer must not serve another bound.
		// Break caught: a key without hops gave weight 10 to the 2-hop
		// call.
		{"too small, then another bound", []call{hops(1, 8), hops(2, 64)}, []uint32{wasm.StatusTooSmall, 0}, 2, coords(0, 0, 2, 2, 4, 4), 2},
		{"the old function has no bound", []call{{fShortestPath, []uint64{d(0), d(8), d(16), 1, 0, o(8), o(16), 64, o(0)}}}, []uint32{0}, 2, coords(0, 0, 2, 2, 4, 4), 0},
		{"negative", []call{hops(0xffffffff, 64)}, []uint32{wasm.StatusBadArg}, 0, nil, -1},
		{"bad direction", []call{{fShortestPathHops, []uint64{d(0), d(8), d(16), 1, 3, 1, o(8), o(16), 64, o(0)}}}, []uint32{wasm.StatusBadArg}, 0, nil, -1},
		{"no path", []call{{fShortestPathHops, []uint64{d(8), d(0), d(16), 1, 0, 1, o(8), o(16), 64, o(0)}}}, []uint32{wasm.StatusNotFound}, 0, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &spyHost{Host: nearHost()}
			st, mem, err := probe(t, p, h, data, tc.calls...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(st, tc.want) {
				t.Fatalf("statuses %v, want %v", st, tc.want)
			}
			if tc.host < 0 {
				if h.paths != 0 {
					t.Errorf("a refused call reached the host")
				}
				return
			}
			if h.hops != tc.host {
				t.Errorf("host saw MaxHops %d, want %d", h.hops, tc.host)
			}
			if tc.path == nil {
				return
			}
			if w := math.Float64frombits(binary.LittleEndian.Uint64(mem[8:])); w != tc.weight {
				t.Errorf("weight %v, want %v", w, tc.weight)
			}
			if need := binary.LittleEndian.Uint32(mem); int(need) != len(tc.path) || string(mem[16:16+need]) != string(tc.path) {
				t.Errorf("path %x (need %d), want %x", mem[16:16+need], need, tc.path)
			}
		})
	}
}

// nearArgs encodes nearloop's arguments: the number of centres, then the
// centres.
func nearArgs(centres ...[]int32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(centres)))
	for _, c := range centres {
		b = append(b, coords(c...)...)
	}
	return b
}

// TestNearLoop runs the benchmark guest of plugins' nearby benchmark: ten
// neighbours for each centre, reused instance after reused instance.
func TestNearLoop(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "nearloop", vm.Limits{Isolation: vm.Reuse})
	h := nearHost()
	for _, tc := range []struct {
		args []byte
		want uint32
	}{
		{nearArgs([]int32{0, 0}, []int32{2, 2}, []int32{100, -7}), 30},
		{nearArgs(), 0},
	} {
		res, err := p.Run(ctx, h, tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if got := binary.LittleEndian.Uint32(res.Output); got != tc.want {
			t.Errorf("found %d neighbours, want %d", got, tc.want)
		}
	}
}

// TestNearbyGeo: on a geographic host the ABI passes distances through,
// so they are metres on the sphere and cross the antimeridian, with
// coordinates as raw int32 (1e-7 degree). Break caught: converting
// max_dist in the ABI (metres to degrees) left London out of the 500 km
// nearby, unlike the host's own answer.
func TestNearbyGeo(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "probe", vm.Limits{})
	h := vmtest.NewGeoHost()
	deg := func(lon, lat float64) []int32 {
		return []int32{int32(math.Round(lon * 1e7)), int32(math.Round(lat * 1e7))}
	}
	cities := map[string][]int32{
		"paris": deg(2.3522, 48.8566), "london": deg(-0.1276, 51.5072), "berlin": deg(13.405, 52.52),
		"east": deg(179.95, 0), "west": deg(-179.95, 0),
	}
	for name, c := range cities {
		if err := h.Put(ctx, c, []byte(name)); err != nil {
			t.Fatal(err)
		}
	}
	o := func(off int) uint64 { return uint64(outAt + off) }
	for _, q := range []struct {
		centre  string
		k       int
		maxDist float64
		want    []string
	}{
		{"paris", 3, math.Inf(1), []string{"paris", "london", "berlin"}},
		{"paris", 3, 500e3, []string{"paris", "london"}},
		{"east", 2, math.Inf(1), []string{"east", "west"}}, // 11 km apart across the antimeridian
	} {
		st, mem, err := probe(t, p, h, coords(cities[q.centre]...), call{fNearby, []uint64{dataAt, uint64(q.k), f64(q.maxDist), o(16), 1000, o(0), o(4)}})
		if err != nil || st[0] != 0 {
			t.Fatalf("nearby %s: %v %v", q.centre, st, err)
		}
		got := decodeNeighbors(t, mem[16:], 2, int(binary.LittleEndian.Uint32(mem)), int(binary.LittleEndian.Uint32(mem[4:])))
		hostMax := q.maxDist
		if math.IsInf(hostMax, 1) {
			hostMax = 0
		}
		ref, _ := h.Nearby(ctx, cities[q.centre], q.k, hostMax)
		if !sameNeighbors(got, fromHost(ref)) {
			t.Fatalf("nearby %s:\n got %v\nwant %v", q.centre, got, fromHost(ref))
		}
		var names []string
		for _, n := range got {
			names = append(names, n.value)
		}
		if !slices.Equal(names, q.want) {
			t.Errorf("nearby %s k %d max %v: %v, want %v", q.centre, q.k, q.maxDist, names, q.want)
		}
		if q.centre == "east" && (got[1].dist < 10e3 || got[1].dist > 12e3) {
			t.Errorf("east to west: %v m, want about 11 km", got[1].dist)
		}
	}
	// within_open, read with region_next: the same metres.
	st, mem, err := probe(t, p, h, coords(cities["paris"]...),
		call{fWithinOpen, []uint64{dataAt, f64(500e3), o(0)}}, call{fRegionNext, []uint64{1, o(16), 1000, o(4), o(8)}})
	if err != nil || st[0] != 0 || st[1] != 0 {
		t.Fatalf("within: %v %v", st, err)
	}
	if n := binary.LittleEndian.Uint32(mem[4:]); n != 2 {
		t.Errorf("within 500 km of Paris: %d points, want 2 (Paris, London)", n)
	}
}

// TestNearbyHopeless: an answer larger than the guest's memory can ever
// be is not kept for a retry that cannot come (each call searches again).
// Break caught: without the check the host kept 1.3 MiB for a guest
// limited to 1 MiB, and the second call found it cached.
func TestNearbyHopeless(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "probe", vm.Limits{MemoryBytes: 1 << 20})
	base := vmtest.NewHost(1)
	for i := range int32(20) {
		_ = base.Put(ctx, []int32{i}, make([]byte, 64<<10))
	}
	h := &spyHost{Host: base}
	o := func(off int) uint64 { return uint64(outAt + off) }
	c := call{fNearby, []uint64{dataAt, 20, f64(math.Inf(1)), o(16), 64, o(0), o(4)}}
	st, mem, err := probe(t, p, h, coords(0), c, c)
	if err != nil {
		t.Fatal(err)
	}
	if want := uint32(20 * (8 + 4 + 4 + 64<<10)); st[1] != wasm.StatusTooSmall || binary.LittleEndian.Uint32(mem[4:]) != want {
		t.Fatalf("status %d need %d, want 2 and %d", st[1], binary.LittleEndian.Uint32(mem[4:]), want)
	}
	if h.nearby != 2 {
		t.Errorf("%d searches, want 2 (nothing kept)", h.nearby)
	}
}

// TestWalkCache: walk's retry after status 2 comes from the cache, and a
// call with other arguments does not. Break caught: a cache key without the
// limit answered the limit-2 walk with the 3 steps cached before.
func TestWalkCache(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "probe", vm.Limits{})
	o := func(off int) uint64 { return uint64(outAt + off) }
	// walk(start, order, max_depth, dir, label, label_len, limit, buf, cap, needed_out)
	walk := func(limit, cap uint64) call {
		return call{fWalk, []uint64{dataAt, 0, 2, 0, 0, 0, limit, o(16), cap, o(0)}}
	}
	for _, tc := range []struct {
		name  string
		calls []call
		want  []uint32
		need  uint32
		walks int
	}{
		{"retry", []call{walk(0, 8), walk(0, 512)}, []uint32{wasm.StatusTooSmall, 0}, 60, 1},
		{"other limit", []call{walk(0, 8), walk(2, 512)}, []uint32{wasm.StatusTooSmall, 0}, 40, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &spyHost{Host: nearHost()}
			st, mem, err := probe(t, p, h, coords(0, 0), tc.calls...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(st, tc.want) || binary.LittleEndian.Uint32(mem) != tc.need || h.walks != tc.walks {
				t.Errorf("statuses %v need %d walks %d, want %v, %d, %d", st, binary.LittleEndian.Uint32(mem), h.walks, tc.want, tc.need, tc.walks)
			}
		})
	}
}

// TestWalkCacheEndsWithRun: a run's walk cache dies with it, though a
// program pools its runs' state: the second run, on another host, asks its
// own host. Break caught: endRun keeping rs.cache answered the second run
// from the first's cache, with the first host's steps and no walk.
func TestWalkCacheEndsWithRun(t *testing.T) {
	s := newSandbox(t)
	p := compile(t, s, "probe", vm.Limits{})
	o := func(off int) uint64 { return uint64(outAt + off) }
	walk := func(cap uint64) call {
		return call{fWalk, []uint64{dataAt, 0, 2, 0, 0, 0, 0, o(16), cap, o(0)}}
	}
	first := &spyHost{Host: nearHost()}
	if st, _, err := probe(t, p, first, coords(0, 0), walk(8)); err != nil || st[0] != wasm.StatusTooSmall {
		t.Fatalf("first run: %v %v", st, err)
	}
	second := &spyHost{Host: vmtest.NewHost(2)} // no edges: a walk of the start alone
	st, mem, err := probe(t, p, second, coords(0, 0), walk(512))
	if err != nil {
		t.Fatal(err)
	}
	if st[0] != 0 || second.walks != 1 || binary.LittleEndian.Uint32(mem) == 60 {
		t.Errorf("second run: status %d, %d walks, needed %d; want 0, 1 walk, not the first host's 60", st[0], second.walks, binary.LittleEndian.Uint32(mem))
	}
}
