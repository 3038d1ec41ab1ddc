package js

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"

	"github.com/dop251/goja"

	"github.com/cubelinux/cube/vm"
)

// columns is region.columns({max, values}): the iterator's next points (at
// most max, all by default) in one host-side loop, as columns rather than
// an object per point:
//
//	{n, c: [axis 0, axis 1, ...], v}
//
// Each axis is an Int32Array (a Float64Array of degrees in a GEO
// namespace). v depends on values: "string" (the default) an array of
// strings; "number" a Float64Array of Number(value), what +p.v gives;
// "bytes" a Uint8Array of all values end to end, with off a Uint32Array of
// n+1 offsets (value i is v.subarray(off[i], off[i+1])). n is 0 once the
// iterator is exhausted.
//
// The typed arrays are built on Go slices without a copy. What one call
// builds is bounded by half the run's MemoryBytes, counted as it goes (the
// typed arrays' bytes, and for strings their bytes plus the per-string
// overhead), so no call can allocate past the budget in one step; the heap
// watchdog sees what many calls keep.
func (it *regionIter) columns(call goja.FunctionCall) goja.Value {
	const name = "region.columns"
	b := it.b
	r := b.r
	o := b.optObject(name, call.Argument(0))
	maxN := b.optInt(name, o, "max", math.MaxInt32)
	mode := colString
	if v := opt(o, "values"); v != nil {
		switch v.String() {
		case "string":
		case "number":
			mode = colNumber
		case "bytes":
			mode = colBytes
		default:
			b.throwType("%s: values must be \"string\", \"number\" or \"bytes\", got %s", name, strconv.Quote(v.String()))
		}
	}
	if b.noHost() {
		b.throwType("%s: no host: cube is only usable while a program runs", name)
	}
	dims := b.host.Dims()
	geo := b.host.Geo()
	// Half the run's budget: the other half is the rest of the run's, and
	// the margin lets columns fail with its own message (ask for fewer)
	// before the heap watchdog sees the growth.
	cb := colBuilder{b: b, mode: mode, geo: geo, axes: make([][]byte, dims), budget: b.lim.MemoryBytes / 2}
	if b.lim.MemoryBytes <= 0 {
		cb.budget = math.MaxInt64
	}
	if mode == colBytes {
		cb.off = binary.NativeEndian.AppendUint32(nil, 0)
	}
	// The points the iterator already holds (a program may mix next and
	// columns), then straight from the cursor: no copy per point, since
	// each is packed into the columns before the cursor's next Next.
	for cb.n < maxN && it.pos < len(it.buf) {
		cb.add(it.buf[it.pos])
		it.pos++
	}
	for cb.n < maxN && !it.done {
		if it.left == 0 {
			it.finish()
			break
		}
		if it.cur == nil {
			it.cur = it.open()
			b.cursors = append(b.cursors, it.cur)
			it.first = false
		}
		p, ok := it.cur.Next()
		if !ok {
			it.finish()
			break
		}
		// One host call per batch, as pull counts them; the first batch
		// is the call that made the iterator. The count also checks that
		// the run is still live, so a timeout ends a long loop here.
		if it.sinceCall++; it.sinceCall > batch {
			b.call(name)
			it.sinceCall = 1
		}
		cb.add(p)
		if it.left > 0 {
			it.left--
		}
	}
	return cb.value(r)
}

// finish marks the iterator exhausted and closes its cursor, turning a
// cursor error into the run's.
func (it *regionIter) finish() {
	it.done = true
	if it.cur == nil {
		return
	}
	it.cur.Close()
	if err := it.cur.Err(); err != nil {
		it.b.hostErr(it.name, err)
	}
}

type colMode uint8

const (
	colString colMode = iota
	colNumber
	colBytes
)

// stringCost is what one string of the "string" mode costs beyond its
// bytes and its slot in the builder's slice: its boxed header and its slot
// in the JavaScript array.
const stringCost = 32

// colBuilder packs points into columns, keeping what it holds within the
// run's memory budget: the capacity of every slice it grows (checked
// before growing, with the old array still alive during the copy) plus
// the strings it made.
type colBuilder struct {
	b      *binding
	mode   colMode
	geo    bool
	n      int
	axes   [][]byte // native-endian int32s, or float64 degrees when geo
	strs   []any
	nums   []byte // native-endian float64s
	bytes  []byte
	off    []byte // native-endian uint32 offsets into bytes
	held   int64  // bytes of the slices' capacity and the strings
	budget int64
}

// reserve fails the run if holding more bytes on top of what the builder
// holds would pass the budget.
func (cb *colBuilder) reserve(more int64) {
	if cb.held+more > cb.budget {
		cb.b.fail(vm.KindMemoryLimit, "region.columns: %d points need more than %d bytes, half the run's memory limit; ask for fewer at a time with {max: n}", cb.n+1, cb.budget)
	}
}

// room makes room for extra more bytes in *p, growing it by half its
// size at a time, and counts the growth.
func (cb *colBuilder) room(p *[]byte, extra int) {
	if len(*p)+extra <= cap(*p) {
		return
	}
	want := max(len(*p)+extra, cap(*p)+cap(*p)/2, 64)
	cb.reserve(int64(want))
	q := slices.Grow((*p)[:len(*p):len(*p)], want-len(*p))
	cb.held += int64(cap(q) - cap(*p))
	*p = q
}

func (cb *colBuilder) add(p vm.Point) {
	for i, x := range p.Coord {
		if cb.geo {
			cb.room(&cb.axes[i], 8)
			cb.axes[i] = binary.NativeEndian.AppendUint64(cb.axes[i], math.Float64bits(float64(x)/geoScale))
		} else {
			cb.room(&cb.axes[i], 4)
			cb.axes[i] = binary.NativeEndian.AppendUint32(cb.axes[i], uint32(x))
		}
	}
	switch cb.mode {
	case colString:
		cost := int64(len(p.Value)) + stringCost
		if !ascii(p.Value) {
			cost += 2 * int64(len(p.Value)) // goja holds it as UTF-16
		}
		if len(cb.strs) == cap(cb.strs) {
			old := cap(cb.strs)
			want := max(old+old/2, 64)
			cb.reserve(16 * int64(want))
			cb.strs = slices.Grow(cb.strs, want-len(cb.strs))
			cb.held += 16 * int64(cap(cb.strs)-old)
		}
		cb.reserve(cost)
		cb.held += cost
		cb.strs = append(cb.strs, string(p.Value))
	case colNumber:
		cb.room(&cb.nums, 8)
		cb.nums = binary.NativeEndian.AppendUint64(cb.nums, math.Float64bits(cb.b.number(p.Value)))
	case colBytes:
		cb.room(&cb.bytes, len(p.Value))
		cb.room(&cb.off, 4)
		cb.bytes = append(cb.bytes, p.Value...)
		cb.off = binary.NativeEndian.AppendUint32(cb.off, uint32(len(cb.bytes)))
	}
	cb.n++
}

func ascii(p []byte) bool {
	for _, c := range p {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// value makes the JavaScript result object.
func (cb *colBuilder) value(r *goja.Runtime) goja.Value {
	b := cb.b
	coordCtor := b.i32
	if cb.geo {
		coordCtor = b.f64
	}
	axes := make([]any, len(cb.axes))
	for i, a := range cb.axes {
		axes[i] = b.typed(coordCtor, a)
	}
	res := r.NewObject()
	res.Set("n", cb.n)
	res.Set("c", r.NewArray(axes...))
	switch cb.mode {
	case colString:
		res.Set("v", r.NewArray(cb.strs...))
	case colNumber:
		res.Set("v", b.typed(b.f64, cb.nums))
	case colBytes:
		res.Set("v", b.typed(b.u8, cb.bytes))
		res.Set("off", b.typed(b.u32, cb.off))
	}
	return res
}

// typed makes a typed array of the original constructor ctor on p, which
// it then owns: no copy.
func (b *binding) typed(ctor goja.Value, p []byte) goja.Value {
	if p == nil {
		p = []byte{}
	}
	v, err := b.r.New(ctor, b.r.ToValue(b.r.NewArrayBuffer(p)))
	if err != nil {
		panic(err)
	}
	return v
}

// number is Number(string(p)), JavaScript's conversion of a string to a
// number: a plain decimal the fast way (strconv rounds a decimal as
// JavaScript does), anything else (spaces, hex, Infinity, garbage -> NaN)
// through goja's own conversion.
func (b *binding) number(p []byte) float64 {
	if plainDecimal(p) {
		if f, err := strconv.ParseFloat(string(p), 64); err == nil || isRange(err) {
			return f
		}
	}
	return b.r.ToValue(string(p)).ToFloat()
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// plainDecimal reports whether p is [+-]digits[.digits][(e|E)[+-]digits]
// with at least one digit in the mantissa: a StrDecimalLiteral JavaScript
// and strconv.ParseFloat read the same way. Underscores, hex, inf and nan,
// which ParseFloat accepts and Number does not (or reads otherwise), fail.
func plainDecimal(p []byte) bool {
	i := 0
	if i < len(p) && (p[i] == '+' || p[i] == '-') {
		i++
	}
	digits := 0
	for i < len(p) && p[i] >= '0' && p[i] <= '9' {
		i++
		digits++
	}
	if i < len(p) && p[i] == '.' {
		i++
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(p) && (p[i] == 'e' || p[i] == 'E') {
		i++
		if i < len(p) && (p[i] == '+' || p[i] == '-') {
			i++
		}
		exp := 0
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(p)
}
