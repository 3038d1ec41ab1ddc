package js

import (
	"math"
	"strings"

	"github.com/dop251/goja"

	"github.com/cubelinux/cube/vm"
)

// batch is how many records a JavaScript iterator pulls from a host cursor
// at a time: one host call per batch, not per record.
const batch = 64

// installCube defines the global cube: the host API in JavaScript form.
//
//	cube.dims                      number of dimensions
//	cube.geo                       true in a geographic namespace: every coordinate in and
//	                               out is [longitude, latitude] in degrees (exact to 1e-7),
//	                               nearby's d, maxDist and within's r are metres
//	cube.args / cube.argsBytes     the run's arguments as a string / Uint8Array
//	cube.get(c)                    string or null
//	cube.getBytes(c)               Uint8Array or null
//	cube.getJSON(c)                parsed value or null
//	cube.put(c, v)                 v: string | Uint8Array | ArrayBuffer
//	cube.putJSON(c, v)             stores JSON.stringify(v)
//	cube.del(c)                    true if there was a value
//	cube.region(min, max, {limit}) lazy iterable of {c, v}; .toArray(), .count(),
//	                               .columns({max, values}) the next points as typed-array
//	                               columns {n, c: [axis...], v} (columns.go)
//	cube.nearby(c, k, {maxDist})   the k nearest [{c, v, d}], nearest first (d: Euclidean
//	                               distance; ties in curve order; maxDist: none farther)
//	cube.within(c, r, {limit})     lazy iterable of {c, v} at distance <= r, in curve order
//	cube.edges(c, {dir, label})    [{from, to, label, weight, v}]
//	cube.link(from, to, label, {weight, value})
//	cube.unlink(from, to, label)   true if the edge existed
//	cube.walk(start, {order, depth, label, dir, limit}) [{c, depth, from}]
//	cube.path(from, to, {label, dir, maxHops}) {coords, weight} or null; maxHops bounds the edges (0 = no bound)
//	cube.V(c, ...)                 lazy graph query (gizmo.go)
//	cube.log(...)                  a log line
func (b *binding) installCube() *goja.Object {
	r := b.r
	c := r.NewObject()
	// Functions are named "cube.get", not "get": the name a person reads
	// in a stack, in "[Function: cube.V]" and in every error message is
	// the one they type.
	def := func(name string, length int, f func(goja.FunctionCall) goja.Value) {
		fv := b.native("cube."+name, length, f)
		c.DefineDataProperty(name, fv, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	getter := func(name string, f func() goja.Value) {
		g := b.native("get cube."+name, 0, func(goja.FunctionCall) goja.Value {
			if b.noHost() {
				b.throwType("cube.%s: cube is only usable while a program runs", name)
			}
			return f()
		})
		c.DefineAccessorProperty(name, g, nil, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	getter("dims", func() goja.Value { return r.ToValue(b.host.Dims()) })
	getter("geo", func() goja.Value { return r.ToValue(b.host.Geo()) })
	getter("args", func() goja.Value {
		if b.argsVal == nil {
			b.argsVal = r.ToValue(string(b.args))
		}
		return b.argsVal
	})
	getter("argsBytes", func() goja.Value { return b.bytesOut(b.args) })

	get := func(name string, call goja.FunctionCall) ([]byte, bool) {
		b.call(name)
		k := b.coord(name, call.Argument(0))
		v, ok, err := b.host.Get(b.ctx, k)
		if err != nil {
			b.hostErr(name, err)
		}
		return v, ok
	}
	def("get", 1, func(call goja.FunctionCall) goja.Value {
		v, ok := get("cube.get", call)
		if !ok {
			return goja.Null()
		}
		return r.ToValue(string(v))
	})
	def("getBytes", 1, func(call goja.FunctionCall) goja.Value {
		v, ok := get("cube.getBytes", call)
		if !ok {
			return goja.Null()
		}
		return b.bytesOut(v)
	})
	def("getJSON", 1, func(call goja.FunctionCall) goja.Value {
		v, ok := get("cube.getJSON", call)
		if !ok {
			return goja.Null()
		}
		return b.parseJSON("cube.getJSON", v)
	})
	put := func(name string, k []int32, v []byte) {
		if err := b.host.Put(b.ctx, k, v); err != nil {
			b.hostErr(name, err)
		}
	}
	def("put", 2, func(call goja.FunctionCall) goja.Value {
		b.write("cube.put")
		k := b.coord("cube.put", call.Argument(0))
		put("cube.put", k, b.bytesIn("cube.put", call.Argument(1)))
		return goja.Undefined()
	})
	def("putJSON", 2, func(call goja.FunctionCall) goja.Value {
		b.write("cube.putJSON")
		k := b.coord("cube.putJSON", call.Argument(0))
		s, ok := b.toJSON("cube.putJSON", call.Argument(1))
		if !ok {
			b.throwType("cube.putJSON: the value cannot be encoded as JSON (%s)", describe(call.Argument(1)))
		}
		put("cube.putJSON", k, []byte(s))
		return goja.Undefined()
	})
	def("del", 1, func(call goja.FunctionCall) goja.Value {
		b.write("cube.del")
		k := b.coord("cube.del", call.Argument(0))
		ok, err := b.host.Delete(b.ctx, k)
		if err != nil {
			b.hostErr("cube.del", err)
		}
		return r.ToValue(ok)
	})
	def("region", 2, func(call goja.FunctionCall) goja.Value {
		const name = "cube.region"
		b.call(name)
		lo := b.coord(name, call.Argument(0))
		hi := b.coord(name, call.Argument(1))
		o := b.optObject(name, call.Argument(2))
		limit := b.optInt(name, o, "limit", -1)
		for i := range lo {
			if lo[i] > hi[i] {
				if b.host.Geo() {
					b.throwType("%s: min %v > max %v degrees of %s: the box is inverted (a box across the antimeridian is two boxes)", name, float64(lo[i])/geoScale, float64(hi[i])/geoScale, [2]string{"longitude", "latitude"}[i])
				}
				b.throwType("%s: min %d > max %d on axis %d: the box is inverted", name, lo[i], hi[i], i)
			}
		}
		return b.newRegion(lo, hi, limit)
	})
	def("nearby", 2, func(call goja.FunctionCall) goja.Value {
		const name = "cube.nearby"
		b.call(name)
		k := b.coord(name, call.Argument(0))
		n := call.Argument(1)
		if !goja.IsNumber(n) || n.ToFloat() != math.Trunc(n.ToFloat()) || n.ToFloat() < 1 || n.ToFloat() > math.MaxInt32 {
			b.throwType("%s: k (how many neighbours) must be an integer >= 1, got %s", name, describe(n))
		}
		o := b.optObject(name, call.Argument(2))
		maxDist := 0.0
		if v := opt(o, "maxDist"); v != nil {
			// The host's 0 means no bound; {maxDist: 0} means the centre
			// only, which the smallest positive bound gives.
			maxDist = max(b.distance(name, "maxDist", v), math.SmallestNonzeroFloat64)
		}
		near, err := b.host.Nearby(b.ctx, k, int(n.ToFloat()), maxDist)
		if err != nil {
			b.hostErr(name, err)
		}
		out := make([]any, len(near))
		for i, p := range near {
			o := r.NewObject()
			o.Set("c", b.coordValue(p.Coord))
			o.Set("v", string(p.Value))
			o.Set("d", p.Dist)
			out[i] = o
		}
		return r.NewArray(out...)
	})
	def("within", 2, func(call goja.FunctionCall) goja.Value {
		const name = "cube.within"
		b.call(name)
		k := b.coord(name, call.Argument(0))
		rad := b.distance(name, "r", call.Argument(1))
		o := b.optObject(name, call.Argument(2))
		limit := b.optInt(name, o, "limit", -1)
		return b.newPointIter(name, func() vm.Cursor[vm.Point] { return b.host.Within(b.ctx, k, rad) }, limit)
	})
	def("edges", 1, func(call goja.FunctionCall) goja.Value {
		const name = "cube.edges"
		b.call(name)
		k := b.coord(name, call.Argument(0))
		o := b.optObject(name, call.Argument(1))
		dir := b.optDir(name, o, vm.Out)
		label := ""
		if v := opt(o, "label"); v != nil {
			label = v.String()
		}
		var out []any
		b.eachEdge(name, k, dir, label, func(e vm.Edge) bool {
			out = append(out, b.edgeValue(e))
			return true
		})
		return r.NewArray(out...)
	})
	def("link", 3, func(call goja.FunctionCall) goja.Value {
		const name = "cube.link"
		b.write(name)
		e := vm.Edge{From: b.coord(name, call.Argument(0)), To: b.coord(name, call.Argument(1)), Weight: 1}
		if !goja.IsString(call.Argument(2)) {
			b.throwType("%s: the label must be a string, got %s", name, describe(call.Argument(2)))
		}
		e.Label = call.Argument(2).String()
		o := b.optObject(name, call.Argument(3))
		if v := opt(o, "weight"); v != nil {
			if !goja.IsNumber(v) {
				b.throwType("%s: weight must be a number, got %s", name, describe(v))
			}
			e.Weight = v.ToFloat()
		}
		if v := opt(o, "value"); v != nil {
			e.Value = b.bytesIn(name, v)
		}
		if err := b.host.Link(b.ctx, e); err != nil {
			b.hostErr(name, err)
		}
		return goja.Undefined()
	})
	def("unlink", 3, func(call goja.FunctionCall) goja.Value {
		const name = "cube.unlink"
		b.write(name)
		from, to := b.coord(name, call.Argument(0)), b.coord(name, call.Argument(1))
		ok, err := b.host.Unlink(b.ctx, from, to, call.Argument(2).String())
		if err != nil {
			b.hostErr(name, err)
		}
		return r.ToValue(ok)
	})
	def("walk", 1, func(call goja.FunctionCall) goja.Value {
		const name = "cube.walk"
		b.call(name)
		start := b.coord(name, call.Argument(0))
		o := b.optObject(name, call.Argument(1))
		w := vm.WalkOptions{
			MaxDepth:  b.optInt(name, o, "depth", 1),
			Limit:     b.optInt(name, o, "limit", 0),
			Direction: b.optDir(name, o, vm.Out),
		}
		if v := opt(o, "label"); v != nil {
			w.Label = v.String()
		}
		if v := opt(o, "order"); v != nil {
			switch v.String() {
			case "bfs":
				w.Order = vm.BFS
			case "dfs":
				w.Order = vm.DFS
			default:
				b.throwType("%s: order must be \"bfs\" or \"dfs\", got %q", name, v.String())
			}
		}
		steps, err := b.host.Walk(b.ctx, start, w)
		if err != nil {
			b.hostErr(name, err)
		}
		out := make([]any, len(steps))
		for i, s := range steps {
			st := r.NewObject()
			st.Set("c", b.coordValue(s.Coord))
			st.Set("depth", s.Depth)
			if s.From != nil {
				st.Set("from", b.coordValue(s.From))
			} else {
				st.Set("from", goja.Null())
			}
			out[i] = st
		}
		return r.NewArray(out...)
	})
	def("path", 2, func(call goja.FunctionCall) goja.Value {
		const name = "cube.path"
		b.call(name)
		from, to := b.coord(name, call.Argument(0)), b.coord(name, call.Argument(1))
		o := b.optObject(name, call.Argument(2))
		po := vm.PathOptions{Direction: b.optDir(name, o, vm.Out), MaxHops: b.optInt(name, o, "maxHops", 0)}
		if v := opt(o, "label"); v != nil {
			po.Label = v.String()
		}
		p, ok, err := b.host.ShortestPath(b.ctx, from, to, po)
		if err != nil {
			b.hostErr(name, err)
		}
		if !ok {
			return goja.Null()
		}
		cs := make([]any, len(p.Coords))
		for i, c := range p.Coords {
			cs[i] = b.coordValue(c)
		}
		res := r.NewObject()
		res.Set("coords", r.NewArray(cs...))
		res.Set("weight", p.Weight)
		return res
	})
	def("log", 0, func(call goja.FunctionCall) goja.Value {
		if b.host == nil {
			return goja.Undefined()
		}
		var sb strings.Builder
		for i, a := range call.Arguments {
			if i > 0 {
				sb.WriteByte(' ')
			}
			if o, ok := a.(*goja.Object); ok && o.ClassName() != "Function" && o.ClassName() != "Error" {
				if s, ok := b.toJSON("cube.log", a); ok {
					sb.WriteString(s)
					continue
				}
			}
			sb.WriteString(a.String())
			if sb.Len() > vm.DefaultLogBytes {
				break
			}
		}
		b.addLog(sb.String())
		return goja.Undefined()
	})
	def("V", 1, func(call goja.FunctionCall) goja.Value {
		b.call("cube.V")
		return b.newGizmo(call.Arguments)
	})
	return c
}

// distance reads a distance argument: a number >= 0 (Infinity allowed).
func (b *binding) distance(name, what string, v goja.Value) float64 {
	if !goja.IsNumber(v) || !(v.ToFloat() >= 0) {
		b.throwType("%s: %s must be a number >= 0 (a distance in the namespace's units, or Infinity), got %s", name, what, describe(v))
	}
	return v.ToFloat()
}

// addLog keeps a log line within the per-run log budget; lines past it are
// dropped, with one marker saying so.
func (b *binding) addLog(s string) {
	const marker = "... (log truncated)"
	if b.logBytes >= vm.DefaultLogBytes {
		return
	}
	if b.logBytes+len(s) > vm.DefaultLogBytes {
		b.logs = append(b.logs, marker)
		b.logBytes = vm.DefaultLogBytes
		return
	}
	b.logs = append(b.logs, s)
	b.logBytes += len(s)
}

// eachEdge pulls the edges of k from the host in batches, counting one
// host call per batch, until f returns false.
func (b *binding) eachEdge(name string, k []int32, dir vm.Direction, label string, f func(vm.Edge) bool) {
	cur := b.host.Edges(b.ctx, k, dir, label)
	defer cur.Close()
	for n := 0; ; n++ {
		if n > 0 && n%batch == 0 {
			b.call(name)
		}
		e, ok := cur.Next()
		if !ok {
			break
		}
		if !f(e) {
			return
		}
	}
	if err := cur.Err(); err != nil {
		b.hostErr(name, err)
	}
}

func (b *binding) edgeValue(e vm.Edge) *goja.Object {
	o := b.r.NewObject()
	o.Set("from", b.coordValue(e.From))
	o.Set("to", b.coordValue(e.To))
	o.Set("label", e.Label)
	o.Set("weight", e.Weight)
	if len(e.Value) > 0 {
		o.Set("v", string(e.Value))
	} else {
		o.Set("v", goja.Null())
	}
	return o
}
