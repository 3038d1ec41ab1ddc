package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMeetPathIsDijkstra: on seeded random graphs, meeting in the middle
// and Dijkstra over (node, edges) states give the same bounded answer,
// ties included (the black-box brute-force test reaches only the first:
// small graphs never exhaust meetBudget). A budget too small to finish
// gives up instead of answering.
//
// Breaks seen caught: the backward layers scanned in the query's
// direction instead of the reverse one; either side's tie rule reversed
// (the prefix's pkeyLess, the suffix's revLess).
func TestMeetPathIsDijkstra(t *testing.T) {
	ctx := context.Background()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	for range 40 {
		var g edgeTrees
		g.init(1)
		n := 3 + rng.IntN(10)
		for i := range 3 * n {
			a, b := pkey{int32(rng.IntN(n))}, pkey{int32(rng.IntN(n))}
			g.link(a, b, []string{"x", "y"}[rng.IntN(2)], float64(rng.IntN(4)), nil, uint64(i+1))
		}
		for from := range n {
			for to := range n {
				for _, dir := range []Direction{Out, In, Both} {
					for hops := 1; hops <= 6; hops++ {
						o := PathOptions{Direction: dir, MaxHops: hops}
						if hops%2 == 0 {
							o.Label = "x"
						}
						f, tk := pkey{int32(from)}, pkey{int32(to)}
						want, wok, err := dijkstraPath(ctx, &g, 1, f, tk, o)
						if err != nil {
							t.Fatal(err)
						}
						got, gok, done, err := meetPath(ctx, &g, 1, f, tk, o, 1<<30)
						if err != nil || !done {
							t.Fatal(done, err)
						}
						if gok != wok || gok && (got.Weight != want.Weight || !slices.EqualFunc(got.Coords, want.Coords, slices.Equal)) {
							t.Fatalf("%d->%d %+v: meet %v %v, dijkstra %v %v", from, to, o, got, gok, want, wok)
						}
					}
				}
			}
		}
	}
	var g edgeTrees
	g.init(1)
	for i := range int32(20) {
		g.link(pkey{i}, pkey{i + 1}, "x", 1, nil, uint64(i+1))
		g.link(pkey{i}, pkey{i + 2}, "x", 1, nil, uint64(i+100))
	}
	if _, _, done, err := meetPath(ctx, &g, 1, pkey{0}, pkey{8}, PathOptions{MaxHops: 8}, 3); done || err != nil {
		t.Fatalf("budget 3: done %v, %v; want a refusal to answer", done, err)
	}
	g.link(pkey{0}, pkey{1}, "x", -1, nil, 500) // as an older cube could have stored
	if _, _, _, err := meetPath(ctx, &g, 1, pkey{0}, pkey{8}, PathOptions{MaxHops: 4}, 1<<30); !errors.Is(err, ErrBadWeight) {
		t.Fatalf("meet over a -1 edge: %v, want ErrBadWeight", err)
	}
}
