package js_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
)

// TestNearbyWithin: cube.nearby and cube.within over the in-memory host:
// the shapes of their results, their options, a transaction's own writes,
// and each mistake's TypeError. Points: the origin, (1,1), four on the
// circle of radius 5, (10,10).
//
// Breaks it caught: {maxDist: 0} passed on as 0 (the host's "no bound":
// every point came back); within's limit ignored.
func TestNearbyWithin(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewHost(2)
	ctx := context.Background()
	for _, p := range [][]int32{{0, 0}, {1, 1}, {3, 4}, {4, 3}, {-5, 0}, {0, -5}, {10, 10}} {
		h.Put(ctx, p, []byte{byte('a' + p[0] + 5)})
	}
	tests := []struct{ name, body, want string }{
		{"nearby", `return cube.nearby([0, 0], 3)`, `[{"c":[0,0],"v":"f","d":0},{"c":[1,1],"v":"g","d":1.4142135623730951},{"c":[-5,0],"v":"a","d":5}]`},
		{"nearby more than there are", `return cube.nearby([0, 0], 100).length`, `7`},
		{"nearby maxDist", `return cube.nearby([0, 0], 100, {maxDist: 5}).map(n => n.c)`, `[[0,0],[1,1],[-5,0],[0,-5],[3,4],[4,3]]`},
		{"nearby maxDist under", `return cube.nearby([0, 0], 100, {maxDist: 4.99}).length`, `2`},
		{"nearby maxDist 0", `return [cube.nearby([0, 0], 9, {maxDist: 0}).length, cube.nearby([2, 2], 9, {maxDist: 0}).length]`, `[1,0]`},
		{"nearby maxDist Infinity", `return cube.nearby([0, 0], 9, {maxDist: Infinity}).length`, `7`},
		{"nearby far", `return cube.nearby([100, 100], 1)[0].c`, `[10,10]`},
		{"within", `return cube.within([0, 0], 5).toArray().map(p => p.c)`, `[[-5,0],[0,-5],[0,0],[1,1],[3,4],[4,3]]`},
		{"within count", `return cube.within([0, 0], 1.5).count()`, `2`},
		{"within limit", `return cube.within([0, 0], 5, {limit: 2}).toArray().length`, `2`},
		{"within for-of", `let n = 0; for (const p of cube.within([0, 0], Infinity)) n += p.v.length; return n`, `7`},
		{"within sees writes", `cube.put([2, 2], "new"); cube.del([1, 1]); return cube.within([0, 0], 3).toArray()`, `[{"c":[0,0],"v":"f"},{"c":[2,2],"v":"new"}]`},
		{"nearby sees writes", `cube.put([0, 1], "new"); cube.del([0, 0]); return cube.nearby([0, 0], 1)`, `[{"c":[0,1],"v":"new","d":1}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := compile(t, sb, "function run() {\n"+tt.body+"\n}", vm.Limits{})
			tx := h.Begin()
			defer tx.Rollback()
			if got := run(t, p, tx, ""); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	mistakes := []struct{ call, want string }{
		{`cube.nearby([0, 0])`, "cube.nearby: k (how many neighbours) must be an integer >= 1, got undefined"},
		{`cube.nearby([0, 0], 0)`, "cube.nearby: k (how many neighbours) must be an integer >= 1, got 0"},
		{`cube.nearby([0, 0], 1.5)`, "cube.nearby: k (how many neighbours) must be an integer >= 1, got 1.5"},
		{`cube.nearby([0], 1)`, "cube.nearby: a coordinate must have 2 elements"},
		{`cube.nearby([0, 0], 1, {maxDist: -1})`, "cube.nearby: maxDist must be a number >= 0"},
		{`cube.nearby([0, 0], 1, {maxDist: "far"})`, "cube.nearby: maxDist must be a number >= 0"},
		{`cube.within([0, 0])`, "cube.within: r must be a number >= 0 (a distance in the namespace's units, or Infinity), got undefined"},
		{`cube.within([0, 0], NaN)`, "cube.within: r must be a number >= 0"},
		{`cube.within([0, 0], 1, {limit: -1})`, "cube.within: option limit must be a non-negative integer"},
	}
	for _, m := range mistakes {
		p := compile(t, sb, `function run() { try { `+m.call+`; return "no error" } catch (e) { return e.name + ": " + e.message } }`, vm.Limits{})
		if got := run(t, p, h, ""); !strings.HasPrefix(got, "TypeError: "+m.want) {
			t.Errorf("%s: got %q, want TypeError: %s...", m.call, got, m.want)
		}
	}
}

// countingWithin counts the points cube.within pulls from the host.
type countingWithin struct {
	*vmtest.Host
	pulls int
}

type countedCursor struct {
	vm.Cursor[vm.Point]
	pulls *int
}

func (c countedCursor) Next() (vm.Point, bool) { *c.pulls++; return c.Cursor.Next() }

func (h *countingWithin) Within(ctx context.Context, c []int32, r float64) vm.Cursor[vm.Point] {
	return countedCursor{h.Host.Within(ctx, c, r), &h.pulls}
}

// TestWithinLazy: cube.within reads the host only as the program asks,
// like cube.region, and a completion shows it as lazy under its own name.
func TestWithinLazy(t *testing.T) {
	sb := newSB(t)
	vh := vmtest.NewHost(1)
	for i := int32(0); i < 1000; i++ {
		vh.Put(context.Background(), []int32{i}, []byte("x"))
	}
	c, err := sb.EvalCompletion(context.Background(), vh, `cube.within([0], 5)`, nil, vm.Limits{})
	if want := "[cube.within: lazy; [...it], it.toArray() or it.count() reads it]"; err != nil || c.Type != "lazy" || string(c.Output) != want {
		t.Errorf("completion of cube.within: %s %s %v, want lazy %s", c.Type, c.Output, err, want)
	}
	for _, tt := range []struct {
		body     string
		maxPulls int
	}{
		{`cube.within([0], 2000); return 0`, 0},
		{`return cube.within([0], 2000, {limit: 5}).toArray().length`, 5},
		{`for (const p of cube.within([0], 2000)) break; return 1`, 64},
		{`return cube.within([0], 2000).count()`, 1001},
	} {
		h := &countingWithin{Host: vh}
		p := compile(t, sb, "function run() {\n"+tt.body+"\n}", vm.Limits{})
		run(t, p, h, "")
		if h.pulls > tt.maxPulls {
			t.Errorf("%s: %d pulls, want at most %d", tt.body, h.pulls, tt.maxPulls)
		}
	}
}
