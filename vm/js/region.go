package js

import (
	"github.com/dop251/goja"

	"github.com/cubelinux/cube/vm"
)

// regionIter is the Go side of the object cube.region (and cube.within)
// returns: a lazy iterator that pulls points from the host cursor a batch
// at a time, and only when the program asks for more.
type regionIter struct {
	b     *binding
	name  string                     // the function that made it, for errors
	open  func() vm.Cursor[vm.Point] // the host's scan, called on the first pull
	cur   vm.Cursor[vm.Point]
	buf   []vm.Point
	pos   int
	left  int // points still allowed by {limit}; -1 = no limit
	done  bool
	first bool
	// sinceCall is how many points columns read from the cursor since it
	// last counted a host call.
	sinceCall int
}

// The iterator has no own properties; its methods live on a frozen
// prototype shared by the runtime's iterators.
func (*regionIter) Get(string) goja.Value       { return nil }
func (*regionIter) Set(string, goja.Value) bool { return false }
func (*regionIter) Has(string) bool             { return false }
func (*regionIter) Delete(string) bool          { return false }
func (*regionIter) Keys() []string              { return nil }

func (b *binding) newRegion(lo, hi []int32, limit int) goja.Value {
	return b.newPointIter("cube.region", func() vm.Cursor[vm.Point] { return b.host.Region(b.ctx, lo, hi) }, limit)
}

// newPointIter returns a lazy iterator over the points of the host cursor
// open makes, at most limit of them (-1 = all).
func (b *binding) newPointIter(name string, open func() vm.Cursor[vm.Point], limit int) goja.Value {
	it := &regionIter{b: b, name: name, open: open, left: limit, first: true}
	o := b.r.NewDynamicObject(it)
	o.SetPrototype(b.regionPro)
	return o
}

// pull returns the next point, refilling the buffer from the cursor with
// one host call per batch.
func (it *regionIter) pull() (vm.Point, bool) {
	if it.pos < len(it.buf) {
		p := it.buf[it.pos]
		it.pos++
		return p, true
	}
	if it.done {
		return vm.Point{}, false
	}
	b := it.b
	if !it.first {
		b.call(it.name)
	}
	if it.cur == nil {
		it.cur = it.open()
		b.cursors = append(b.cursors, it.cur)
	}
	it.first = false
	n := batch
	if it.left >= 0 && it.left < n {
		n = it.left
	}
	it.buf, it.pos = it.buf[:0], 0
	for len(it.buf) < n {
		p, ok := it.cur.Next()
		if !ok {
			it.done = true
			break
		}
		it.buf = append(it.buf, vm.Point{Coord: append([]int32(nil), p.Coord...), Value: append([]byte(nil), p.Value...)})
	}
	if it.left >= 0 {
		it.left -= len(it.buf)
		if it.left == 0 {
			it.done = true
		}
	}
	if it.done {
		it.cur.Close()
		if err := it.cur.Err(); err != nil {
			b.hostErr(it.name, err)
		}
	}
	if len(it.buf) == 0 {
		return vm.Point{}, false
	}
	it.pos = 1
	return it.buf[0], true
}

func (b *binding) pointValue(p vm.Point) *goja.Object {
	o := b.r.NewObject()
	o.Set("c", b.coordValue(p.Coord))
	o.Set("v", string(p.Value))
	return o
}

// installRegionProto builds the prototype of region iterators: next,
// [Symbol.iterator], return, toArray, count, columns (columns.go).
func (b *binding) installRegionProto() {
	r := b.r
	self := func(name string, this goja.Value) *regionIter {
		if o, ok := this.(*goja.Object); ok {
			if it, ok := exportOf(o).(*regionIter); ok && it.b == b {
				return it
			}
		}
		b.throwType("%s called on something that is not a region iterator", name)
		return nil
	}
	p := r.NewObject()
	method := func(name string, length int, f func(it *regionIter, call goja.FunctionCall) goja.Value) {
		full := "region." + name
		p.DefineDataProperty(name, b.native(full, length, func(call goja.FunctionCall) goja.Value {
			return f(self(full, call.This), call)
		}), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	}
	method("next", 0, func(it *regionIter, _ goja.FunctionCall) goja.Value {
		res := r.NewObject()
		pt, ok := it.pull()
		if !ok {
			res.Set("value", goja.Undefined())
			res.Set("done", true)
			return res
		}
		res.Set("value", b.pointValue(pt))
		res.Set("done", false)
		return res
	})
	method("return", 0, func(it *regionIter, _ goja.FunctionCall) goja.Value {
		it.done, it.buf, it.pos = true, nil, 0
		if it.cur != nil {
			it.cur.Close()
		}
		res := r.NewObject()
		res.Set("value", goja.Undefined())
		res.Set("done", true)
		return res
	})
	method("toArray", 0, func(it *regionIter, _ goja.FunctionCall) goja.Value {
		var out []any
		for {
			pt, ok := it.pull()
			if !ok {
				break
			}
			if int64(len(out)) >= b.maxUnits/16 {
				b.fail(vm.KindMemoryLimit, "region.toArray: more than %d points", len(out))
			}
			out = append(out, b.pointValue(pt))
		}
		return r.NewArray(out...)
	})
	method("count", 0, func(it *regionIter, _ goja.FunctionCall) goja.Value {
		n := 0
		for {
			if _, ok := it.pull(); !ok {
				break
			}
			n++
		}
		return r.ToValue(n)
	})
	method("columns", 0, func(it *regionIter, call goja.FunctionCall) goja.Value {
		return it.columns(call)
	})
	p.DefineDataPropertySymbol(goja.SymIterator, b.native("[Symbol.iterator]", 0, func(call goja.FunctionCall) goja.Value { return call.This }), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	b.regionPro = p
}
