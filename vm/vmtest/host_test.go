package vmtest_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
)

var ctx = context.Background()

func c(v ...int32) []int32 { return v }

func collect[T any](t *testing.T, cur vm.Cursor[T]) []T {
	t.Helper()
	defer cur.Close()
	var out []T
	for {
		v, ok := cur.Next()
		if !ok {
			break
		}
		out = append(out, v)
	}
	if err := cur.Err(); err != nil {
		t.Fatalf("cursor: %v", err)
	}
	return out
}

func TestPutGetDelete(t *testing.T) {
	h := vmtest.NewHost(2)
	if _, ok, err := h.Get(ctx, c(1, 2)); ok || err != nil {
		t.Fatalf("get absent: ok=%v err=%v", ok, err)
	}
	buf := []byte("hello")
	if err := h.Put(ctx, c(1, 2), buf); err != nil {
		t.Fatal(err)
	}
	buf[0] = 'X' // Put must have copied
	v, ok, err := h.Get(ctx, c(1, 2))
	if !ok || err != nil || string(v) != "hello" {
		t.Fatalf("get = %q %v %v", v, ok, err)
	}
	if ex, err := h.Delete(ctx, c(1, 2)); !ex || err != nil {
		t.Fatalf("delete = %v %v", ex, err)
	}
	if ex, _ := h.Delete(ctx, c(1, 2)); ex {
		t.Fatal("second delete reported a value")
	}
	if err := h.Put(ctx, c(1), nil); !errors.Is(err, vmtest.ErrBadCoord) {
		t.Fatalf("short coord: %v", err)
	}
}

func TestReadOnlyAndInjectedError(t *testing.T) {
	h := vmtest.NewHost(1)
	h.SetReadOnly(true)
	checks := map[string]error{
		"put":  h.Put(ctx, c(1), []byte("x")),
		"link": h.Link(ctx, vm.Edge{From: c(1), To: c(2)}),
	}
	_, checks["delete"] = h.Delete(ctx, c(1))
	_, checks["unlink"] = h.Unlink(ctx, c(1), c(2), "")
	for op, err := range checks {
		if !errors.Is(err, vm.ErrReadOnly) {
			t.Errorf("%s: %v, want ErrReadOnly", op, err)
		}
	}
	if h.Len() != 0 {
		t.Fatal("read-only host was written")
	}
	boom := errors.New("boom")
	h.SetError(boom)
	if _, _, err := h.Get(ctx, c(1)); !errors.Is(err, boom) {
		t.Fatalf("get with injected error: %v", err)
	}
	if cur := h.Region(ctx, c(0), c(9)); func() bool { _, ok := cur.Next(); return ok }() || !errors.Is(cur.Err(), boom) {
		t.Fatalf("region with injected error: %v", cur.Err())
	}
}

func TestRegionMatchesBruteForce(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	h := vmtest.NewHost(3)
	var all [][]int32
	for range 2000 {
		p := c(r.Int32N(41)-20, r.Int32N(41)-20, r.Int32N(41)-20)
		if err := h.Put(ctx, p, []byte{byte(p[0])}); err != nil {
			t.Fatal(err)
		}
		all = append(all, p)
	}
	for range 50 {
		lo, hi := make([]int32, 3), make([]int32, 3)
		for i := range 3 {
			a, b := r.Int32N(45)-22, r.Int32N(45)-22
			lo[i], hi[i] = min(a, b), max(a, b)
		}
		want := map[[3]int32]bool{}
		for _, p := range all {
			if p[0] >= lo[0] && p[0] <= hi[0] && p[1] >= lo[1] && p[1] <= hi[1] && p[2] >= lo[2] && p[2] <= hi[2] {
				want[[3]int32(p)] = true
			}
		}
		got := collect(t, h.Region(ctx, lo, hi))
		if len(got) != len(want) {
			t.Fatalf("box %v..%v: %d points, want %d", lo, hi, len(got), len(want))
		}
		if !sort.SliceIsSorted(got, func(i, j int) bool { return less(got[i].Coord, got[j].Coord) }) {
			t.Fatalf("box %v..%v: not in lexicographic order", lo, hi)
		}
		for _, p := range got {
			if !want[[3]int32(p.Coord)] || p.Value[0] != byte(p.Coord[0]) {
				t.Fatalf("unexpected point %v %v", p.Coord, p.Value)
			}
		}
	}
}

func less(a, b []int32) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func graph(t *testing.T) *vmtest.Host {
	t.Helper()
	h := vmtest.NewHost(1)
	for _, e := range []vm.Edge{
		{From: c(0), To: c(1), Label: "road", Weight: 1},
		{From: c(0), To: c(2), Label: "road", Weight: 5},
		{From: c(1), To: c(2), Label: "road", Weight: 1},
		{From: c(2), To: c(3), Label: "rail", Weight: 1},
		{From: c(1), To: c(3), Label: "road", Weight: 10},
		{From: c(3), To: c(3), Label: "loop", Weight: 1},
	} {
		if err := h.Link(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func TestEdges(t *testing.T) {
	h := graph(t)
	tos := func(es []vm.Edge) (s []int32) {
		for _, e := range es {
			s = append(s, e.From[0]*10+e.To[0])
		}
		return
	}
	for _, tc := range []struct {
		at    int32
		dir   vm.Direction
		label string
		want  []int32
	}{
		{0, vm.Out, "", []int32{1, 2}},
		{2, vm.In, "", []int32{2, 12}},
		{2, vm.Both, "", []int32{23, 2, 12}},
		{3, vm.Both, "", []int32{33, 13, 23}}, // self-loop once
		{3, vm.In, "rail", []int32{23}},
		{1, vm.Out, "road", []int32{12, 13}},
	} {
		got := tos(collect(t, h.Edges(ctx, c(tc.at), tc.dir, tc.label)))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("edges(%d, %v, %q) = %v, want %v", tc.at, tc.dir, tc.label, got, tc.want)
		}
	}
	if ex, err := h.Unlink(ctx, c(0), c(1), "road"); !ex || err != nil {
		t.Fatalf("unlink: %v %v", ex, err)
	}
	if got := collect(t, h.Edges(ctx, c(1), vm.In, "")); len(got) != 0 {
		t.Fatalf("in-index still has %v", got)
	}
}

func TestWalk(t *testing.T) {
	h := graph(t)
	type st struct{ at, depth, from int32 }
	conv := func(steps []vm.WalkStep) (s []st) {
		for _, x := range steps {
			f := int32(-1)
			if x.From != nil {
				f = x.From[0]
			}
			s = append(s, st{x.Coord[0], int32(x.Depth), f})
		}
		return
	}
	for _, tc := range []struct {
		name string
		o    vm.WalkOptions
		want []st
	}{
		{"bfs default depth 1", vm.WalkOptions{}, []st{{0, 0, -1}, {1, 1, 0}, {2, 1, 0}}},
		{"bfs depth 2", vm.WalkOptions{MaxDepth: 2}, []st{{0, 0, -1}, {1, 1, 0}, {2, 1, 0}, {3, 2, 1}}},
		{"dfs depth 3", vm.WalkOptions{Order: vm.DFS, MaxDepth: 3}, []st{{0, 0, -1}, {1, 1, 0}, {2, 2, 1}, {3, 3, 2}}},
		{"label rail", vm.WalkOptions{MaxDepth: 5, Label: "rail"}, []st{{0, 0, -1}}},
		{"limit", vm.WalkOptions{MaxDepth: 5, Limit: 2}, []st{{0, 0, -1}, {1, 1, 0}}},
	} {
		steps, err := h.Walk(ctx, c(0), tc.o)
		if err != nil {
			t.Fatal(err)
		}
		if got := conv(steps); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	steps, _ := h.Walk(ctx, c(3), vm.WalkOptions{Direction: vm.In, MaxDepth: 9})
	if len(steps) != 4 {
		t.Errorf("reverse walk reached %d nodes, want 4", len(steps))
	}
}

func TestShortestPath(t *testing.T) {
	h := graph(t)
	p, ok, err := h.ShortestPath(ctx, c(0), c(3), vm.PathOptions{Direction: vm.Out})
	if err != nil || !ok || p.Weight != 3 || len(p.Coords) != 4 {
		t.Fatalf("path = %v %v %v", p, ok, err)
	}
	if _, ok, _ := h.ShortestPath(ctx, c(3), c(0), vm.PathOptions{Direction: vm.Out}); ok {
		t.Fatal("path against the edges")
	}
	if p, ok, _ := h.ShortestPath(ctx, c(3), c(0), vm.PathOptions{Direction: vm.Both}); !ok || p.Weight != 3 {
		t.Fatalf("undirected path = %v %v", p, ok)
	}
	if p, ok, _ := h.ShortestPath(ctx, c(0), c(3), vm.PathOptions{Label: "road", Direction: vm.Out}); !ok || p.Weight != 11 {
		t.Fatalf("road-only path = %v %v", p, ok)
	}
	if p, ok, _ := h.ShortestPath(ctx, c(2), c(2), vm.PathOptions{Direction: vm.Out}); !ok || p.Weight != 0 || len(p.Coords) != 1 {
		t.Fatalf("trivial path = %v %v", p, ok)
	}
}

// TestShortestPathRandom compares Dijkstra with Bellman-Ford on random
// graphs, and the bounded search with Bellman-Ford stopped after k rounds.
//
// Break seen caught: boundedPath answering from its last layer instead
// of the best of all layers (weights above the bound's least).
func TestShortestPathRandom(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for range 20 {
		const n = 30
		h := vmtest.NewHost(1)
		w := [n][n]float64{}
		for i := range n {
			for j := range n {
				w[i][j] = math.Inf(1)
			}
		}
		for range 80 {
			a, b := r.IntN(n), r.IntN(n)
			wt := float64(r.IntN(20))
			if err := h.Link(ctx, vm.Edge{From: c(int32(a)), To: c(int32(b)), Weight: wt}); err != nil {
				t.Fatal(err)
			}
			w[a][b] = wt // Link replaces: last weight wins
		}
		dist := make([]float64, n)
		for i := range dist {
			dist[i] = math.Inf(1)
		}
		dist[0] = 0
		for range n {
			for a := range n {
				for b := range n {
					dist[b] = min(dist[b], dist[a]+w[a][b])
				}
			}
		}
		for b := range n {
			p, ok, err := h.ShortestPath(ctx, c(0), c(int32(b)), vm.PathOptions{Direction: vm.Out})
			if err != nil {
				t.Fatal(err)
			}
			if ok != !math.IsInf(dist[b], 1) || (ok && p.Weight != dist[b]) {
				t.Fatalf("0->%d: %v %v, want %v", b, p.Weight, ok, dist[b])
			}
		}
		// Bounded: round k of a Bellman-Ford that copies the distances
		// before each round holds the least weight over at most k edges.
		for i := range dist {
			dist[i] = math.Inf(1)
		}
		dist[0] = 0
		for k := 1; k <= 6; k++ {
			prev := slices.Clone(dist)
			for a := range n {
				for b := range n {
					dist[b] = min(dist[b], prev[a]+w[a][b])
				}
			}
			for b := range n {
				p, ok, err := h.ShortestPath(ctx, c(0), c(int32(b)), vm.PathOptions{MaxHops: k})
				if err != nil {
					t.Fatal(err)
				}
				if ok != !math.IsInf(dist[b], 1) || (ok && (p.Weight != dist[b] || len(p.Coords)-1 > k)) {
					t.Fatalf("0->%d MaxHops %d: %v %v, want weight %v", b, k, p, ok, dist[b])
				}
			}
		}
	}
}

func TestTx(t *testing.T) {
	h := vmtest.NewHost(1)
	_ = h.Put(ctx, c(1), []byte("a"))
	before := h.Snapshot()

	tx := h.Begin()
	_ = tx.Put(ctx, c(2), []byte("b"))
	_ = tx.Link(ctx, vm.Edge{From: c(1), To: c(2)})
	if v, ok, _ := tx.Get(ctx, c(2)); !ok || string(v) != "b" {
		t.Fatal("tx does not see its own write")
	}
	if !reflect.DeepEqual(h.Snapshot(), before) {
		t.Fatal("uncommitted write visible in parent")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h.Snapshot(), before) {
		t.Fatal("rolled-back write visible")
	}
	if err := tx.Commit(); !errors.Is(err, vmtest.ErrTxDone) {
		t.Fatalf("commit after rollback: %v", err)
	}

	tx = h.Begin()
	_ = tx.Put(ctx, c(3), []byte("c"))
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := h.Get(ctx, c(3)); !ok || string(v) != "c" {
		t.Fatal("committed write not visible")
	}

	tx = h.Begin()
	_ = tx.Put(ctx, c(4), nil)
	_ = h.Put(ctx, c(5), nil)
	if err := tx.Commit(); !errors.Is(err, vmtest.ErrTxConflict) {
		t.Fatalf("conflicting commit: %v", err)
	}
	if _, ok, _ := h.Get(ctx, c(4)); ok {
		t.Fatal("conflicting commit applied")
	}

	cl := h.Clone()
	_ = cl.Put(ctx, c(9), nil)
	if _, ok, _ := h.Get(ctx, c(9)); ok {
		t.Fatal("clone shares writes with its source")
	}
}

// TestHammer runs readers, transactions and writers on one host at once,
// for the race detector.
func TestHammer(t *testing.T) {
	h := vmtest.NewHost(2)
	n := 300
	if testing.Short() {
		n = 50
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				p := c(int32(g), int32(i))
				switch i % 3 {
				case 0:
					_ = h.Put(cctx, p, []byte{1})
				case 1:
					tx := h.Begin()
					_ = tx.Put(cctx, p, []byte{2})
					_ = tx.Commit() // may conflict; either way consistent
				default:
					cur := h.Region(cctx, c(0, 0), c(9, int32(n)))
					for _, ok := cur.Next(); ok; _, ok = cur.Next() {
					}
					cur.Close()
				}
			}
		}()
	}
	wg.Wait()
}
