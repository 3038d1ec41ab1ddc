package js

import (
	"encoding/binary"

	"github.com/dop251/goja"

	"github.com/cubelinux/cube/vm"
)

// A gizmo is a lazy graph query in the spirit of Cayley's Gizmo:
//
//	cube.V([0,0,0]).out("road").in().both("x").has(n => n.v !== null).limit(10).all()
//
// Building a query (V, out, in, both, has, limit) records steps and
// touches nothing; a terminal call (all, count, first, values) pulls
// coordinates through the steps one at a time, so limit stops the work
// early. Each hop step yields a coordinate at most once (set semantics).
// has(fn) calls fn({c, v}) and keeps the node when the result is truthy.
type gizmo struct {
	b     *binding
	start [][]int32
	steps []gizmoStep
}

type gizmoStep struct {
	kind  byte // 'h' hop, 'f' filter, 'l' limit
	dir   vm.Direction
	label string
	fn    goja.Callable
	n     int
}

func (*gizmo) Get(string) goja.Value       { return nil }
func (*gizmo) Set(string, goja.Value) bool { return false }
func (*gizmo) Has(string) bool             { return false }
func (*gizmo) Delete(string) bool          { return false }
func (*gizmo) Keys() []string              { return nil }

func (b *binding) newGizmo(args []goja.Value) goja.Value {
	if len(args) == 0 {
		b.throwType("cube.V: give at least one start coordinate, e.g. cube.V([0,0,0])")
	}
	g := &gizmo{b: b}
	for _, a := range args {
		g.start = append(g.start, b.coord("cube.V", a))
	}
	return b.gizmoObject(g)
}

func (b *binding) gizmoObject(g *gizmo) goja.Value {
	o := b.r.NewDynamicObject(g)
	o.SetPrototype(b.gizmoPro)
	return o
}

func (g *gizmo) with(s gizmoStep) *gizmo {
	steps := make([]gizmoStep, len(g.steps), len(g.steps)+1)
	copy(steps, g.steps)
	return &gizmo{b: g.b, start: g.start, steps: append(steps, s)}
}

// iter is a pull iterator over coordinates.
type iter func() ([]int32, bool)

func ckey(c []int32) string {
	k := make([]byte, 4*len(c))
	for i, x := range c {
		binary.BigEndian.PutUint32(k[4*i:], uint32(x))
	}
	return string(k)
}

// compile chains the steps into one pull iterator.
func (g *gizmo) compile() iter {
	b := g.b
	i := 0
	var it iter = func() ([]int32, bool) {
		if i >= len(g.start) {
			return nil, false
		}
		i++
		return g.start[i-1], true
	}
	for _, s := range g.steps {
		up := it
		switch s.kind {
		case 'h':
			it = b.hop(up, s.dir, s.label)
		case 'f':
			fn := s.fn
			it = func() ([]int32, bool) {
				for {
					c, ok := up()
					if !ok {
						return nil, false
					}
					node := b.r.NewObject()
					node.Set("c", b.coordValue(c))
					b.call("gizmo.has")
					v, found, err := b.host.Get(b.ctx, c)
					if err != nil {
						b.hostErr("gizmo.has", err)
					}
					if found {
						node.Set("v", string(v))
					} else {
						node.Set("v", goja.Null())
					}
					res, err := fn(goja.Undefined(), node)
					if err != nil {
						panic(err)
					}
					if res.ToBoolean() {
						return c, true
					}
				}
			}
		case 'l':
			left := s.n
			it = func() ([]int32, bool) {
				if left <= 0 {
					return nil, false
				}
				left--
				return up()
			}
		}
	}
	return it
}

// hop yields the neighbours of each upstream coordinate, each once.
func (b *binding) hop(up iter, dir vm.Direction, label string) iter {
	seen := map[string]bool{}
	var pending [][]int32
	return func() ([]int32, bool) {
		for len(pending) == 0 {
			c, ok := up()
			if !ok {
				return nil, false
			}
			b.call("gizmo.hop")
			b.eachEdge("gizmo.hop", c, dir, label, func(e vm.Edge) bool {
				n := e.To
				if dir == vm.In || (dir == vm.Both && ckey(e.To) == ckey(c) && ckey(e.From) != ckey(c)) {
					n = e.From
				}
				k := ckey(n)
				if !seen[k] {
					if int64(len(seen)) >= b.maxUnits/16 {
						b.fail(vm.KindMemoryLimit, "gizmo: more than %d nodes in one step", len(seen))
					}
					seen[k] = true
					pending = append(pending, append([]int32(nil), n...))
				}
				return true
			})
		}
		c := pending[0]
		pending = pending[1:]
		return c, true
	}
}

func (b *binding) installGizmoProto() {
	r := b.r
	self := func(name string, this goja.Value) *gizmo {
		if o, ok := this.(*goja.Object); ok {
			if g, ok := exportOf(o).(*gizmo); ok && g.b == b {
				return g
			}
		}
		b.throwType("%s called on something that is not a graph query (start one with cube.V)", name)
		return nil
	}
	p := r.NewObject()
	method := func(name string, length int, f func(g *gizmo, call goja.FunctionCall) goja.Value) {
		full := "gizmo." + name
		p.DefineDataProperty(name, b.native(full, length, func(call goja.FunctionCall) goja.Value {
			return f(self(full, call.This), call)
		}), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	}
	label := func(call goja.FunctionCall) string {
		a := call.Argument(0)
		if goja.IsUndefined(a) || goja.IsNull(a) {
			return ""
		}
		return a.String()
	}
	method("out", 1, func(g *gizmo, call goja.FunctionCall) goja.Value {
		return b.gizmoObject(g.with(gizmoStep{kind: 'h', dir: vm.Out, label: label(call)}))
	})
	method("in", 1, func(g *gizmo, call goja.FunctionCall) goja.Value {
		return b.gizmoObject(g.with(gizmoStep{kind: 'h', dir: vm.In, label: label(call)}))
	})
	method("both", 1, func(g *gizmo, call goja.FunctionCall) goja.Value {
		return b.gizmoObject(g.with(gizmoStep{kind: 'h', dir: vm.Both, label: label(call)}))
	})
	method("has", 1, func(g *gizmo, call goja.FunctionCall) goja.Value {
		fn, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			b.throwType("gizmo.has: give a predicate function, e.g. .has(n => n.v !== null)")
		}
		return b.gizmoObject(g.with(gizmoStep{kind: 'f', fn: fn}))
	})
	method("limit", 1, func(g *gizmo, call goja.FunctionCall) goja.Value {
		n := call.Argument(0).ToFloat()
		if n < 0 || n != float64(int64(n)) {
			b.throwType("gizmo.limit: give a non-negative integer")
		}
		return b.gizmoObject(g.with(gizmoStep{kind: 'l', n: int(min(n, 1<<31))}))
	})
	method("all", 0, func(g *gizmo, _ goja.FunctionCall) goja.Value {
		it := g.compile()
		var out []any
		for c, ok := it(); ok; c, ok = it() {
			out = append(out, b.coordValue(c))
		}
		return r.NewArray(out...)
	})
	method("count", 0, func(g *gizmo, _ goja.FunctionCall) goja.Value {
		it := g.compile()
		n := 0
		for _, ok := it(); ok; _, ok = it() {
			n++
		}
		return r.ToValue(n)
	})
	method("first", 0, func(g *gizmo, _ goja.FunctionCall) goja.Value {
		if c, ok := g.compile()(); ok {
			return b.coordValue(c)
		}
		return goja.Null()
	})
	method("values", 0, func(g *gizmo, _ goja.FunctionCall) goja.Value {
		it := g.compile()
		var out []any
		for c, ok := it(); ok; c, ok = it() {
			b.call("gizmo.values")
			v, found, err := b.host.Get(b.ctx, c)
			if err != nil {
				b.hostErr("gizmo.values", err)
			}
			if found {
				out = append(out, string(v))
			} else {
				out = append(out, nil)
			}
		}
		return r.NewArray(out...)
	})
	b.gizmoPro = p
}
