package js_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
)

func TestCubeAPI(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewHost(2)
	ctx := context.Background()
	h.Put(ctx, []int32{1, 1}, []byte("one"))
	h.Put(ctx, []int32{1, 2}, []byte(`{"n":2}`))
	h.Put(ctx, []int32{2, 2}, []byte("\x00\xff"))
	tests := []struct{ name, body, want string }{
		{"get", `return [cube.get([1, 1]), cube.get([9, 9])]`, `["one",null]`},
		{"getBytes", `return Array.from(cube.getBytes([2, 2]))`, `[0,255]`},
		{"getJSON", `return cube.getJSON([1, 2]).n`, `2`},
		{"put string", `cube.put([3, 3], "x"); return cube.get([3, 3])`, `x`},
		{"put bytes", `cube.put([3, 3], new Uint8Array([1, 2])); return Array.from(cube.getBytes([3, 3]))`, `[1,2]`},
		{"put buffer", `cube.put([3, 3], new Uint8Array([7]).buffer); return Array.from(cube.getBytes([3, 3]))`, `[7]`},
		{"putJSON", `cube.putJSON([3, 3], {a: [1]}); return cube.get([3, 3])`, `{"a":[1]}`},
		{"del", `return [cube.del([1, 1]), cube.del([1, 1]), cube.get([1, 1])]`, `[true,false,null]`},
		{"region", `return cube.region([0, 0], [1, 9]).toArray()`, `[{"c":[1,1],"v":"one"},{"c":[1,2],"v":"{\"n\":2}"}]`},
		{"region count", `return cube.region([0, 0], [9, 9]).count()`, `3`},
		{"region limit", `return cube.region([0, 0], [9, 9], {limit: 2}).toArray().map(p => p.c)`, `[[1,1],[1,2]]`},
		{"region for-of", `const out = []; for (const p of cube.region([0, 0], [9, 9])) out.push(p.v.length); return out`, `[3,7,2]`},
		{"region spread", `return [...cube.region([2, 0], [2, 9])].length`, `1`},
		{"link and edges", `cube.link([1, 1], [2, 2], "road", {weight: 2.5, value: "v"}); return cube.edges([1, 1])`,
			`[{"from":[1,1],"to":[2,2],"label":"road","weight":2.5,"v":"v"}]`},
		{"edges in", `cube.link([1, 1], [2, 2], "road"); return cube.edges([2, 2], {dir: "in"}).map(e => e.from)`, `[[1,1]]`},
		{"unlink", `cube.link([1, 1], [2, 2], "r"); return [cube.unlink([1, 1], [2, 2], "r"), cube.unlink([1, 1], [2, 2], "r")]`, `[true,false]`},
		{"walk", `cube.link([0, 0], [0, 1], "r"); cube.link([0, 1], [0, 2], "r"); return cube.walk([0, 0], {depth: 5}).map(s => [s.c, s.depth])`,
			`[[[0,0],0],[[0,1],1],[[0,2],2]]`},
		{"path", `cube.link([0, 0], [0, 1], "r", {weight: 1}); cube.link([0, 1], [0, 2], "r", {weight: 1}); cube.link([0, 0], [0, 2], "r", {weight: 5});
			return [cube.path([0, 0], [0, 2]), cube.path([0, 2], [0, 0])]`, `[{"coords":[[0,0],[0,1],[0,2]],"weight":2},null]`},
		{"path maxHops", `cube.link([0, 0], [0, 1], "r", {weight: 1}); cube.link([0, 1], [0, 2], "r", {weight: 1}); cube.link([0, 0], [0, 2], "r", {weight: 5});
			return [1, 2, 0].map(n => cube.path([0, 0], [0, 2], {maxHops: n}).weight).concat([cube.path([0, 2], [0, 0], {maxHops: 1, dir: "in", label: "r"}).coords])`,
			`[5,2,2,[[0,2],[0,0]]]`},
		{"log", `cube.log("a", 1, {b: 2}); return "ok"`, `ok`},
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
	p := compile(t, sb, `function run() { cube.log("a", 1, {b: 2}); cube.put([5, 5], "w"); return cube.get([1, 1]) }`, vm.Limits{})
	res, err := p.Run(ctx, h.Begin(), nil)
	if err != nil || len(res.Logs) != 1 || res.Logs[0] != `a 1 {"b":2}` || res.HostCalls != 2 || res.Writes != 1 {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestBadCoordinates(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewHost(2)
	for _, c := range []string{`[1]`, `[1, 2, 3]`, `"1,2"`, `[1.5, 2]`, `[2 ** 31, 0]`, `[-(2 ** 31) - 1, 0]`, `["1", 2]`, `null`, `{0: 1, 1: 2, length: 2}`} {
		t.Run(c, func(t *testing.T) {
			p := compile(t, sb, `function run() { try { cube.get(`+c+`) } catch (e) { return e.name + ": " + e.message } }`, vm.Limits{})
			got := run(t, p, h, "")
			if !strings.HasPrefix(got, "TypeError: cube.get: ") || !strings.Contains(got, "coordinate") {
				t.Fatalf("got %q", got)
			}
		})
	}
	p := compile(t, sb, `function run() { return cube.get([2147483647, -2147483648]) }`, vm.Limits{})
	if got := run(t, p, h, ""); got != "null" {
		t.Fatalf("int32 bounds: %q", got)
	}
}

func TestInvertedBox(t *testing.T) {
	sb := newSB(t)
	p := compile(t, sb, `function run() { try { cube.region([5, 0], [2, 9]) } catch (e) { return e.name + ": " + e.message } }`, vm.Limits{})
	if got := run(t, p, vmtest.NewHost(2), ""); got != "TypeError: cube.region: min 5 > max 2 on axis 0: the box is inverted" {
		t.Fatalf("got %q", got)
	}
}

// countingHost counts cursor pulls.
type countingHost struct {
	*vmtest.Host
	pulls int
}

type countingCursor struct {
	vm.Cursor[vm.Point]
	h *countingHost
}

func (c countingCursor) Next() (vm.Point, bool) { c.h.pulls++; return c.Cursor.Next() }

func (h *countingHost) Region(ctx context.Context, lo, hi []int32) vm.Cursor[vm.Point] {
	return countingCursor{h.Host.Region(ctx, lo, hi), h}
}

func TestRegionLazy(t *testing.T) {
	sb := newSB(t)
	vh := vmtest.NewHost(1)
	for i := int32(0); i < 1000; i++ {
		vh.Put(context.Background(), []int32{i}, []byte("x"))
	}
	tests := []struct {
		body     string
		maxPulls int
	}{
		{`cube.region([0], [999]); return 0`, 0},
		{`return cube.region([0], [999], {limit: 5}).toArray().length`, 5},
		{`for (const p of cube.region([0], [999])) break; return 1`, 64},
		{`return cube.region([0], [999]).count()`, 1001},
	}
	for _, tt := range tests {
		h := &countingHost{Host: vh}
		p := compile(t, sb, "function run() {\n"+tt.body+"\n}", vm.Limits{})
		run(t, p, h, "")
		if h.pulls > tt.maxPulls {
			t.Errorf("%s: %d pulls, want at most %d", tt.body, h.pulls, tt.maxPulls)
		}
	}
}

func TestGizmo(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewHost(1)
	ctx := context.Background()
	// 0 -road-> 1 -road-> 2 -rail-> 3;  4 -road-> 1;  1 -x-> 5
	for _, e := range []struct {
		from, to int32
		label    string
	}{{0, 1, "road"}, {1, 2, "road"}, {2, 3, "rail"}, {4, 1, "road"}, {1, 5, "x"}} {
		h.Link(ctx, vm.Edge{From: []int32{e.from}, To: []int32{e.to}, Label: e.label, Weight: 1})
	}
	for i := int32(0); i < 6; i++ {
		h.Put(ctx, []int32{i}, []byte{'a' + byte(i)})
	}
	tests := []struct{ q, want string }{
		{`cube.V([0]).out("road").all()`, `[[1]]`},
		{`cube.V([0]).out("road").out("road").all()`, `[[2]]`},
		{`cube.V([0]).out().all()`, `[[1]]`},
		{`cube.V([1]).out().all()`, `[[2],[5]]`},
		{`cube.V([1]).in("road").all()`, `[[0],[4]]`},
		{`cube.V([1]).both().all()`, `[[2],[5],[0],[4]]`},
		{`cube.V([0], [4]).out("road").all()`, `[[1]]`},
		{`cube.V([0]).out("road").out().out("rail").values()`, `["d"]`},
		{`cube.V([1]).both().has(n => n.v > "b").all()`, `[[2],[5],[4]]`},
		{`cube.V([1]).both().limit(2).all()`, `[[2],[5]]`},
		{`cube.V([1]).both().count()`, `4`},
		{`cube.V([1]).both().first()`, `[2]`},
		{`cube.V([3]).out().first()`, `null`},
		{`cube.V([0]).out("nope").all()`, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			p := compile(t, sb, "function run() { return "+tt.q+" }", vm.Limits{})
			if got := run(t, p, h, ""); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
	// Lazy: building a query touches nothing; limit stops the pulls.
	p := compile(t, sb, `function run() {
		let calls = 0;
		const q = cube.V([1]).both().has(n => { calls++; return true }).limit(1);
		const before = calls;
		q.all();
		return [before, calls];
	}`, vm.Limits{})
	if got := run(t, p, h, ""); got != "[0,1]" {
		t.Fatalf("laziness: %s", got)
	}
}

func TestPoolIsolation(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewHost(1)
	p := compile(t, sb, `let n = 0; const seen = []; function run(a) { n++; seen.push(a); return [n, seen] }`, vm.Limits{})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				res, err := p.Run(context.Background(), h, []byte("a"))
				if err != nil || string(res.Output) != `[1,["a"]]` {
					t.Errorf("%q %v", res.Output, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestEvalAndSession(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewHost(2)
	ctx := context.Background()
	res, err := sb.Eval(ctx, h, `var x = 20; x + +cube.args`, []byte("22"), vm.Limits{})
	if err != nil || string(res.Output) != "42" {
		t.Fatalf("%q %v", res.Output, err)
	}
	// Nothing of an Eval survives it.
	res, err = sb.Eval(ctx, h, `typeof x`, nil, vm.Limits{})
	if err != nil || string(res.Output) != "undefined" {
		t.Fatalf("%q %v", res.Output, err)
	}
	s := sb.NewSession(vm.Limits{Timeout: 200 * 1e6})
	defer s.Close()
	steps := []struct {
		src, out, typ string
		json          bool
		kind          vm.ErrorKind
	}{
		{`function sq(x) { return x * x }`, ``, "undefined", false, 0},
		{`let k = 3; sq(k)`, `9`, "number", true, 0},
		{`k = sq; k(5)`, `25`, "number", true, 0},
		{`for (;;) {}`, ``, "", false, vm.KindTimeout},
		{`sq(2)`, `4`, "number", true, 0}, // still alive, state kept
		{`throw new Error("x")`, ``, "", false, vm.KindGuest},
		{`JSON.stringify = () => '"evil"'; ({a: [1, 2]})`, `{"a":[1,2]}`, "object", true, 0},
		{`"str"`, `str`, "string", false, 0},
		{`sq`, `[Function: sq]`, "function", false, 0},
		{`cube.put([1, 1], "v"); cube.get([1, 1])`, `v`, "string", false, 0},
		{`"x".repeat(2 ** 30)`, ``, "", false, vm.KindMemoryLimit},
		{`1 +`, ``, "", false, vm.KindBadModule},
	}
	for _, st := range steps {
		c, err := s.EvalCompletion(ctx, h, st.src)
		if st.kind != 0 {
			wantKind(t, err, st.kind)
			continue
		}
		if err != nil || string(c.Output) != st.out || c.Type != st.typ || c.JSON != st.json {
			t.Fatalf("%s: %+v %v", st.src, c, err)
		}
	}
}

// TestPathMaxHopsMistakes: a maxHops that is not a non-negative integer
// throws a TypeError naming the option instead of reaching the host.
//
// Break seen caught: reading maxHops with ToInteger (1.5 ran as 1).
func TestPathMaxHopsMistakes(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewHost(2)
	for _, call := range []string{`cube.path([0, 0], [0, 2], {maxHops: -1})`, `cube.path([0, 0], [0, 2], {maxHops: 1.5})`, `cube.path([0, 0], [0, 2], {maxHops: "two"})`} {
		p := compile(t, sb, `function run() { try { `+call+`; return "no error" } catch (e) { return e.name + ": " + e.message } }`, vm.Limits{})
		want := "TypeError: cube.path: option maxHops must be a non-negative integer"
		if got := run(t, p, h, ""); !strings.HasPrefix(got, want) {
			t.Errorf("%s: got %q, want %s...", call, got, want)
		}
	}
}
