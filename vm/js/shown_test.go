package js_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/vmtest"
)

// TestNoExportWalk: cube's built-ins look at an object argument only to
// see whether it is bytes (or a region iterator, a graph query), never by
// exporting it: Export walks every property in Go and calls getters,
// where a panic escaped as "internal error in the JavaScript runtime" and
// a large object cost time no limit interrupts. Breaks it caught:
// bytesIn, typeOf and encode back on o.Export() (the getter ran; the
// first two ended in the internal error, seen in the REPL by typing
// "cube" with no namespace).
func TestNoExportWalk(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewHost(2)
	p := compile(t, sb, `function run() { cube.put([1, 2], {get x() { throw new Error("the getter ran") }}) }`, vm.Limits{})
	_, err := p.Run(context.Background(), h, nil)
	if err == nil || !strings.Contains(err.Error(), "a value must be a string, Uint8Array or ArrayBuffer") {
		t.Fatalf("put of an object with a throwing getter: %v, want the value-type error", err)
	}
	c, err := sb.EvalCompletion(context.Background(), h, `({get x() { throw new Error("the getter ran") }})`, nil, vm.Limits{})
	if err == nil || !strings.Contains(err.Error(), "the getter ran") || strings.Contains(err.Error(), "internal error") {
		t.Fatalf("completion with a throwing getter: %q %v, want the getter's error from JSON.stringify", c.Output, err)
	}
	// Outside any namespace, the cube object's getters throw: an error
	// that says so, not the runtime's internal error.
	_, err = sb.EvalCompletion(context.Background(), nil, `cube`, nil, vm.Limits{})
	if err == nil || !strings.Contains(err.Error(), "cube.dims: cube is only usable while a program runs") {
		t.Fatalf("cube outside a namespace: %v", err)
	}
}

// TestShownCompletion: a completion value a person reads shows what JSON
// has no form for by saying what it is. Break it caught: eval back on
// encode (functions vanished, bytes showed as {}).
func TestShownCompletion(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewHost(2)
	for _, tc := range []struct{ src, typ, want string }{
		{`({f: cube.get, b: new Uint8Array([1, 2, 3]), n: 1})`, "object", `{"f":"[Function: cube.get]","b":"Uint8Array(3) [1, 2, 3]","n":1}`},
		{`[new ArrayBuffer(2)]`, "object", `["ArrayBuffer(2) [0, 0]"]`},
		{`({r: cube.region([0, 0], [1, 1])})`, "object", `{"r":"[cube.region: lazy; [...it], it.toArray() or it.count() reads it]"}`},
		{`cube.region([0, 0], [1, 1])`, "lazy", `[cube.region: lazy; [...it], it.toArray() or it.count() reads it]`},
		{`cube.V([0, 0]).out()`, "lazy", `[cube.V query: lazy; .all(), .count() or .first() runs it]`},
		{`new Uint8Array([65, 66])`, "bytes", "AB"},
		{`cube.dims`, "number", "2"},
	} {
		c, err := sb.EvalCompletion(context.Background(), h, tc.src, nil, vm.Limits{})
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if c.Type != tc.typ || string(c.Output) != tc.want {
			t.Errorf("%s: %s %s, want %s %s", tc.src, c.Type, c.Output, tc.typ, tc.want)
		}
	}
	// A program's output stays plain JSON.
	p := compile(t, sb, `function run() { return {f: cube.get, n: 1} }`, vm.Limits{})
	if got := run(t, p, h, ""); got != `{"n":1}` {
		t.Errorf("program output %s, want {\"n\":1}", got)
	}
}
