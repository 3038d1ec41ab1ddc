package engine_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/curve"
	"github.com/cubelinux/cube/engine/vfs"
)

// TestReopenFromBaseAnswersAsBefore: a store whose whole state is in its
// base checkpoint (written once everything was written, nothing in the
// log after it) is built in bulk as it opens, not by replaying the ops.
// After the reopen every answer is the one given before: each
// namespace's Info, every value (Get and a region over everything, in
// curve order), the edges of every node in both directions, and walks
// from every node, on a Hilbert and a Morton namespace, with overwritten
// and deleted values, relinked and unlinked edges, two labels, edge
// values, and hubs of more than 64 edges (kept in the trees, not the
// adjacency's arrays).
//
// Breaks seen caught: the in tree loaded from the edges before they were
// sorted by their other end (a walk Both through the sink, whose in
// edges are read from that tree, reached 2 nodes, not dozens).
func TestReopenFromBaseAnswersAsBefore(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 17))
	fs := vfs.NewMem()
	db := openMem(t, fs, engine.Options{})
	type space struct {
		name string
		ns   *engine.Namespace
		dims int
	}
	var spaces []space
	for _, s := range []struct {
		name string
		o    engine.NamespaceOptions
	}{{"h", engine.NamespaceOptions{Dims: 3}}, {"m", engine.NamespaceOptions{Dims: 2, Curve: curve.Morton}}} {
		ns, err := db.CreateNamespace(ctx, s.name, s.o)
		if err != nil {
			t.Fatal(err)
		}
		spaces = append(spaces, space{s.name, ns, s.o.Dims})
	}
	const side = 12
	coord := func(dims int) []int32 {
		c := make([]int32, dims)
		for i := range c {
			c[i] = rng.Int32N(side)
		}
		return c
	}
	for _, s := range spaces {
		for range 20 {
			err := s.ns.Update(ctx, func(tx *engine.Tx) error {
				for range 60 {
					c := coord(s.dims)
					switch r := rng.IntN(10); {
					case r == 0:
						if _, err := tx.Delete(c); err != nil {
							return err
						}
					case r < 7:
						if err := tx.Put(c, fmt.Appendf(nil, "v%d", rng.IntN(1000))); err != nil {
							return err
						}
					case r == 7:
						if _, err := tx.Unlink(c, coord(s.dims), "a"); err != nil {
							return err
						}
					default:
						var v []byte
						if rng.IntN(2) == 0 {
							v = []byte("edge")
						}
						if err := tx.Link(c, coord(s.dims), []string{"a", "b"}[rng.IntN(2)], float64(rng.IntN(5)), v); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		// A hub: more edges out of one node, and into another, than an
		// adjacency array keeps.
		hub, sink := make([]int32, s.dims), make([]int32, s.dims)
		sink[0] = side - 1
		for i := range 80 {
			c := make([]int32, s.dims)
			c[0], c[1] = int32(i%side), int32(i/side)
			if err := s.ns.Link(ctx, hub, c, "a", 1, nil); err != nil {
				t.Fatal(err)
			}
			if err := s.ns.Link(ctx, c, sink, "b", 2, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ci, err := db.Checkpoint(ctx); err != nil || ci.Kind != "base" {
		t.Fatalf("checkpoint %+v, %v; want a base", ci, err)
	}
	answers := func(ns *engine.Namespace, dims int) []string {
		info := ns.Info()
		info.LastLSN = 0 // a checkpoint's ops all carry its LSN
		out := []string{fmt.Sprintf("%+v", info)}
		lo, hi := make([]int32, dims), make([]int32, dims)
		for i := range hi {
			lo[i], hi[i] = -1, side
		}
		seq, err := ns.Region(ctx, lo, hi, 0)
		if err != nil {
			t.Fatal(err)
		}
		for c, v := range seq {
			out = append(out, fmt.Sprintf("%v=%s", c, v))
		}
		all := make([]int32, dims)
		var walk func(i int)
		walk = func(i int) {
			if i == dims {
				v, err := ns.Get(ctx, all)
				out = append(out, fmt.Sprintf("get %v: %s %v", all, v, err))
				for _, d := range []engine.Direction{engine.Out, engine.In} {
					es, err := ns.Edges(ctx, all, d, "")
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, fmt.Sprint(d, es))
				}
				for _, o := range []engine.WalkOptions{{MaxDepth: 2}, {MaxDepth: 3, Direction: engine.Both, Label: "b"}, {Order: engine.DFS, MaxDepth: 2, Direction: engine.In}} {
					st, err := ns.Walk(ctx, all, o)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, fmt.Sprint(st))
				}
				return
			}
			for x := int32(0); x < side; x++ {
				all[i] = x
				walk(i + 1)
			}
		}
		walk(0)
		return out
	}
	var before [][]string
	for _, s := range spaces {
		before = append(before, answers(s.ns, s.dims))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openMem(t, fs, engine.Options{})
	defer db.Close()
	if rep := db.Stats().Recovery; rep.Records != 0 || len(rep.Deltas) != 0 {
		t.Fatalf("reopen replayed %d log records and %d deltas; the test wants the base alone", rep.Records, len(rep.Deltas))
	}
	for i, s := range spaces {
		ns, err := db.Namespace(s.name)
		if err != nil {
			t.Fatal(err)
		}
		if after := answers(ns, s.dims); !slices.Equal(after, before[i]) {
			for j := range min(len(after), len(before[i])) {
				if after[j] != before[i][j] {
					t.Fatalf("namespace %s, answer %d after reopen:\n %s\nbefore:\n %s", s.name, j, after[j], before[i][j])
				}
			}
			t.Fatalf("namespace %s: %d answers after reopen, %d before", s.name, len(after), len(before[i]))
		}
	}
}
