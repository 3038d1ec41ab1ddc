package engine_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// TestLinkRefusesWeightsDijkstraCannotUse: a negative weight made PATH
// answer wrongly (the graph: 1->2->4 costs 11, 1->3->2->4 with a
// -100 edge "costs" -85 and was not found). Link refuses it, and NaN and
// the infinities, with an error naming the weight; nothing is written; a
// zero weight is fine; the path found is the least.
//
// Breaks seen caught: checkWeight testing only NaN/Inf (the old check):
// "-5" and "-0.5" are linked and the path test gets 1->3->2->4.
func TestLinkRefusesWeightsDijkstraCannotUse(t *testing.T) {
	db := openMem(t, vfs.NewMem(), engine.Options{})
	defer db.Close()
	ns := mustNS(t, db, "g", 1)
	for _, w := range []float64{-5, -0.5, math.NaN(), math.Inf(1), math.Inf(-1), -math.SmallestNonzeroFloat64} {
		err := ns.Link(ctx, []int32{1}, []int32{2}, "r", w, nil)
		if !errors.Is(err, engine.ErrBadWeight) {
			t.Fatalf("Link weight %v: %v, want ErrBadWeight", w, err)
		}
		if !strings.HasPrefix(err.Error(), "engine: edge weight must be a finite number >= 0, got ") {
			t.Errorf("Link weight %v: message %q does not say what is allowed and what it got", w, err)
		}
	}
	if e, _ := ns.Edges(ctx, []int32{1}, engine.Both, ""); len(e) != 0 {
		t.Fatalf("refused links left edges: %v", e)
	}
	link := func(a, b int32, w float64) error {
		return ns.Link(ctx, []int32{a}, []int32{b}, "r", w, nil)
	}
	for _, e := range [][3]float64{{1, 2, 1}, {2, 4, 10}, {1, 3, 5}, {3, 2, 0}} {
		if err := link(int32(e[0]), int32(e[1]), e[2]); err != nil {
			t.Fatal(err)
		}
	}
	if err := link(3, 2, -100); !errors.Is(err, engine.ErrBadWeight) {
		t.Fatalf("relinking 3->2 with -100: %v, want ErrBadWeight", err)
	}
	if err := ns.Update(ctx, func(tx *engine.Tx) error { return tx.Link([]int32{1}, []int32{4}, "r", -1, nil) }); !errors.Is(err, engine.ErrBadWeight) {
		t.Fatalf("Tx.Link -1: %v, want ErrBadWeight", err)
	}
	p, ok, err := ns.ShortestPath(ctx, []int32{1}, []int32{4}, "r", engine.Out)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if p.Weight != 11 || len(p.Coords) != 3 || p.Coords[1][0] != 2 {
		t.Fatalf("path 1->4 = %v (weight %v), want 1->2->4 weight 11", p.Coords, p.Weight)
	}
}
