package js

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/cubelinux/cube/vm"
)

// binding is one goja runtime's connection to the host: the cube object's
// functions close over it, and Run points it at the current run's host,
// limits and counters. A runtime serves one run at a time.
type binding struct {
	r       *goja.Runtime
	rxLimit time.Duration
	wd      *watchdog

	// Per run.
	ctx      context.Context
	host     vm.Host
	lim      vm.Limits
	maxUnits int64 // longest string (UTF-16 units) or array a built-in may build
	args     []byte
	argsVal  goja.Value
	calls    int64
	writes   int64
	logs     []string
	logBytes int
	cursors  []interface{ Close() }
	joining  map[*goja.Object]bool

	// failure is the first error that ended the run. The timer, the
	// context and the watchdog set it from other goroutines; mu makes
	// their check of token and the interrupt one step, so a late timer
	// never interrupts the next run.
	failure atomic.Pointer[vm.Error]
	mu      sync.Mutex
	token   uint64 // non-zero while a run is active
	next    uint64

	stringify goja.Callable
	// showReplacer is encodeShown's JSON.stringify replacer, made once.
	showReplacer goja.Value
	parse        goja.Callable
	u8           goja.Value // the original Uint8Array constructor
	u32, i32     goja.Value // ... Uint32Array, Int32Array
	f64          goja.Value // ... Float64Array
	regionPro    *goja.Object
	gizmoPro     *goja.Object
}

// idx are the property names of array indexes 0–7, so reading a
// coordinate allocates no strings.
var idx = [...]string{"0", "1", "2", "3", "4", "5", "6", "7"}

// begin points the binding at a run and arms its timeout. The returned
// function disarms it; it reports whether the runtime may be reused.
func (b *binding) begin(ctx context.Context, host vm.Host, args []byte, lim vm.Limits) (end func() bool) {
	lim = lim.WithDefaults()
	b.ctx, b.host, b.lim, b.args = ctx, host, lim, args
	b.argsVal, b.calls, b.writes, b.logs, b.logBytes = nil, 0, 0, nil, 0
	b.maxUnits = math.MaxInt64
	if lim.MemoryBytes > 0 {
		b.maxUnits = lim.MemoryBytes / 2
	}
	b.r.ClearInterrupt()
	b.mu.Lock()
	b.next++
	tok := b.next
	b.token = tok
	b.failure.Store(nil)
	b.mu.Unlock()

	var timer *time.Timer
	if lim.Timeout > 0 {
		timer = time.AfterFunc(lim.Timeout, func() {
			b.failAsync(tok, &vm.Error{Kind: vm.KindTimeout, Msg: fmt.Sprintf("the run took longer than %v", lim.Timeout), Err: context.DeadlineExceeded})
		})
	}
	var stopCtx func() bool
	if ctx.Done() != nil {
		stopCtx = context.AfterFunc(ctx, func() {
			kind, msg := vm.KindAborted, "the caller cancelled the run"
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				kind, msg = vm.KindTimeout, "the caller's deadline passed"
			}
			b.failAsync(tok, &vm.Error{Kind: kind, Msg: msg, Err: ctx.Err()})
		})
	}
	var wdStop func()
	if b.wd != nil && lim.MemoryBytes > 0 {
		wdStop = b.wd.watch(lim.MemoryBytes, func(e *vm.Error) { b.failAsync(tok, e) })
	}
	return func() bool {
		if timer != nil {
			timer.Stop()
		}
		if stopCtx != nil {
			stopCtx()
		}
		if wdStop != nil {
			wdStop()
		}
		for _, c := range b.cursors {
			c.Close()
		}
		b.cursors = b.cursors[:0]
		clear(b.joining)
		b.mu.Lock()
		b.token = 0
		clean := b.failure.Load() == nil
		b.mu.Unlock()
		b.r.ClearInterrupt()
		b.ctx, b.host, b.args, b.argsVal = nil, nil, nil, nil
		return clean
	}
}

// failAsync interrupts the run identified by tok, if it is still the
// current one, with e.
func (b *binding) failAsync(tok uint64, e *vm.Error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.token != tok || !b.failure.CompareAndSwap(nil, e) {
		return
	}
	b.r.Interrupt(e)
}

// fail ends the current run with a typed error that JavaScript cannot
// catch: the runtime is interrupted (a catch block is interrupted before
// its first instruction), and the calling host function throws so that
// it does not return.
func (b *binding) fail(kind vm.ErrorKind, format string, args ...any) {
	e := &vm.Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
	if b.failure.CompareAndSwap(nil, e) {
		b.r.Interrupt(e)
	} else {
		e = b.failure.Load()
	}
	panic(b.r.NewGoError(e))
}

// failed reports the failure recorded for the current run, if any.
func (b *binding) failed() *vm.Error { return b.failure.Load() }

// noHost reports that the run has no namespace to call: no host, or one
// of no dimensions (a worker's stand-in when its parent has none).
func (b *binding) noHost() bool { return b.host == nil || b.host.Dims() == 0 }

// call counts one host call against the limit and checks that the run is
// still live.
func (b *binding) call(name string) {
	if b.noHost() {
		b.throwType("%s: no host: cube is only usable while a program runs", name)
	}
	if f := b.failure.Load(); f != nil {
		// Built-ins that loop in Go (forEach calling cube.put) are not
		// interrupted; stop them here.
		b.fail(f.Kind, "%s", f.Msg)
	}
	b.calls++
	if b.lim.HostCalls > 0 && b.calls > b.lim.HostCalls {
		b.fail(vm.KindHostCallLimit, "%s: more than %d host calls", name, b.lim.HostCalls)
	}
}

// write counts one write: read-only runs fail, the write limit applies.
func (b *binding) write(name string) {
	b.call(name)
	if b.lim.ReadOnly {
		b.fail(vm.KindReadOnly, "%s: this program runs read-only", name)
	}
	b.writes++
	if b.lim.Writes > 0 && b.writes > b.lim.Writes {
		b.fail(vm.KindWriteLimit, "%s: more than %d writes", name, b.lim.Writes)
	}
}

// hostErr turns an error from the host into the run's failure (read-only,
// cancellation) or a JavaScript Error the program may catch.
func (b *binding) hostErr(name string, err error) {
	switch {
	case errors.Is(err, vm.ErrReadOnly):
		b.fail(vm.KindReadOnly, "%s: this program runs read-only", name)
	case errors.Is(err, context.DeadlineExceeded):
		b.fail(vm.KindTimeout, "%s: %v", name, err)
	case errors.Is(err, context.Canceled):
		b.fail(vm.KindAborted, "%s: %v", name, err)
	}
	var ve *vm.Error
	if errors.As(err, &ve) && ve.Kind != vm.KindGuest {
		b.fail(ve.Kind, "%s: %s", name, ve.Msg)
	}
	panic(b.r.NewGoError(fmt.Errorf("%s: %w", name, err)))
}

// native makes a host function that JavaScript sees as name: its "name"
// property, its "function name() { [native code] }" source, the REPL's
// "[Function: name]" and its frames in error stacks. Without it goja names
// a Go closure after its Go symbol (github.com/...(*binding).installCube.func27),
// which means nothing to a person. The function is guarded: a Go panic
// in f ends the run as a trap naming name.
func (b *binding) native(name string, length int, f func(goja.FunctionCall) goja.Value) *goja.Object {
	fv := b.r.ToValue(func(call goja.FunctionCall) goja.Value {
		defer b.guard(name)
		return f(call)
	}).ToObject(b.r)
	fv.DefineDataProperty("name", b.r.ToValue(name), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	fv.DefineDataProperty("length", b.r.ToValue(length), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	return fv
}

func (b *binding) throwType(format string, args ...any) {
	panic(b.r.NewTypeError(fmt.Sprintf(format, args...)))
}

// guard recovers a Go panic in a host function that is not a JavaScript
// throw and ends the run with KindTrap instead of crashing the process.
func (b *binding) guard(name string) {
	x := recover()
	if x == nil {
		return
	}
	switch x.(type) {
	case goja.Value, *goja.Exception, *goja.InterruptedError, *goja.StackOverflowError:
		panic(x)
	}
	b.fail(vm.KindTrap, "%s: internal error in the host: %v", name, x)
}

// coord reads a coordinate: an array of Dims() integers within int32,
// or in a geo namespace [longitude, latitude] in degrees (geoCoord).
func (b *binding) coord(name string, v goja.Value) []int32 {
	if b.host.Geo() {
		return b.geoCoord(name, v)
	}
	dims := b.host.Dims()
	o, ok := v.(*goja.Object)
	if !ok || o.ClassName() != "Array" {
		b.throwType("%s: a coordinate must be an array of %d integers, got %s", name, dims, describe(v))
	}
	n := o.Get("length").ToInteger()
	if n != int64(dims) {
		b.throwType("%s: a coordinate must have %d elements (the namespace's dims), got %d", name, dims, n)
	}
	c := make([]int32, dims)
	for i := range c {
		e := o.Get(idx[i])
		if !goja.IsNumber(e) {
			b.throwType("%s: coordinate element %d must be an integer, got %s", name, i, describe(e))
		}
		f := e.ToFloat()
		if f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
			b.throwType("%s: coordinate element %d must be an integer within int32, got %v", name, i, f)
		}
		c[i] = int32(f)
	}
	return c
}

func describe(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	case goja.IsString(v):
		return "a string"
	}
	if o, ok := v.(*goja.Object); ok {
		return "a " + o.ClassName()
	}
	return v.String()
}

// coordValue makes a JavaScript array of c: integers, or in a geo
// namespace degrees.
func (b *binding) coordValue(c []int32) *goja.Object {
	vals := make([]any, len(c))
	for i, x := range c {
		vals[i] = int64(x)
	}
	if b.host.Geo() {
		for i, x := range c {
			// One correctly rounded division: the double nearest to the
			// decimal, which JavaScript prints as written (2.3522).
			vals[i] = float64(x) / geoScale
		}
	}
	return b.r.NewArray(vals...)
}

// geoScale is the units of a geo namespace in one degree (vm.Host.Geo).
const geoScale = 1e7

// geoCoord reads [longitude, latitude] in degrees into units of 1e-7
// degree. A number with at most 7 decimals is exact: its double is within
// 1e-14 of the decimal, far inside the half unit that rounding forgives.
func (b *binding) geoCoord(name string, v goja.Value) []int32 {
	o, ok := v.(*goja.Object)
	if !ok || o.ClassName() != "Array" || o.Get("length").ToInteger() != 2 {
		b.throwType("%s: a coordinate in a geographic namespace is [longitude, latitude] in degrees, e.g. [2.3522, 48.8566], got %s", name, describe(v))
	}
	c := make([]int32, 2)
	for i, axis := range [2]struct {
		name string
		max  float64
	}{{"longitude", 180}, {"latitude", 90}} {
		e := o.Get(idx[i])
		if !goja.IsNumber(e) {
			b.throwType("%s: the %s must be a number of degrees, got %s", name, axis.name, describe(e))
		}
		f := e.ToFloat()
		if !(f >= -axis.max && f <= axis.max) {
			b.throwType("%s: the %s must be within -%v..%v degrees ([longitude, latitude], longitude first), got %v", name, axis.name, axis.max, axis.max, f)
		}
		c[i] = int32(math.Round(f * geoScale))
	}
	return c
}

// bytesIn reads a value argument: a string (as UTF-8), a Uint8Array (or
// other view) or an ArrayBuffer.
func (b *binding) bytesIn(name string, v goja.Value) []byte {
	if goja.IsString(v) {
		return []byte(v.String())
	}
	if o, ok := v.(*goja.Object); ok {
		switch x := exportOf(o).(type) {
		case goja.ArrayBuffer:
			return append([]byte(nil), x.Bytes()...)
		case []byte:
			return append([]byte(nil), x...)
		}
	}
	b.throwType("%s: a value must be a string, Uint8Array or ArrayBuffer, got %s (use putJSON for objects)", name, describe(v))
	return nil
}

// bytesOut makes a Uint8Array holding a copy of p.
func (b *binding) bytesOut(p []byte) goja.Value {
	buf := b.r.NewArrayBuffer(append([]byte(nil), p...))
	u8, err := b.r.New(b.u8, b.r.ToValue(buf))
	if err != nil {
		panic(err)
	}
	return u8
}

// parseJSON parses p with the runtime's JSON.parse (captured before any
// program ran).
func (b *binding) parseJSON(name string, p []byte) goja.Value {
	v, err := b.parse(goja.Undefined(), b.r.ToValue(string(p)))
	if err != nil {
		// The exception's message only: err.Error() appends goja's stack,
		// frames of host functions included.
		msg := err.Error()
		if ex, ok := err.(*goja.Exception); ok && ex.Value() != nil {
			msg = ex.Value().String()
		}
		panic(b.r.NewTypeError(name + ": the stored value is not JSON (" + msg + "); read it with cube.get or cube.getBytes"))
	}
	return v
}

// toJSON encodes v with the original JSON.stringify.
func (b *binding) toJSON(name string, v goja.Value) (string, bool) {
	s, err := b.stringify(goja.Undefined(), v)
	if err != nil {
		panic(err)
	}
	if goja.IsUndefined(s) {
		return "", false
	}
	return s.String(), true
}

// opt reads an optional property of an options object.
func opt(o *goja.Object, name string) goja.Value {
	if o == nil {
		return nil
	}
	v := o.Get(name)
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	return v
}

func (b *binding) optObject(name string, v goja.Value) *goja.Object {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	o, ok := v.(*goja.Object)
	if !ok {
		b.throwType("%s: options must be an object, got %s", name, describe(v))
	}
	return o
}

func (b *binding) optInt(name string, o *goja.Object, key string, def int) int {
	v := opt(o, key)
	if v == nil {
		return def
	}
	f := v.ToFloat()
	if f != math.Trunc(f) || f < 0 || f > math.MaxInt32 {
		b.throwType("%s: option %s must be a non-negative integer, got %s", name, key, v.String())
	}
	return int(f)
}

func (b *binding) optDir(name string, o *goja.Object, def vm.Direction) vm.Direction {
	v := opt(o, "dir")
	if v == nil {
		return def
	}
	return b.dir(name, v)
}

func (b *binding) dir(name string, v goja.Value) vm.Direction {
	switch v.String() {
	case "out":
		return vm.Out
	case "in":
		return vm.In
	case "both":
		return vm.Both
	}
	b.throwType("%s: dir must be \"out\", \"in\" or \"both\", got %s", name, strconv.Quote(v.String()))
	return 0
}

var (
	typeArrayBuffer = reflect.TypeOf(goja.ArrayBuffer{})
	typeBytes       = reflect.TypeOf([]byte(nil))
	typeGizmo       = reflect.TypeOf((*gizmo)(nil))
	typeRegionIter  = reflect.TypeOf((*regionIter)(nil))
)

// exportOf is o's Go value when o is one of the kinds cube's built-ins
// take from JavaScript (an ArrayBuffer, a Uint8Array, a graph query, a
// region iterator), and nil for anything else. It never exports another
// object: Export walks all of a plain object's properties in Go, calling
// its getters (cube's own throw outside a run) where no time limit can
// interrupt the walk.
func exportOf(o *goja.Object) any {
	switch o.ExportType() {
	case typeArrayBuffer, typeBytes, typeGizmo, typeRegionIter:
		return o.Export()
	}
	return nil
}
