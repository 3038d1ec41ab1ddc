package engine_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// checkTxPaths is checkPaths on one snapshot.
func checkTxPaths(t *testing.T, tx *engine.Tx, g *pathGraph) {
	t.Helper()
	for from := range g.n {
		for to := range g.n {
			for _, label := range []string{"", "a"} {
				for _, dir := range []engine.Direction{engine.Out, engine.In, engine.Both} {
					for hops := 0; hops <= g.n+1; hops++ {
						o := engine.PathOptions{Label: label, Direction: dir, MaxHops: hops}
						got, ok, err := tx.ShortestPathWith(ctx, pathNode(from), pathNode(to), o)
						if err != nil {
							t.Fatal(err)
						}
						limit := hops
						if hops == 0 {
							limit = g.n - 1
						}
						want, wok := g.bruteShortest(from, to, label, dir, limit)
						if ok != wok || ok && !samePath(got, want) {
							t.Fatalf("%d->%d %+v on %v: got %v %v, brute force %v %v", from, to, o, g.edges, got, ok, want, wok)
						}
					}
				}
			}
		}
	}
}

func cloneGraph(g *pathGraph) *pathGraph {
	c := &pathGraph{n: g.n, edges: map[[2]int]map[string]float64{}}
	for k, ls := range g.edges {
		c.edges[k] = maps.Clone(ls)
	}
	return c
}

// TestShortestPathSnapshotsAndUnlinks: paths on a snapshot taken before
// unlinks, relinks with new weights and more links answer as the brute
// force does on the graph as it was, and a snapshot taken after answers
// for the graph as it is; node 0 also has more than 64 edges each way to
// dead ends outside the graph, so that its edges are read from the trees
// rather than from an adjacency array (paths are unchanged by them).
//
// Breaks seen caught: unlink left out of the adjacency (the later
// snapshot still found removed edges); a relink not updating the
// adjacency's weight.
func TestShortestPathSnapshotsAndUnlinks(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	for r := range 25 {
		db := openMem(t, vfs.NewMem(), engine.Options{})
		ns := mustNS(t, db, "g", 2)
		n := 2 + rng.IntN(5)
		g := randomPathGraph(t, ns, rng, n, rng.IntN(3*n+1))
		if r%2 == 0 {
			for i := range int32(70) {
				far := []int32{100 + i, 100}
				if err := ns.Link(ctx, pathNode(0), far, "a", 0, nil); err != nil {
					t.Fatal(err)
				}
				if err := ns.Link(ctx, far, pathNode(0), "a", 0, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		before, err := ns.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		was := cloneGraph(g)
		for range 1 + rng.IntN(2*n) {
			a, b := rng.IntN(n), rng.IntN(n)
			l := []string{"a", "b"}[rng.IntN(2)]
			k := [2]int{a, b}
			if rng.IntN(2) == 0 {
				if _, err := ns.Unlink(ctx, pathNode(a), pathNode(b), l); err != nil {
					t.Fatal(err)
				}
				delete(g.edges[k], l)
				continue
			}
			w := float64(rng.IntN(5))
			if err := ns.Link(ctx, pathNode(a), pathNode(b), l, w, nil); err != nil {
				t.Fatal(err)
			}
			if g.edges[k] == nil {
				g.edges[k] = map[string]float64{}
			}
			g.edges[k][l] = w
		}
		after, err := ns.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprint(r), func(t *testing.T) {
			checkTxPaths(t, before, was)
			checkTxPaths(t, after, g)
		})
		before.Release()
		after.Release()
		db.Close()
	}
}
