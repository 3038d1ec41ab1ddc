package js_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/js"
	"github.com/cubelinux/cube/vm/vmtest"
)

func compile(t testing.TB, sb *js.Sandbox, src string, lim vm.Limits) vm.Program {
	t.Helper()
	p, err := sb.Compile(context.Background(), []byte(src), lim)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

func newSB(t testing.TB) *js.Sandbox {
	sb := js.New(js.Options{})
	t.Cleanup(func() { sb.Close(context.Background()) })
	return sb
}

func run(t testing.TB, p vm.Program, h vm.Host, args string) string {
	t.Helper()
	res, err := p.Run(context.Background(), h, []byte(args))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return string(res.Output)
}

func wantKind(t testing.TB, err error, kind vm.ErrorKind) *vm.Error {
	t.Helper()
	var e *vm.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *vm.Error of kind %v", err, err, kind)
	}
	if e.Kind != kind {
		t.Fatalf("kind = %v (%v), want %v", e.Kind, e, kind)
	}
	return e
}

func TestOutputs(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewHost(3)
	tests := []struct{ name, src, args, want string }{
		{"string", `function run(a) { return "hi " + a }`, "bob", "hi bob"},
		{"unicode", `function run(a) { return "żółw " + a }`, "ü", "żółw ü"},
		{"undefined", `function run(a) {}`, "", ""},
		{"number", `function run(a) { return 42 }`, "", "42"},
		{"null", `function run(a) { return null }`, "", "null"},
		{"object", `function run(a) { return {a: [1, "x"], b: true} }`, "", `{"a":[1,"x"],"b":true}`},
		{"bytes", `function run(a) { return new Uint8Array([104, 105]) }`, "", "hi"},
		{"buffer", `function run(a) { return new Uint8Array([0, 255]).buffer }`, "", "\x00\xff"},
		{"args", `function run(a) { return cube.args === a ? cube.argsBytes.length : -1 }`, "abc", "3"},
		{"dims", `function run() { return cube.dims }`, "", "3"},
		{"helpers", `const k = 2; function twice(x) { return x * k } function run(a) { return twice(+a) }`, "21", "42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := compile(t, sb, tt.src, vm.Limits{})
			if got := run(t, p, h, tt.args); got != tt.want {
				t.Fatalf("output %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	sb := newSB(t)
	tests := []struct {
		name, src  string
		line, col  int
		msgContain string
	}{
		{"syntax", "function run(a) {\n  return a +;\n}", 2, 13, "syntax"},
		{"no run", "function walk() {}", 0, 0, "run(args)"},
		{"run nested", "function f() { function run() {} }", 0, 0, "run(args)"},
		{"strict", "function run(a) {\n  with (a) {}\n}", 2, 3, "syntax"},
		{"top-level return", "return 1", 1, 1, "syntax"},
		{"breakout", "}); (function(){ function run() {}", 1, 1, "syntax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sb.Compile(context.Background(), []byte(tt.src), vm.Limits{})
			e := wantKind(t, err, vm.KindBadModule)
			if !strings.Contains(e.Msg, tt.msgContain) {
				t.Errorf("message %q does not mention %q", e.Msg, tt.msgContain)
			}
			if tt.line != 0 && (e.Line != tt.line || (tt.col != 0 && e.Column != tt.col)) {
				t.Errorf("position %d:%d, want %d:%d (%v)", e.Line, e.Column, tt.line, tt.col, e)
			}
		})
	}
}

func TestTopLevel(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewHost(1)
	h.Put(context.Background(), []int32{7}, []byte("seven"))
	// The top level runs at every run, with the host, under the limits.
	p := compile(t, sb, "const v = cube.get([7]);\nfunction run() { return v }", vm.Limits{})
	if got := run(t, p, h, ""); got != "seven" {
		t.Fatalf("got %q", got)
	}
	p = compile(t, sb, "for (;;) {}\nfunction run() {}", vm.Limits{Timeout: 50 * time.Millisecond})
	_, err := p.Run(context.Background(), h, nil)
	wantKind(t, err, vm.KindTimeout)
	p = compile(t, sb, "let run = 3", vm.Limits{})
	_, err = p.Run(context.Background(), h, nil)
	wantKind(t, err, vm.KindBadModule)
	p = compile(t, sb, "const run = (a) => a + a", vm.Limits{})
	if got := run(t, p, h, "ab"); got != "abab" {
		t.Fatalf("got %q", got)
	}
}

func TestRuntimeErrorPosition(t *testing.T) {
	sb := newSB(t)
	h := vmtest.NewHost(2)
	p := compile(t, sb, "function run(a) {\n  if (a === 'x') {\n    throw new Error('bad ' + a);\n  }\n  return null.x;\n}", vm.Limits{})
	_, err := p.Run(context.Background(), h, []byte("x"))
	e := wantKind(t, err, vm.KindGuest)
	if !strings.Contains(e.Msg, "bad x") || e.Line != 3 || e.Column == 0 {
		t.Fatalf("got %v (line %d col %d)", e, e.Line, e.Column)
	}
	_, err = p.Run(context.Background(), h, []byte("y"))
	e = wantKind(t, err, vm.KindGuest)
	if !strings.Contains(e.Msg, "TypeError") || e.Line != 5 {
		t.Fatalf("got %v", e)
	}
	// First-line columns are the user's, not shifted by the wrapper.
	p = compile(t, sb, "function run(a) { return a.b.c }", vm.Limits{})
	_, err = p.Run(context.Background(), h, nil)
	e = wantKind(t, err, vm.KindGuest)
	if e.Line != 1 || e.Column < 19 || e.Column > 32 {
		t.Fatalf("position %d:%d, want line 1 within the function body", e.Line, e.Column)
	}
}
