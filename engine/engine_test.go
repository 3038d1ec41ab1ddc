package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/curve"
	"github.com/cubelinux/cube/engine/vfs"
)

var ctx = context.Background()

// openMem opens the store at /data on fs (see openStore: it is verified
// when the test ends).
func openMem(t testing.TB, fs vfs.FS, o engine.Options, opts ...storeOpt) *engine.DB {
	t.Helper()
	o.FS = fs
	if o.SegmentSize == 0 {
		o.SegmentSize = 256 << 10
	}
	return mustOpen(t, "/data", o, opts...)
}

// openMortal is openMem on an incarnation of mem. crash ends it as a
// power loss would: the incarnation dies, mem keeps exactly what was
// synced, and the dead store is closed, which only stops its goroutines.
// A store left open across a crash of its MemFS is not dead: its Close
// (at the end of the test at the latest) would write a checkpoint into
// the store opened after it.
func openMortal(t testing.TB, mem *vfs.MemFS, o engine.Options) (db *engine.DB, crash func()) {
	t.Helper()
	fs, kill := incarnation(mem, 0)
	db = openMem(t, fs, o, verifyOn(mem))
	return db, func() {
		kill()
		mem.CrashClean()
		db.Close()
	}
}

func mustNS(t testing.TB, db *engine.DB, name string, dims int) *engine.Namespace {
	t.Helper()
	ns, err := db.CreateNamespace(ctx, name, engine.NamespaceOptions{Dims: dims})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func TestPutGetDeleteReopen(t *testing.T) {
	fs := vfs.NewMem()
	db := openMem(t, fs, engine.Options{})
	ns := mustNS(t, db, "world", 3)
	for i := int32(0); i < 100; i++ {
		if err := ns.Put(ctx, []int32{i, -i, i * 2}, fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := ns.Delete(ctx, []int32{5, -5, 10}); !ok || err != nil {
		t.Fatalf("delete = %v, %v", ok, err)
	}
	if ok, _ := ns.Delete(ctx, []int32{5, -5, 10}); ok {
		t.Fatal("second delete reported a value")
	}
	check := func(db *engine.DB, want int) {
		t.Helper()
		ns, err := db.Namespace("world")
		if err != nil {
			t.Fatal(err)
		}
		for i := int32(0); i < 100; i++ {
			v, err := ns.Get(ctx, []int32{i, -i, i * 2})
			if i == 5 {
				if !errors.Is(err, engine.ErrNotFound) {
					t.Fatalf("deleted value: %q, %v", v, err)
				}
				continue
			}
			if err != nil || string(v) != fmt.Sprintf("v%d", i) {
				t.Fatalf("get %d = %q, %v", i, v, err)
			}
		}
		if n := ns.Info().Values; n != want {
			t.Fatalf("values = %d", n)
		}
	}
	check(db, 99)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, crash := openMortal(t, fs, engine.Options{})
	check(db, 99)
	// And from the log alone, without the checkpoint Close wrote: crash
	// after more writes.
	ns, _ = db.Namespace("world")
	if err := ns.Put(ctx, []int32{1000, 0, 0}, []byte("after")); err != nil {
		t.Fatal(err)
	}
	crash()
	db = openMem(t, fs, engine.Options{})
	check(db, 100)
	ns, _ = db.Namespace("world")
	if v, err := ns.Get(ctx, []int32{1000, 0, 0}); err != nil || string(v) != "after" {
		t.Fatalf("after crash: %q, %v", v, err)
	}
	db.Close()
}

func TestBadInput(t *testing.T) {
	fs := vfs.NewMem()
	db := openMem(t, fs, engine.Options{})
	defer db.Close()
	ns, err := db.CreateNamespace(ctx, "small", engine.NamespaceOptions{Dims: 2, MaxValueSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	written := db.Stats().WrittenLSN
	cases := []struct {
		name string
		err  error
		fn   func() error
	}{
		{"dims", engine.ErrDims, func() error { return ns.Put(ctx, []int32{1}, nil) }},
		{"get dims", engine.ErrDims, func() error { _, err := ns.Get(ctx, []int32{1, 2, 3}); return err }},
		{"too large", engine.ErrValueTooLarge, func() error { return ns.Put(ctx, []int32{1, 2}, []byte("12345")) }},
		{"nan", engine.ErrBadWeight, func() error { return ns.Link(ctx, []int32{0, 0}, []int32{1, 1}, "r", math.NaN(), nil) }},
		{"inf", engine.ErrBadWeight, func() error { return ns.Link(ctx, []int32{0, 0}, []int32{1, 1}, "r", math.Inf(1), nil) }},
		{"-inf", engine.ErrBadWeight, func() error { return ns.Link(ctx, []int32{0, 0}, []int32{1, 1}, "r", math.Inf(-1), nil) }},
		{"negative", engine.ErrBadWeight, func() error { return ns.Link(ctx, []int32{0, 0}, []int32{1, 1}, "r", -5, nil) }},
		{"empty label", engine.ErrBadName, func() error { return ns.Link(ctx, []int32{0, 0}, []int32{1, 1}, "", 1, nil) }},
		{"box", engine.ErrBadBox, func() error { _, err := ns.Count(ctx, []int32{5, 0}, []int32{4, 0}); return err }},
		{"dims 0", engine.ErrBadOptions, func() error {
			_, err := db.CreateNamespace(ctx, "x", engine.NamespaceOptions{Dims: 0})
			return err
		}},
		{"dims 9", engine.ErrBadOptions, func() error {
			_, err := db.CreateNamespace(ctx, "x", engine.NamespaceOptions{Dims: 9})
			return err
		}},
		{"exists", engine.ErrNamespaceExists, func() error {
			_, err := db.CreateNamespace(ctx, "small", engine.NamespaceOptions{Dims: 2})
			return err
		}},
		{"unknown", engine.ErrNoNamespace, func() error { _, err := db.Namespace("nope"); return err }},
		{"bad name", engine.ErrBadName, func() error {
			_, err := db.CreateNamespace(ctx, "a\x00b", engine.NamespaceOptions{Dims: 2})
			return err
		}},
	}
	for _, c := range cases {
		if err := c.fn(); !errors.Is(err, c.err) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.err)
		}
	}
	if n := ns.Info().Values; n != 0 {
		t.Fatalf("bad input wrote %d values", n)
	}
	db.Sync(ctx)
	if w := db.Stats().WrittenLSN; w != written {
		t.Fatalf("bad input reached the log: LSN %d -> %d", written, w)
	}
	if n := ns.Info().Edges; n != 0 {
		t.Fatalf("bad input wrote %d edges", n)
	}
}

func TestRegionMatchesBruteForce(t *testing.T) {
	for _, cv := range []curve.Kind{curve.Hilbert, curve.Morton} {
		t.Run(cv.String(), func(t *testing.T) {
			db := openMem(t, vfs.NewMem(), engine.Options{Sync: engine.SyncNone})
			defer db.Close()
			ns, err := db.CreateNamespace(ctx, "r", engine.NamespaceOptions{Dims: 2, Curve: cv})
			if err != nil {
				t.Fatal(err)
			}
			for x := int32(-20); x < 20; x++ {
				for y := int32(-20); y < 20; y += 2 {
					if err := ns.Put(ctx, []int32{x, y}, []byte{byte(x), byte(y)}); err != nil {
						t.Fatal(err)
					}
				}
			}
			min, max := []int32{-7, -3}, []int32{5, 11}
			seq, err := ns.Region(ctx, min, max, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := map[[2]int32]bool{}
			for c, v := range seq {
				if c[0] < min[0] || c[0] > max[0] || c[1] < min[1] || c[1] > max[1] {
					t.Fatalf("outside box: %v", c)
				}
				if !bytes.Equal(v, []byte{byte(c[0]), byte(c[1])}) {
					t.Fatalf("value at %v = %v", c, v)
				}
				got[[2]int32{c[0], c[1]}] = true
			}
			want := 0
			for x := min[0]; x <= max[0]; x++ {
				for y := min[1]; y <= max[1]; y++ {
					if y%2 == 0 {
						want++
						if !got[[2]int32{x, y}] {
							t.Fatalf("missing %d,%d", x, y)
						}
					}
				}
			}
			if len(got) != want {
				t.Fatalf("got %d, want %d", len(got), want)
			}
			if n, _ := ns.Count(ctx, min, max); n != want {
				t.Fatalf("count %d, want %d", n, want)
			}
			seq, _ = ns.Region(ctx, min, max, 5)
			n := 0
			for range seq {
				n++
			}
			if n != 5 {
				t.Fatalf("limit 5 gave %d", n)
			}
		})
	}
}

func TestTransactions(t *testing.T) {
	fs := vfs.NewMem()
	db, crash := openMortal(t, fs, engine.Options{})
	ns := mustNS(t, db, "t", 2)
	boom := errors.New("boom")
	err := ns.Update(ctx, func(tx *engine.Tx) error {
		for i := int32(0); i < 10; i++ {
			if err := tx.Put([]int32{i, i}, []byte("x")); err != nil {
				return err
			}
		}
		if v, err := tx.Get([]int32{3, 3}); err != nil || string(v) != "x" {
			t.Errorf("read own write: %q %v", v, err)
		}
		if n, _ := tx.Count([]int32{0, 0}, []int32{9, 9}); n != 10 {
			t.Errorf("tx region sees %d of its writes", n)
		}
		if err := tx.Link([]int32{0, 0}, []int32{1, 1}, "e", 1, nil); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("update = %v", err)
	}
	if n := ns.Info().Values; n != 0 {
		t.Fatalf("failed tx left %d values", n)
	}
	if e, _ := ns.Edges(ctx, []int32{0, 0}, engine.Both, ""); len(e) != 0 {
		t.Fatalf("failed tx left edges %v", e)
	}
	err = ns.Update(ctx, func(tx *engine.Tx) error {
		for i := int32(0); i < 10; i++ {
			tx.Put([]int32{i, i}, []byte("y"))
		}
		tx.Delete([]int32{4, 4})
		return tx.SetMeta("prog/a", []byte("code"))
	})
	if err != nil {
		t.Fatal(err)
	}
	// A snapshot taken now does not see later writes.
	snap, err := ns.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ns.Put(ctx, []int32{100, 100}, []byte("later"))
	if _, err := snap.Get([]int32{100, 100}); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("snapshot saw a later write: %v", err)
	}
	if n, _ := snap.Count([]int32{0, 0}, []int32{200, 200}); n != 9 {
		t.Fatalf("snapshot count %d", n)
	}
	if v, ok := snap.Meta("prog/a"); !ok || string(v) != "code" {
		t.Fatalf("meta %q %v", v, ok)
	}
	snap.Release()
	crash()
	db = openMem(t, fs, engine.Options{})
	defer db.Close()
	ns, _ = db.Namespace("t")
	if n := ns.Info().Values; n != 10 {
		t.Fatalf("after crash %d values", n)
	}
	ns.View(ctx, func(tx *engine.Tx) error {
		if v, ok := tx.Meta("prog/a"); !ok || string(v) != "code" {
			t.Fatalf("meta after crash %q %v", v, ok)
		}
		return nil
	})
}

func TestEdgesWalksPaths(t *testing.T) {
	fs := vfs.NewMem()
	db, crash := openMortal(t, fs, engine.Options{})
	ns := mustNS(t, db, "g", 1)
	link := func(a, b int32, label string, w float64) {
		t.Helper()
		if err := ns.Link(ctx, []int32{a}, []int32{b}, label, w, []byte(label)); err != nil {
			t.Fatal(err)
		}
	}
	// 1 -> 2 -> 3 -> 4 (road, weight 1 each), 1 -> 4 (air, weight 10), 4 -> 5 (road)
	link(1, 2, "road", 1)
	link(2, 3, "road", 1)
	link(3, 4, "road", 1)
	link(1, 4, "air", 10)
	link(4, 5, "road", 1)
	out, _ := ns.Edges(ctx, []int32{1}, engine.Out, "")
	if len(out) != 2 {
		t.Fatalf("out edges of 1: %v", out)
	}
	in, _ := ns.Edges(ctx, []int32{4}, engine.In, "road")
	if len(in) != 1 || in[0].From[0] != 3 || string(in[0].Value) != "road" {
		t.Fatalf("in edges of 4: %+v", in)
	}
	steps, err := ns.Walk(ctx, []int32{1}, engine.WalkOptions{MaxDepth: 2, Label: "road"})
	if err != nil {
		t.Fatal(err)
	}
	var got []int32
	for _, s := range steps {
		got = append(got, s.Coord[0])
	}
	if !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("bfs depth 2 road: %v", got)
	}
	steps, _ = ns.Walk(ctx, []int32{1}, engine.WalkOptions{MaxDepth: 10, Limit: 3})
	if len(steps) != 3 {
		t.Fatalf("limit 3: %v", steps)
	}
	steps, _ = ns.Walk(ctx, []int32{5}, engine.WalkOptions{MaxDepth: 10, Direction: engine.In, Order: engine.DFS})
	if len(steps) != 5 {
		t.Fatalf("dfs in from 5 reached %d", len(steps))
	}
	p, ok, err := ns.ShortestPath(ctx, []int32{1}, []int32{5}, "", engine.Out)
	if err != nil || !ok || p.Weight != 4 || len(p.Coords) != 5 {
		t.Fatalf("path = %+v %v %v", p, ok, err)
	}
	if _, ok, _ := ns.ShortestPath(ctx, []int32{5}, []int32{1}, "", engine.Out); ok {
		t.Fatal("path against the edges")
	}
	if ok, _ := ns.Unlink(ctx, []int32{2}, []int32{3}, "road"); !ok {
		t.Fatal("unlink")
	}
	p, ok, _ = ns.ShortestPath(ctx, []int32{1}, []int32{5}, "", engine.Out)
	if !ok || p.Weight != 11 {
		t.Fatalf("path after unlink = %+v", p)
	}
	if _, err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	link(2, 3, "road", 0.5)
	ns.Unlink(ctx, []int32{1}, []int32{4}, "air")
	if _, err := db.Checkpoint(ctx); err != nil { // a delta with a tombstone
		t.Fatal(err)
	}
	crash()
	db = openMem(t, fs, engine.Options{})
	defer db.Close()
	ns, _ = db.Namespace("g")
	p, ok, _ = ns.ShortestPath(ctx, []int32{1}, []int32{5}, "", engine.Out)
	if !ok || p.Weight != 3.5 {
		t.Fatalf("path after recovery = %+v", p)
	}
	if n := ns.Info().Edges; n != 4 {
		t.Fatalf("edges after recovery: %d", n)
	}
}

func TestNamespacesArePartitions(t *testing.T) {
	fs := vfs.NewMem()
	db, crash := openMortal(t, fs, engine.Options{})
	a := mustNS(t, db, "a", 2)
	b := mustNS(t, db, "b", 2)
	a.Put(ctx, []int32{1, 1}, []byte("in a"))
	if _, err := b.Get(ctx, []int32{1, 1}); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("b sees a: %v", err)
	}
	if err := db.DropNamespace(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, []int32{2, 2}, nil); !errors.Is(err, engine.ErrNoNamespace) {
		t.Fatalf("put to dropped: %v", err)
	}
	a2 := mustNS(t, db, "a", 3)
	if a2.Info().Values != 0 {
		t.Fatal("recreated namespace has old values")
	}
	crash()
	db = openMem(t, fs, engine.Options{})
	defer db.Close()
	infos := db.Namespaces()
	if len(infos) != 2 || infos[0].Name != "a" || infos[0].Dims != 3 || infos[0].Values != 0 {
		t.Fatalf("after crash: %+v", infos)
	}
}

// TestReplayMixedOps recovers a log and a checkpoint whose ops mix
// namespaces of different dims with metadata ops (which carry no dims):
// decoding must not carry one op's fields into the next.
func TestReplayMixedOps(t *testing.T) {
	mem := vfs.NewMem()
	db, crash := openMortal(t, mem, engine.Options{})
	a := mustNS(t, db, "a", 3)
	b := mustNS(t, db, "b", 2)
	a.Put(ctx, []int32{1, 2, 3}, []byte("a"))
	b.Update(ctx, func(tx *engine.Tx) error { return tx.SetMeta("k", []byte("v")) })
	if _, err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	a.Put(ctx, []int32{4, 5, 6}, []byte("a2"))
	b.Update(ctx, func(tx *engine.Tx) error { return tx.SetMeta("k2", []byte("v2")) })
	crash()
	db = openMem(t, mem, engine.Options{})
	defer db.Close()
	b, _ = db.Namespace("b")
	b.View(ctx, func(tx *engine.Tx) error {
		if keys := tx.MetaKeys(""); len(keys) != 2 {
			t.Fatalf("meta keys after recovery: %v", keys)
		}
		return nil
	})
}

// TestDFSVisitOrder: a depth-first walk reports nodes in the order it
// visits them, each branch before the next.
func TestDFSVisitOrder(t *testing.T) {
	db := openMem(t, vfs.NewMem(), engine.Options{Sync: engine.SyncNone})
	defer db.Close()
	ns := mustNS(t, db, "t", 1)
	//      1
	//    2   3
	//   4 5 6 7
	for _, e := range [][2]int32{{1, 2}, {1, 3}, {2, 4}, {2, 5}, {3, 6}, {3, 7}} {
		ns.Link(ctx, []int32{e[0]}, []int32{e[1]}, "t", 1, nil)
	}
	steps, err := ns.Walk(ctx, []int32{1}, engine.WalkOptions{Order: engine.DFS, MaxDepth: 5})
	if err != nil {
		t.Fatal(err)
	}
	var got, depths []int32
	for _, s := range steps {
		got = append(got, s.Coord[0])
		depths = append(depths, int32(s.Depth))
	}
	if !slices.Equal(got, []int32{1, 2, 4, 5, 3, 6, 7}) || !slices.Equal(depths, []int32{0, 1, 2, 2, 1, 2, 2}) {
		t.Fatalf("dfs order %v depths %v", got, depths)
	}
	steps, _ = ns.Walk(ctx, []int32{1}, engine.WalkOptions{Order: engine.BFS, MaxDepth: 5})
	got = got[:0]
	for _, s := range steps {
		got = append(got, s.Coord[0])
	}
	if !slices.Equal(got, []int32{1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("bfs order %v", got)
	}
	steps, _ = ns.Walk(ctx, []int32{1}, engine.WalkOptions{Order: engine.DFS, MaxDepth: 1, Limit: 2})
	if len(steps) != 2 || steps[1].Coord[0] != 2 || steps[1].From[0] != 1 {
		t.Fatalf("dfs depth 1 limit 2: %+v", steps)
	}
}
