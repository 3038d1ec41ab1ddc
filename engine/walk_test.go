package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cubelinux/cube/engine/vfs"
)

// refWalk is the walk as it was before the adjacency: BFS and DFS over
// the trees with a map as the seen set. The adjacency's walks must give
// exactly its answers.
func refWalk(g *edgeTrees, dims int, start pkey, o WalkOptions) []Step {
	depth := max(o.MaxDepth, 1)
	full := func(n int) bool { return o.Limit > 0 && n >= o.Limit }
	if o.Order == BFS {
		type node struct {
			c     pkey
			depth int
		}
		seen := map[pkey]bool{start: true}
		out := []Step{{Coord: slices.Clone(start[:dims])}}
		work := []node{{c: start}}
		for len(work) > 0 && !full(len(out)) {
			n := work[0]
			work = work[1:]
			if n.depth >= depth {
				continue
			}
			g.neighbours(n.c, o.Label, o.Direction, func(m pkey, _ float64) bool {
				if seen[m] {
					return true
				}
				seen[m] = true
				out = append(out, Step{Coord: slices.Clone(m[:dims]), Depth: n.depth + 1, From: slices.Clone(n.c[:dims])})
				work = append(work, node{c: m, depth: n.depth + 1})
				return !full(len(out))
			})
		}
		return out
	}
	type frame struct {
		c, from pkey
		depth   int
		root    bool
	}
	visited := map[pkey]bool{}
	var out []Step
	stack := []frame{{c: start, root: true}}
	for len(stack) > 0 && !full(len(out)) {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if visited[f.c] {
			continue
		}
		visited[f.c] = true
		st := Step{Coord: slices.Clone(f.c[:dims]), Depth: f.depth}
		if !f.root {
			st.From = slices.Clone(f.from[:dims])
		}
		out = append(out, st)
		if f.depth >= depth {
			continue
		}
		var next []frame
		g.neighbours(f.c, o.Label, o.Direction, func(m pkey, _ float64) bool {
			if !visited[m] {
				next = append(next, frame{c: m, from: f.c, depth: f.depth + 1})
			}
			return true
		})
		for i := len(next) - 1; i >= 0; i-- {
			stack = append(stack, next[i])
		}
	}
	return out
}

// checkAdjacency compares every node's adjacency arrays with the trees'
// live edges, in order, weights included.
func checkAdjacency(t *testing.T, g *edgeTrees) {
	t.Helper()
	g.adj.ids.mu.RLock()
	ids := make(map[pkey]uint32, len(g.adj.ids.ids))
	for c, id := range g.adj.ids.ids {
		ids[c] = id
	}
	g.adj.ids.mu.RUnlock()
	type hop struct {
		id uint32
		c  string
		w  float64
	}
	for c, id := range ids {
		for _, dir := range []Direction{Out, In} {
			var want, got []hop
			g.neighbours(c, "", dir, func(m pkey, w float64) bool {
				want = append(want, hop{ids[m], fmt.Sprint(m[:g.adj.dims]), w})
				return true
			})
			g.adjNeighbours(id, c, g.adj.label(""), dir, func(m uint32, mc []int32, w float64) bool {
				got = append(got, hop{m, fmt.Sprint(mc), w})
				return true
			})
			if !slices.Equal(got, want) {
				t.Fatalf("node %v %v: adjacency %v, trees %v", c[:g.adj.dims], dir, got, want)
			}
		}
	}
}

func randomWalkOptions(rng *rand.Rand) WalkOptions {
	o := WalkOptions{Order: Order(rng.IntN(2)), MaxDepth: rng.IntN(5), Direction: Direction(rng.IntN(3))}
	if rng.IntN(3) == 0 {
		o.Label = []string{"x", "y", "z"}[rng.IntN(3)]
	}
	if rng.IntN(3) == 0 {
		o.Limit = rng.IntN(12)
	}
	return o
}

// TestWalkIsReference builds random graphs (1 to 3 axes, two labels, a
// hub with more than adjMaxRun edges each way so that its node reads the
// trees, relinks with new weights, unlinks, relinks after unlinking),
// keeps copies taken along the way as snapshots do, and checks on every
// copy that the adjacency holds the trees' live edges and that walks from
// every node give refWalk's answer.
//
// Breaks seen caught: a copy that does not take a new generation (old
// copies then see later links); unlink left out of the adjacency; the
// big-node fallback skipping the label filter; DFS pushing neighbours in
// edge order instead of reversed; BFS expanding nodes at MaxDepth;
// putWalkScratch not clearing the seen bits of a walkSeq left early (the
// next walk then misses those nodes).
func TestWalkIsReference(t *testing.T) {
	ctx := context.Background()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	for round := range 30 {
		dims := 1 + rng.IntN(3)
		n := 4 + rng.IntN(40)
		nodeFrom := func(rng *rand.Rand) pkey {
			var c pkey
			c[0] = int32(rng.IntN(n)) - int32(n/2)
			for i := 1; i < dims; i++ {
				c[i] = int32(rng.IntN(2))
			}
			return c
		}
		node := func() pkey { return nodeFrom(rng) }
		var g edgeTrees
		g.init(dims)
		type snap struct {
			g    edgeTrees
			walk map[string][]Step
		}
		var snaps []snap
		var linked [][2]pkey
		hub := node()
		lsn := uint64(0)
		record := func(g *edgeTrees) map[string][]Step {
			m := map[string][]Step{}
			orng := rand.New(rand.NewPCG(uint64(round), 1))
			for range 40 {
				o := randomWalkOptions(orng)
				s := nodeFrom(orng)
				m[fmt.Sprint(s[:dims], o)] = refWalk(g, dims, s, o)
				got, err := walk(ctx, g, dims, s, o)
				if err != nil {
					t.Fatal(err)
				}
				want := m[fmt.Sprint(s[:dims], o)]
				if !slices.EqualFunc(got, want, stepEqual) {
					t.Fatalf("round %d, walk from %v %+v:\n got %v\nwant %v", round, s[:dims], o, got, want)
				}
				// The same walk through walkSeq, copied as a caller must,
				// and sometimes left early: the scratch it then gives back
				// must leave the next walk (the next iteration) right.
				seq, err := walkSeq(ctx, g, dims, s, o)
				if err != nil {
					t.Fatal(err)
				}
				stop := len(want)
				if orng.IntN(3) == 0 {
					stop = orng.IntN(len(want) + 1)
				}
				var fromSeq []Step
				for st := range seq {
					if len(fromSeq) == stop {
						break
					}
					st.Coord, st.From = slices.Clone(st.Coord), slices.Clone(st.From)
					fromSeq = append(fromSeq, st)
				}
				if !slices.EqualFunc(fromSeq, want[:stop], stepEqual) {
					t.Fatalf("round %d, walkSeq from %v %+v (first %d):\n got %v\nwant %v", round, s[:dims], o, stop, fromSeq, want[:stop])
				}
			}
			return m
		}
		for op := range 300 {
			lsn++
			switch r := rng.IntN(10); {
			case r < 5 || len(linked) == 0:
				a, b := node(), node()
				if rng.IntN(4) == 0 {
					a = hub
				} else if rng.IntN(4) == 0 {
					b = hub
				}
				label := []string{"x", "y"}[rng.IntN(2)]
				g.link(a, b, label, float64(rng.IntN(5)), nil, lsn)
				linked = append(linked, [2]pkey{a, b})
			case r < 8:
				e := linked[rng.IntN(len(linked))]
				g.unlink(e[0], e[1], []string{"x", "y"}[rng.IntN(2)], lsn)
			default:
				// Links enough to make the hub big, both ways.
				for i := range adjMaxRun + 2 {
					lsn++
					c := pkey{int32(1000 + i)}
					g.link(hub, c, "x", 1, nil, lsn)
					g.link(c, hub, "y", 1, nil, lsn)
				}
			}
			if op%50 == 0 {
				c := g.copy()
				snaps = append(snaps, snap{g: c})
				snaps[len(snaps)-1].walk = record(&snaps[len(snaps)-1].g)
			}
		}
		checkAdjacency(t, &g)
		record(&g)
		for i := range snaps {
			s := &snaps[i]
			checkAdjacency(t, &s.g)
			again := record(&s.g)
			for k, want := range s.walk {
				if !slices.EqualFunc(again[k], want, stepEqual) {
					t.Fatalf("round %d, snapshot %d changed under later writes: %s", round, i, k)
				}
			}
		}
	}
}

func stepEqual(x, y Step) bool {
	return x.Depth == y.Depth && slices.Equal(x.Coord, y.Coord) && slices.Equal(x.From, y.From) && (x.From == nil) == (y.From == nil)
}

// TestWalkStepsDoNotAlias checks that the Steps' coordinates, carved
// from one slice, are capped: appending to one leaves the next alone.
//
// Break seen caught: carving without the cap (buf[k:len(buf)]).
func TestWalkStepsDoNotAlias(t *testing.T) {
	var g edgeTrees
	g.init(2)
	for i := range int32(5) {
		g.link(pkey{i, 0}, pkey{i + 1, 0}, "x", 1, nil, uint64(i+1))
	}
	st, err := walk(context.Background(), &g, 2, pkey{0, 0}, WalkOptions{MaxDepth: 9})
	if err != nil {
		t.Fatal(err)
	}
	for i := range st {
		_ = append(st[i].Coord, 77)
		if st[i].From != nil {
			_ = append(st[i].From, 77)
		}
	}
	for i, s := range st {
		if s.Coord[0] != int32(i) || s.Coord[1] != 0 || i > 0 && (s.From[0] != int32(i-1) || s.From[1] != 0) {
			t.Fatalf("step %d is %+v after appending to the steps", i, s)
		}
	}
}

// TestWalkConcurrent runs writers that link and unlink on a namespace
// while readers walk snapshots, each checking its walks against refWalk
// on the same snapshot's trees and walking twice to see that nothing
// moved under it. Run with -race.
//
// Break seen caught: Snapshot sharing the namespace's adjacency without
// copy() (the race detector and the second walk both object).
func TestWalkConcurrent(t *testing.T) {
	ctx := context.Background()
	db, err := Open("/w", Options{FS: vfs.NewMem(), Sync: SyncNone, CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ns, err := db.CreateNamespace(ctx, "g", NamespaceOptions{Dims: 2})
	if err != nil {
		t.Fatal(err)
	}
	const n = 30
	var writers, readers sync.WaitGroup
	stop := make(chan struct{})
	for w := range 2 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				err := ns.Update(ctx, func(tx *Tx) error {
					for range 1 + rng.IntN(20) {
						a, b := []int32{int32(rng.IntN(n)), 0}, []int32{int32(rng.IntN(n)), 1}
						if rng.IntN(3) == 0 {
							if _, err := tx.Unlink(a, b, "x"); err != nil {
								return err
							}
						} else if err := tx.Link(a, b, "x", 1, nil); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for r := range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 10))
			for range 300 {
				err := ns.View(ctx, func(tx *Tx) error {
					o := randomWalkOptions(rng)
					s := pkey{int32(rng.IntN(n)), int32(rng.IntN(2))}
					got, err := tx.Walk(ctx, s[:2], o)
					if err != nil {
						return err
					}
					if want := refWalk(tx.edgeTrees(), 2, s, o); !slices.EqualFunc(got, want, stepEqual) {
						return fmt.Errorf("walk from %v %+v:\n got %v\nwant %v", s[:2], o, got, want)
					}
					again, err := tx.Walk(ctx, s[:2], o)
					if err != nil {
						return err
					}
					if !slices.EqualFunc(got, again, stepEqual) {
						return fmt.Errorf("walk from %v %+v changed within one snapshot", s[:2], o)
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					break
				}
			}
		}()
	}
	readers.Wait()
	close(stop)
	writers.Wait()
}

// TestWalkSeqOnce checks that ranging over a WalkSeq iterator a second
// time panics with a message rather than reading buffers another walk
// may be using.
//
// Break seen caught: dropping the used flag (the second range then yields
// the steps of whatever walk took the scratch from the pool).
func TestWalkSeqOnce(t *testing.T) {
	var g edgeTrees
	g.init(1)
	g.link(pkey{0}, pkey{1}, "x", 1, nil, 1)
	seq, err := walkSeq(context.Background(), &g, 1, pkey{0}, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range seq {
		n++
	}
	if n != 2 {
		t.Fatalf("walked %d steps, want 2", n)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "ranged over twice") {
			t.Fatalf("second range: recovered %v, want a panic naming the second range", r)
		}
	}()
	for range seq {
	}
}
