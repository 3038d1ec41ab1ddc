package conformance

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
)

func pt(v string, c ...int32) vm.Point { return vm.Point{Coord: c, Value: []byte(v)} }

func edge(w float64, label string, from, to []int32) vm.Edge {
	return vm.Edge{From: from, To: to, Label: label, Weight: w}
}

func xy(x, y int32) []int32 { return []int32{x, y} }

// Cases returns the table, freshly built (callers may modify it).
func Cases() []Case {
	var cs []Case
	cs = append(cs, aggregateCases()...)
	cs = append(cs, walkCases()...)
	cs = append(cs, writerCases()...)
	cs = append(cs, kitcheckCases()...)
	return cs
}

// Hostile reports whether a case is one that must fail, the same way in
// every language.
func (c Case) Hostile() bool { return c.WantKind != 0 }

func grid() Data {
	d := Data{Dims: 2}
	over := map[[2]int32]string{
		{3, 3}: "abc",                 // not a number: skipped
		{4, 4}: "-100",                // negative
		{5, 5}: "1234567890123456789", // 19 digits: skipped
		{6, 6}: "",                    // empty: skipped (outside the box anyway)
		{2, 7}: "+5",                  // a sign other than '-': skipped
		{3, 4}: "007",                 // leading zeros: 7
	}
	for x := int32(0); x < 10; x++ {
		for y := int32(0); y < 10; y++ {
			v, ok := over[[2]int32{x, y}]
			if !ok {
				v = strconv.Itoa(int(10*x + y))
			}
			d.Points = append(d.Points, pt(v, x, y))
		}
	}
	return d
}

func aggregateCases() []Case {
	g := grid()
	box := Coords(2, 3, 5, 7)
	wrap := Data{Dims: 1}
	for x := int32(0); x <= 10; x++ {
		wrap.Points = append(wrap.Points, pt("999999999999999999", x))
	}
	const minI, maxI = math.MinInt32, math.MaxInt32
	cube3 := Data{Dims: 3, Points: []vm.Point{
		pt("1", -1, -1, -1), pt("10", -2, 0, 5), pt("100", 0, 0, 0), pt("1000", 1, 1, 1),
		pt("5", minI, 0, 0), pt("7", maxI, 0, 0), pt("11", 0, 6, 0),
	}}
	big := Data{Dims: 2, Points: []vm.Point{
		pt("5", 0, 0), pt(strings.Repeat("x", 100<<10), 0, 1), pt("6", 0, 2),
	}}
	large := Data{Dims: 2}
	for x := int32(0); x < 80; x++ {
		for y := int32(0); y < 80; y++ {
			v := strconv.Itoa(int(x)*1_000_003 - int(y)*7)
			if (x+y)%17 == 0 {
				v += " not a number"
			}
			large.Points = append(large.Points, pt(v, x, y))
		}
	}
	cs := []Case{
		// 10x+y over x 2..5, y 3..7 is 800 over 20 points; then the
		// overrides: -33 (abc), -44-100 (-100), -55 (19 digits),
		// -27 (+5), -34+7 (007).
		{Name: "aggregate/box", Data: g, Args: box, Want: "sum=514 count=17"},
		{Name: "aggregate/one point", Data: g, Args: Coords(4, 4, 4, 4), Want: "sum=-100 count=1"},
		{Name: "aggregate/empty box", Data: g, Args: Coords(20, 20, 30, 30), Want: "sum=0 count=0"},
		// 11 x 999999999999999999 = 10999999999999999989, minus 2^64.
		{Name: "aggregate/wraps at 64 bits", Data: wrap, Args: Coords(0, 10), Want: "sum=-7446744073709551627 count=11"},
		{Name: "aggregate/3 dims, negative and extreme coordinates", Data: cube3,
			Args: Coords(minI, -5, -5, 0, 5, 5), Want: "sum=116 count=4"},
		{Name: "aggregate/value larger than a batch", Data: big, Args: Coords(0, 0, 0, 9), Want: "sum=11 count=2"},
		{Name: "aggregate/6400 points", Data: large, Args: Coords(0, 0, 79, 79)},
		{Name: "aggregate/part of 6400 points", Data: large, Args: Coords(10, -5, 100, 60)},
		{Name: "aggregate/bad arguments", Data: g, Args: Coords(1, 2, 3), WantKind: vm.KindGuest, WantMsg: "aggregate: bad arguments"},
		{Name: "aggregate/no arguments", Data: g, WantKind: vm.KindGuest, WantMsg: "aggregate: bad arguments"},
		{Name: "aggregate/output limit", Data: g, Args: box, Limits: vm.Limits{OutputBytes: 4}, WantKind: vm.KindOutputLimit},
	}
	return finish(Aggregate, cs)
}

func walkData() Data {
	d := Data{Dims: 2, Points: []vm.Point{
		pt("start", 0, 0), pt("a", 1, 0), pt("b", 1, 1), pt("goal", 2, 1), pt("goal", 0, 1),
		pt("island", 5, 5), pt("c", 2, 0), pt("goal2", -2, -2), pt("\x00\xffz", 9, 1), pt("t", 4, 2),
		pt("u", 4, 1),
	}}
	d.Edges = []vm.Edge{
		edge(1, "road", xy(0, 0), xy(1, 0)),
		edge(2, "road", xy(0, 0), xy(0, 1)), // leads to a goal too, but weighs more
		edge(1, "road", xy(1, 0), xy(1, 1)),
		edge(1, "rail", xy(1, 0), xy(2, 0)), // same weight: (1,1) < (2,0) wins
		edge(0.5, "x", xy(1, 1), xy(2, 1)),
		edge(0.5, "a", xy(1, 1), xy(2, 1)),
		edge(0.75, "back", xy(2, 1), xy(1, 1)), // from the goal back: a cycle when the goal is not wanted
		edge(7, "in", xy(5, 0), xy(5, 5)),      // (5,5) has only an incoming edge
		edge(1, "r", xy(7, 7), xy(7, 8)),
		edge(1, "r", xy(7, 8), xy(7, 7)),
		edge(1, "r", xy(-1, -1), xy(-1, 5)),
		edge(1, "r", xy(-1, -1), xy(-2, -2)),
		edge(3, "r", xy(9, 0), xy(9, 1)),
		edge(math.Nextafter(0.3, 1), "r", xy(4, 0), xy(4, 1)), // 0.30000000000000004
		edge(0.3, "r", xy(4, 0), xy(4, 2)),
		edge(0, "zero", xy(6, 0), xy(6, 1)), // weights are >= 0 (the engine refuses others): zero is the least
		edge(0.25, "quarter", xy(6, 0), xy(6, 2)),
		edge(1, "d", xy(3, 9), xy(3, 10)), // (3,10) has no edges: a dead end
	}
	for i := int32(0); i < 70; i++ {
		d.Edges = append(d.Edges, edge(1, "chain", xy(100, i), xy(100, i+1)))
	}
	d.Points = append(d.Points, pt("end63", 100, 63), pt("end64", 100, 64), pt("n", 6, 1), pt("z", 6, 2))
	// A node with 300 edges, long labels, and one least weight among them.
	lbl := strings.Repeat("l", 100)
	for k := int32(0); k < 300; k++ {
		w := float64((int(k)*7919 + 150) % 300)
		d.Edges = append(d.Edges, vm.Edge{From: xy(200, 0), To: xy(201, k), Label: lbl, Weight: w, Value: []byte("edge value")})
		d.Points = append(d.Points, pt("leaf", 201, k))
	}
	return d
}

func walkArgs(x, y int32, target string) []byte { return append(Coords(x, y), target...) }

func walkCases() []Case {
	d := walkData()
	nf := func(name string, args []byte) Case {
		return Case{Name: name, Data: d, Args: args, WantKind: vm.KindGuest, WantMsg: "walk: not found"}
	}
	cs := []Case{
		{Name: "walk/to the goal", Data: d, Args: walkArgs(0, 0, "goal"), Want: "0,0 1,0 1,1 2,1"},
		{Name: "walk/start is the goal", Data: d, Args: walkArgs(0, 0, "start"), Want: "0,0"},
		{Name: "walk/negative coordinates", Data: d, Args: walkArgs(-1, -1, "goal2"), Want: "-1,-1 -2,-2"},
		{Name: "walk/binary target", Data: d, Args: walkArgs(9, 0, "\x00\xffz"), Want: "9,0 9,1"},
		{Name: "walk/weights compare as float64", Data: d, Args: walkArgs(4, 0, "t"), Want: "4,0 4,2"},
		{Name: "walk/zero weight", Data: d, Args: walkArgs(6, 0, "n"), Want: "6,0 6,1"},
		{Name: "walk/64 coordinates", Data: d, Args: walkArgs(100, 0, "end63")},
		{Name: "walk/many edges", Data: d, Args: walkArgs(200, 0, "leaf")},
		nf("walk/an absent value is not the empty target", walkArgs(3, 9, "")),
		nf("walk/no edges", walkArgs(5, 5, "goal")),
		nf("walk/dead end", walkArgs(3, 9, "nothing")),
		nf("walk/cycle", walkArgs(7, 7, "nothing")),
		nf("walk/past 64 coordinates", walkArgs(100, 0, "end64")),
		{Name: "walk/bad arguments", Data: d, Args: []byte{1, 2, 3, 4, 5}, WantKind: vm.KindGuest, WantMsg: "walk: bad arguments"},
	}
	return finish(Walk, cs)
}

func writerCases() []Case {
	d := Data{Dims: 2, Points: []vm.Point{
		pt("1", 0, 0), pt("-2", 0, 1), pt("abc", 1, 0), pt("500000000000000000", 1, 1),
		pt("7", 2, 2), pt("999999999999999999", 0, 2),
	}}
	box := Coords(0, 0, 1, 1)
	after := []vm.Point{
		pt("2", 0, 0), pt("-4", 0, 1), pt("abc", 1, 0), pt("1000000000000000000", 1, 1),
		pt("7", 2, 2), pt("999999999999999999", 0, 2),
	}
	large := Data{Dims: 2}
	for x := int32(0); x < 64; x++ {
		for y := int32(0); y < 64; y++ {
			large.Points = append(large.Points, pt(strconv.Itoa(int(x)*64-int(y)*1_000_000_007), x, y))
		}
	}
	cs := []Case{
		{Name: "writer/box", Data: d, Args: box, Want: "wrote=3", WantPoints: after},
		{Name: "writer/empty box", Data: d, Args: Coords(50, 50, 60, 60), Want: "wrote=0"},
		{Name: "writer/4096 points", Data: large, Args: Coords(0, 0, 63, 63)},
		{Name: "writer/bad arguments", Data: d, Args: Coords(0, 0), WantKind: vm.KindGuest, WantMsg: "writer: bad arguments"},
		{Name: "writer/read-only", Data: d, Args: box, Limits: vm.Limits{ReadOnly: true}, WantKind: vm.KindReadOnly},
		{Name: "writer/write limit", Data: d, Args: box, Limits: vm.Limits{Writes: 2}, WantKind: vm.KindWriteLimit},
	}
	return finish(Writer, cs)
}

// finish sets each case's program and fills the expectations the table
// leaves to the model (cases with neither Want nor WantKind).
func finish(program string, cs []Case) []Case {
	for i := range cs {
		c := &cs[i]
		c.Program = program
		if c.Want != "" || c.WantKind != 0 {
			continue
		}
		out, pts, err := runModel(*c)
		if err != nil {
			panic(fmt.Sprintf("conformance: model fails %s: %v", c.Name, err)) // a bug in the table
		}
		c.Want, c.WantPoints = out, pts
	}
	return cs
}

// runModel runs the reference model on a case's data, returning the output and
// the points afterwards.
func runModel(c Case) (string, []vm.Point, error) {
	ctx := context.Background()
	h := vmtest.NewHost(c.Data.Dims)
	if err := c.Data.Load(ctx, h); err != nil {
		return "", nil, err
	}
	out, err := model(ctx, c.Program, h, c.Args)
	if err != nil {
		return "", nil, err
	}
	return out, h.Snapshot().Points, nil
}
