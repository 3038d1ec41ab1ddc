package js

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dop251/goja"

	"github.com/cubelinux/cube/vm"
)

// newBinding builds a runtime with the cube global and the size-checked
// built-ins. frozen runtimes (pooled for registered programs) are locked
// down: every reachable object frozen, the global object included.
func newBinding(boot *goja.Program, maxStack int, rxLimit time.Duration, wd *watchdog, frozen bool) (*binding, error) {
	r := goja.New()
	r.SetMaxCallStackSize(maxStack)
	b := &binding{r: r, rxLimit: rxLimit, wd: wd, joining: map[*goja.Object]bool{}}
	b.maxUnits = math.MaxInt64
	json := r.Get("JSON").ToObject(r)
	b.stringify, _ = goja.AssertFunction(json.Get("stringify"))
	b.parse, _ = goja.AssertFunction(json.Get("parse"))
	b.u8 = r.Get("Uint8Array")
	b.u32, b.i32, b.f64 = r.Get("Uint32Array"), r.Get("Int32Array"), r.Get("Float64Array")
	b.installRegionProto()
	b.installGizmoProto()
	if err := r.Set("cube", b.installCube()); err != nil {
		return nil, err
	}
	for _, name := range []string{"require", "console", "print", "load"} {
		if v := r.Get(name); v != nil && !goja.IsUndefined(v) {
			return nil, fmt.Errorf("js: unexpected global %s", name)
		}
	}
	if err := b.installGuards(); err != nil {
		return nil, err
	}
	fv, err := r.RunProgram(boot)
	if err != nil {
		return nil, err
	}
	fn, _ := goja.AssertFunction(fv)
	if _, err := fn(goja.Undefined(), r.ToValue(frozen), b.native("checkAlloc", 2, b.checkAlloc)); err != nil {
		return nil, fmt.Errorf("js: lockdown: %w", err)
	}
	return b, nil
}

// checkAlloc is called by the wrapped ArrayBuffer and typed-array
// constructors with the number of bytes they are about to allocate.
func (b *binding) checkAlloc(call goja.FunctionCall) goja.Value {
	n := call.Argument(0).ToFloat()
	if n > float64(b.maxUnits)*2 {
		b.fail(vm.KindMemoryLimit, "%s of %.0f bytes exceeds the run's memory limit", call.Argument(1).String(), n)
	}
	return goja.Undefined()
}

// installGuards replaces the built-ins that can build a huge string or
// array in one step, out of reach of Interrupt, by versions that check the
// size first, and wraps RegExp.prototype.exec to turn a regexp2 match
// timeout (which goja reports as "no match") into a run failure.
func (b *binding) installGuards() error {
	r := b.r
	proto := func(ctor string) *goja.Object {
		return r.Get(ctor).ToObject(r).Get("prototype").ToObject(r)
	}
	sp, ap, rp := proto("String"), proto("Array"), proto("RegExp")
	orig := func(o *goja.Object, name string) goja.Callable {
		f, _ := goja.AssertFunction(o.Get(name))
		return f
	}
	set := func(o *goja.Object, name string, length int, f func(goja.FunctionCall) goja.Value) error {
		fv := r.ToValue(func(call goja.FunctionCall) goja.Value {
			defer b.guard(name)
			return f(call)
		}).ToObject(r)
		fv.DefineDataProperty("name", r.ToValue(name), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		fv.DefineDataProperty("length", r.ToValue(length), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		return o.DefineDataProperty(name, fv, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	strLen := func(v goja.Value) int64 {
		if goja.IsUndefined(v) || goja.IsNull(v) {
			b.throwType("String.prototype method called on null or undefined")
		}
		if s, ok := v.ToString().(goja.String); ok {
			return int64(s.Length())
		}
		return int64(len(v.String()))
	}
	tooBig := func(name string, units float64) {
		if units > float64(b.maxUnits) {
			b.fail(vm.KindMemoryLimit, "%s would build a string of %.0f characters, over the run's memory limit", name, units)
		}
	}
	repeat := orig(sp, "repeat")
	padStart, padEnd := orig(sp, "padStart"), orig(sp, "padEnd")
	fill := orig(ap, "fill")
	exec, test := orig(rp, "exec"), orig(rp, "test")
	errs := []error{
		set(sp, "repeat", 1, func(call goja.FunctionCall) goja.Value {
			n := call.Argument(0).ToFloat()
			if n > 0 && !math.IsInf(n, 1) {
				tooBig("String.prototype.repeat", float64(strLen(call.This))*math.Trunc(n))
			}
			return b.callOrig(repeat, call)
		}),
		set(sp, "padStart", 2, func(call goja.FunctionCall) goja.Value {
			tooBig("String.prototype.padStart", call.Argument(0).ToFloat())
			return b.callOrig(padStart, call)
		}),
		set(sp, "padEnd", 2, func(call goja.FunctionCall) goja.Value {
			tooBig("String.prototype.padEnd", call.Argument(0).ToFloat())
			return b.callOrig(padEnd, call)
		}),
		set(ap, "fill", 1, func(call goja.FunctionCall) goja.Value {
			o := call.This.ToObject(r)
			n := lengthOf(o)
			lo, hi := relIndex(call.Argument(1), n, 0), relIndex(call.Argument(2), n, n)
			if hi-lo > float64(b.maxUnits)/8 {
				b.fail(vm.KindMemoryLimit, "Array.prototype.fill of %.0f elements exceeds the run's memory limit", hi-lo)
			}
			return b.callOrig(fill, call)
		}),
		set(ap, "join", 1, b.join),
		set(rp, "exec", 1, func(call goja.FunctionCall) goja.Value {
			t := time.Now()
			v := b.callOrig(exec, call)
			b.checkRegexp(t, goja.IsNull(v))
			return v
		}),
		set(rp, "test", 1, func(call goja.FunctionCall) goja.Value {
			t := time.Now()
			v := b.callOrig(test, call)
			b.checkRegexp(t, !v.ToBoolean())
			return v
		}),
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkRegexp fails the run when a match that found nothing took as long
// as regexp2's match timeout: regexp2 gave up, and goja reports that as
// "no match", which would silently give the program a wrong answer.
func (b *binding) checkRegexp(start time.Time, noMatch bool) {
	if noMatch && b.rxLimit > 0 && time.Since(start) >= b.rxLimit {
		b.fail(vm.KindTimeout, "a regular expression match took longer than %v (catastrophic backtracking?)", b.rxLimit)
	}
}

// relIndex resolves a relative index argument of fill and slice.
func relIndex(v goja.Value, n, def float64) float64 {
	if goja.IsUndefined(v) {
		return def
	}
	x := v.ToFloat()
	if math.IsNaN(x) {
		return 0
	}
	x = math.Trunc(x)
	if x < 0 {
		return math.Max(n+x, 0)
	}
	return math.Min(x, n)
}

func (b *binding) callOrig(f goja.Callable, call goja.FunctionCall) goja.Value {
	v, err := f(call.This, call.Arguments...)
	if err != nil {
		panic(err)
	}
	return v
}

// join is Array.prototype.join with a running size check: joining a large
// array, or many references to one large string, would otherwise build
// the result in one uninterruptible step. Cycles join as "" (as in V8).
func (b *binding) join(call goja.FunctionCall) goja.Value {
	r := b.r
	o := call.This.ToObject(r)
	if b.joining[o] {
		return r.ToValue("")
	}
	b.joining[o] = true
	defer delete(b.joining, o)
	sep := goja.Value(r.ToValue(","))
	if a := call.Argument(0); !goja.IsUndefined(a) {
		sep = a.ToString()
	}
	sepS, _ := sep.(goja.String)
	n := lengthOf(o)
	sepLen := int64(0)
	if sepS != nil {
		sepLen = int64(sepS.Length())
	}
	if n > 1 && (n-1)*float64(sepLen) > float64(b.maxUnits) {
		b.fail(vm.KindMemoryLimit, "Array.prototype.join would build a string of at least %.0f characters, over the run's memory limit", (n-1)*float64(sepLen))
	}
	var sb goja.StringBuilder
	var size int64
	for i := int64(0); float64(i) < n; i++ {
		if i > 0 && sepS != nil {
			sb.WriteString(sepS)
		}
		e := o.Get(strconv.FormatInt(i, 10))
		if e == nil || goja.IsUndefined(e) || goja.IsNull(e) {
			continue
		}
		sv := e.ToString()
		s, ok := sv.(goja.String)
		var n int64
		if ok {
			n = int64(s.Length())
		} else {
			n = int64(len(sv.String())) // numbers and booleans: short
		}
		size += n + sepLen
		if size > b.maxUnits {
			b.fail(vm.KindMemoryLimit, "Array.prototype.join would build a string of more than %d characters, over the run's memory limit", b.maxUnits)
		}
		if ok {
			sb.WriteString(s)
		} else {
			sb.WriteUTF8String(sv.String())
		}
	}
	return sb.String()
}

// lockdownJS wraps the allocation-heavy constructors with size checks and,
// for pooled runtimes, freezes everything reachable (see doc.go).
const lockdownJS = `(function (frozen, checkAlloc) {
"use strict";
const getProto = Object.getPrototypeOf, ownKeys = Reflect.ownKeys,
	gopd = Object.getOwnPropertyDescriptor, defProp = Object.defineProperty,
	freeze = Object.freeze, construct = Reflect.construct, apply = Reflect.apply;

const sized = { ArrayBuffer: 1, SharedArrayBuffer: 1, Int8Array: 1, Uint8Array: 1, Uint8ClampedArray: 1,
	Int16Array: 2, Uint16Array: 2, Int32Array: 4, Uint32Array: 4, Float32Array: 4,
	Float64Array: 8, BigInt64Array: 8, BigUint64Array: 8 };
const OrigArrayBuffer = ArrayBuffer;
for (const name of ownKeys(sized)) {
	const C = globalThis[name];
	if (typeof C !== "function") continue;
	const unit = sized[name];
	const P = new Proxy(C, {
		construct(t, args, nt) {
			const a = args[0];
			if (typeof a === "number") checkAlloc(a * unit, name);
			else if (a !== null && typeof a === "object" && typeof a.length === "number" && !(a instanceof OrigArrayBuffer)) checkAlloc(a.length * unit, name);
			return construct(t, args, nt === P ? t : nt);
		},
	});
	defProp(globalThis, name, { value: P, writable: true, enumerable: false, configurable: true });
}
if (!frozen) return;

// The override mistake: let obj.toString = f define an own property
// although Object.prototype.toString is frozen.
function enable(obj, name) {
	const d = gopd(obj, name);
	if (!d || !("value" in d) || !d.configurable) return;
	const value = d.value;
	defProp(obj, name, {
		get: function () { return value; },
		set: function (v) {
			if (this === obj) throw new TypeError("Cannot assign to read only property '" + String(name) + "' of a frozen built-in");
			defProp(this, name, { value: v, writable: true, enumerable: true, configurable: true });
		},
		enumerable: d.enumerable, configurable: false,
	});
}
const protos = [Object.prototype, Function.prototype, Array.prototype, String.prototype, Number.prototype,
	Boolean.prototype, Symbol.prototype, Date.prototype, RegExp.prototype, Promise.prototype, Map.prototype,
	Set.prototype, Error.prototype, TypeError.prototype, RangeError.prototype, SyntaxError.prototype,
	ReferenceError.prototype, EvalError.prototype, URIError.prototype];
for (const p of protos) {
	for (const n of ["constructor", "toString", "valueOf", "toLocaleString", "name", "message"]) enable(p, n);
}

const roots = [globalThis,
	getProto(function* () {}), getProto(async function () {}), getProto(async () => {}),
	getProto([][Symbol.iterator]()), getProto(new Map()[Symbol.iterator]()),
	getProto(new Set()[Symbol.iterator]()), getProto(""[Symbol.iterator]()),
	getProto(/a/[Symbol.matchAll]("")), getProto((function () { return arguments; })())];
try { roots.push(getProto(eval("(async function* () {})"))); } catch (e) {}
const seen = new Set(), stack = roots.slice(), all = [];
while (stack.length > 0) {
	const o = stack.pop();
	if (o === null || o === undefined || (typeof o !== "object" && typeof o !== "function") || seen.has(o)) continue;
	seen.add(o);
	all.push(o);
	stack.push(getProto(o));
	const keys = ownKeys(o);
	for (let i = 0; i < keys.length; i++) {
		const d = gopd(o, keys[i]);
		if (d.get !== undefined || d.set !== undefined) { stack.push(d.get); stack.push(d.set); }
		else { const v = d.value; if (v !== null && (typeof v === "object" || typeof v === "function")) stack.push(v); }
	}
}
for (let i = 0; i < all.length; i++) freeze(all[i]);
})`

// lengthOf is an array-like's length property as a number: 0 when it has
// none (a Number or Boolean receiver passed with call or apply).
func lengthOf(o *goja.Object) float64 {
	v := o.Get("length")
	if v == nil {
		return 0
	}
	n := v.ToFloat()
	if math.IsNaN(n) || n < 0 {
		return 0
	}
	return math.Trunc(n)
}
