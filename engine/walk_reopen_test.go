package engine_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// TestWalksAndPathsSurviveReopen: the adjacency is not stored but built
// again as a store opens, from its checkpoint and then its log. Walks
// and paths from every node after a reopen (a checkpoint taken half way
// through the links and unlinks, the rest in the log) give the answers
// they gave before it.
//
// Break seen caught: the replay at open (the checkpoint's and the log's
// links) reaching the trees but not the adjacency (the walks after the
// reopen lost edges).
func TestWalksAndPathsSurviveReopen(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 13))
	fs := vfs.NewMem()
	db := openMem(t, fs, engine.Options{})
	ns := mustNS(t, db, "g", 2)
	const n = 40
	node := func(i int) []int32 { return []int32{int32(i % 7), int32(i / 7)} }
	for i := range 400 {
		a, b := node(rng.IntN(n)), node(rng.IntN(n))
		l := []string{"x", "y"}[rng.IntN(2)]
		if rng.IntN(4) == 0 {
			if _, err := ns.Unlink(ctx, a, b, l); err != nil {
				t.Fatal(err)
			}
		} else if err := ns.Link(ctx, a, b, l, float64(rng.IntN(4)), nil); err != nil {
			t.Fatal(err)
		}
		if i == 200 {
			if _, err := db.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	answers := func(ns *engine.Namespace) []string {
		var out []string
		for i := range n {
			for _, o := range []engine.WalkOptions{{MaxDepth: 3}, {Order: engine.DFS, MaxDepth: 4, Direction: engine.Both, Label: "x"}} {
				st, err := ns.Walk(ctx, node(i), o)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, fmt.Sprint(st))
			}
			p, ok, err := ns.ShortestPathWith(ctx, node(i), node((i*7)%n), engine.PathOptions{MaxHops: 3, Direction: engine.In})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(p, ok))
		}
		return out
	}
	before := answers(ns)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openMem(t, fs, engine.Options{})
	defer db.Close()
	ns, err := db.Namespace("g")
	if err != nil {
		t.Fatal(err)
	}
	if after := answers(ns); !slices.Equal(after, before) {
		for i := range before {
			if after[i] != before[i] {
				t.Fatalf("answer %d after reopen:\n %s\nbefore:\n %s", i, after[i], before[i])
			}
		}
	}
}
