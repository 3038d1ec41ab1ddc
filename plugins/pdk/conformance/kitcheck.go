package conformance

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cubelinux/cube/vm"
)

// kitcheckData is the kitcheck program's namespace: a symmetric tree of
// "t" edges (so that the depths of a walk, in visit order, do not depend on
// the order a host lists edges in), "p" edges with one least-weight path,
// and a point and an edge for the program to remove.
func kitcheckData() Data {
	return Data{Dims: 2,
		Points: []vm.Point{pt("a", 0, 0), pt("b1", 1, 0), pt("b2", 2, 0), pt("c1", 1, 1), pt("c2", 2, 1), pt("gone", 5, 5)},
		Edges: []vm.Edge{
			edge(1, "t", xy(0, 0), xy(1, 0)),
			edge(1, "t", xy(0, 0), xy(2, 0)),
			edge(1, "t", xy(1, 0), xy(1, 1)),
			edge(1, "t", xy(2, 0), xy(2, 1)),
			edge(1.5, "p", xy(0, 0), xy(1, 0)),
			edge(2.25, "p", xy(1, 0), xy(2, 1)),
			edge(4.5, "p", xy(0, 0), xy(2, 1)),
			edge(0.5, "p", xy(0, 0), xy(2, 0)),
			edge(5, "p", xy(2, 0), xy(2, 1)),
			{From: xy(5, 5), To: xy(0, 0), Label: "old", Weight: 2, Value: []byte("v")},
		},
	}
}

// kitcheckWant is the program's whole output on kitcheckData, written out by
// hand (TestModelAgrees checks the model against it).
const kitcheckWant = `del 5,5: true false
get 5,5: false
region 0,0..9,9: 5
inverted: bad argument
edges 1,1 out: 1,1>2,1 new cost=25 v=val
edges 2,1 both: 0,0>2,1 p cost=450 v=; 1,0>2,1 p cost=225 v=; 1,1>2,1 new cost=25 v=val; 2,0>2,1 p cost=500 v=; 2,0>2,1 t cost=100 v=
edges 0,0 out t: 0,0>1,0 t cost=100 v=; 0,0>2,0 t cost=100 v=
unlink 5,5>0,0 old: true false
edges 0,0 in: 
walk bfs 0,0 t 3: 0 1 1 2 2 | 0,0@0 1,0@1<0,0 1,1@2<1,0 2,0@1<0,0 2,1@2<2,0
walk bfs 0,0 t 3 limit 3: 0 1 1 | 0,0@0 1,0@1<0,0 2,0@1<0,0
walk bfs 2,1 in t 5: 0 1 2 | 0,0@2<2,0 2,0@1<2,1 2,1@0
walk default 0,0: 0 1 1 1 | 0,0@0 1,0@1<0,0 2,0@1<0,0 2,1@1<0,0
path 0,0>2,1 p: 0,0 1,0 2,1 cost=375
path 2,1>0,0 p in: 2,1 1,0 0,0 cost=375
path 2,1>0,0 p: none
path 0,0>0,0: 0,0 cost=0
path 0,0>1,1 both: 0,0 2,0 2,1 1,1 cost=175`

const kitcheckDFS = `walk dfs 0,0 t 3: 0 1 2 1 2 | 0,0@0 1,0@1<0,0 1,1@2<1,0 2,0@1<0,0 2,1@2<2,0
walk dfs 0,0 t 3 limit 3: 0 1 2 | 0,0@0 1,0@1<0,0 1,1@2<1,0`

func kitcheckCases() []Case {
	d := kitcheckData()
	var after []vm.Point
	for _, p := range d.Points {
		if p.Coord[0] != 5 {
			after = append(after, p)
		}
	}
	// The run's limit cases land on the first write (the delete): the
	// failure must be the kit's, reported the same way everywhere.
	cs := []Case{
		{Name: "kitcheck/every call", Data: d, Want: kitcheckWant, WantPoints: after},
		// Depth-first walks, apart: the depths in visit order tell DFS from
		// BFS (0 1 2 1 2, not 0 1 1 2 2) whichever child a host lists first.
		{Name: "kitcheck/dfs", Data: d, Args: []byte("dfs"), Want: kitcheckDFS},
		// Nearest, radius and hop-bounded paths on random points: the
		// expected output is the model's on the reference host (brute
		// force), so the engine's answers are checked against it.
		{Name: "kitcheck/near", Data: nearData(), Args: []byte("near")},
		// The kits' column readers (region_columns; JavaScript's
		// columns()) against their point iterators, on the same data.
		{Name: "kitcheck/columns", Data: nearData(), Args: []byte("columns")},
		{Name: "kitcheck/read-only", Data: d, Limits: vm.Limits{ReadOnly: true}, WantKind: vm.KindReadOnly},
		{Name: "kitcheck/write limit", Data: d, Limits: vm.Limits{Writes: 2}, WantKind: vm.KindWriteLimit},
	}
	return finish(Kitcheck, cs)
}

// kitcheckModel is the kitcheck program in plain Go against vm.Host.
func kitcheckModel(ctx context.Context, h vm.Host, args []byte) (string, error) {
	var out []string
	say := func(s ...string) { out = append(out, strings.Join(s, "")) }
	gone, a, c1, c2 := xy(5, 5), xy(0, 0), xy(1, 1), xy(2, 1)
	cost := func(w float64) string { return strconv.FormatInt(int64(math.Round(w*100)), 10) }

	walks := []struct {
		name  string
		start []int32
		o     vm.WalkOptions
	}{
		{"bfs 0,0 t 3", a, vm.WalkOptions{Order: vm.BFS, MaxDepth: 3, Label: "t"}},
		{"bfs 0,0 t 3 limit 3", a, vm.WalkOptions{Order: vm.BFS, MaxDepth: 3, Label: "t", Limit: 3}},
		{"bfs 2,1 in t 5", c2, vm.WalkOptions{MaxDepth: 5, Direction: vm.In, Label: "t"}},
		{"default 0,0", a, vm.WalkOptions{}},
	}
	walk := func() error {
		for _, w := range walks {
			ss, err := h.Walk(ctx, w.start, w.o)
			if err != nil {
				return err
			}
			d := make([]string, len(ss))
			s := make([]string, len(ss))
			for i, st := range ss {
				d[i] = strconv.Itoa(st.Depth)
				s[i] = coordText(st.Coord) + "@" + strconv.Itoa(st.Depth)
				if st.Depth > 0 {
					s[i] += "<" + coordText(st.From)
				}
			}
			slices.Sort(s)
			say("walk ", w.name, ": ", strings.Join(d, " "), " | ", strings.Join(s, " "))
		}
		return nil
	}
	if string(args) == "near" {
		return nearModel(ctx, h)
	}
	if string(args) == "columns" {
		return columnsModel(ctx, h)
	}
	if string(args) == "dfs" {
		walks = walks[:0]
		for _, w := range []struct {
			name string
			o    vm.WalkOptions
		}{
			{"dfs 0,0 t 3", vm.WalkOptions{Order: vm.DFS, MaxDepth: 3, Label: "t"}},
			{"dfs 0,0 t 3 limit 3", vm.WalkOptions{Order: vm.DFS, MaxDepth: 3, Label: "t", Limit: 3}},
		} {
			walks = append(walks, struct {
				name  string
				start []int32
				o     vm.WalkOptions
			}{w.name, a, w.o})
		}
		if err := walk(); err != nil {
			return "", err
		}
		return strings.Join(out, "\n"), nil
	}

	first, err := h.Delete(ctx, gone)
	if err != nil {
		return "", err
	}
	again, err := h.Delete(ctx, gone)
	if err != nil {
		return "", err
	}
	say("del 5,5: ", strconv.FormatBool(first), " ", strconv.FormatBool(again))
	_, ok, err := h.Get(ctx, gone)
	if err != nil {
		return "", err
	}
	say("get 5,5: ", strconv.FormatBool(ok))
	n := 0
	cur := h.Region(ctx, xy(0, 0), xy(9, 9))
	for _, ok := cur.Next(); ok; _, ok = cur.Next() {
		n++
	}
	cur.Close()
	if err := cur.Err(); err != nil {
		return "", err
	}
	say("region 0,0..9,9: ", strconv.Itoa(n))
	say("inverted: bad argument") // the ABI's answer, decided before any host

	if err := h.Link(ctx, vm.Edge{From: c1, To: c2, Label: "new", Weight: 0.25, Value: []byte("val")}); err != nil {
		return "", err
	}
	edges := func(c []int32, dir vm.Direction, label string) (string, error) {
		var s []string
		cur := h.Edges(ctx, c, dir, label)
		defer cur.Close()
		for e, ok := cur.Next(); ok; e, ok = cur.Next() {
			s = append(s, coordText(e.From)+">"+coordText(e.To)+" "+e.Label+" cost="+cost(e.Weight)+" v="+string(e.Value))
		}
		slices.Sort(s)
		return strings.Join(s, "; "), cur.Err()
	}
	for _, q := range []struct {
		name  string
		c     []int32
		dir   vm.Direction
		label string
	}{{"1,1 out", c1, vm.Out, ""}, {"2,1 both", c2, vm.Both, ""}, {"0,0 out t", a, vm.Out, "t"}} {
		e, err := edges(q.c, q.dir, q.label)
		if err != nil {
			return "", err
		}
		say("edges ", q.name, ": ", e)
	}
	if first, err = h.Unlink(ctx, gone, a, "old"); err != nil {
		return "", err
	}
	if again, err = h.Unlink(ctx, gone, a, "old"); err != nil {
		return "", err
	}
	say("unlink 5,5>0,0 old: ", strconv.FormatBool(first), " ", strconv.FormatBool(again))
	e, err := edges(a, vm.In, "")
	if err != nil {
		return "", err
	}
	say("edges 0,0 in: ", e)

	if err := walk(); err != nil {
		return "", err
	}

	for _, q := range []struct {
		name     string
		from, to []int32
		label    string
		dir      vm.Direction
	}{
		{"0,0>2,1 p", a, c2, "p", vm.Out},
		{"2,1>0,0 p in", c2, a, "p", vm.In},
		{"2,1>0,0 p", c2, a, "p", vm.Out},
		{"0,0>0,0", a, a, "", vm.Out},
		{"0,0>1,1 both", a, c1, "", vm.Both},
	} {
		p, ok, err := h.ShortestPath(ctx, q.from, q.to, vm.PathOptions{Label: q.label, Direction: q.dir})
		if err != nil {
			return "", err
		}
		s := "none"
		if ok {
			cs := make([]string, len(p.Coords))
			for i, c := range p.Coords {
				cs[i] = coordText(c)
			}
			s = strings.Join(cs, " ") + " cost=" + cost(p.Weight)
		}
		say("path ", q.name, ": ", s)
	}
	return strings.Join(out, "\n"), nil
}
