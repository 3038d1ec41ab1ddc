package js

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"

	"github.com/cubelinux/cube/vm"
)

// output turns a run's return value into bytes: strings as UTF-8, byte
// arrays as they are, undefined as nothing, anything else as JSON.
func (b *binding) output(v goja.Value) ([]byte, error) {
	out, _, err := b.encode(v)
	if err != nil {
		return nil, err
	}
	if b.lim.OutputBytes > 0 && int64(len(out)) > b.lim.OutputBytes {
		return nil, &vm.Error{Kind: vm.KindOutputLimit, Msg: "the output is larger than the run's output limit"}
	}
	return out, nil
}

// encode is output without the limit; isJSON reports that the bytes are
// JSON (for pretty printing).
func (b *binding) encode(v goja.Value) (out []byte, isJSON bool, err error) {
	if v == nil || goja.IsUndefined(v) {
		return nil, false, nil
	}
	if goja.IsString(v) {
		if s, ok := v.(goja.String); ok && b.lim.OutputBytes > 0 && int64(s.Length()) > b.lim.OutputBytes {
			return nil, false, &vm.Error{Kind: vm.KindOutputLimit, Msg: "the output is larger than the run's output limit"}
		}
		return []byte(v.String()), false, nil
	}
	if o, ok := v.(*goja.Object); ok {
		switch x := exportOf(o).(type) {
		case goja.ArrayBuffer:
			return append([]byte(nil), x.Bytes()...), false, nil
		case []byte:
			return append([]byte(nil), x...), false, nil
		}
	}
	s, err := b.stringify(goja.Undefined(), v)
	if err != nil {
		return nil, false, toError(err, b.failed(), 0)
	}
	if goja.IsUndefined(s) {
		return nil, false, nil
	}
	return []byte(s.String()), true, nil
}

// toError maps what goja returned to a *vm.Error. failure, if set, is the
// reason the binding interrupted the run, and wins. shift is the length of
// the wrapper prefix on line 1.
func toError(err error, failure *vm.Error, shift int) *vm.Error {
	var e *vm.Error
	var ie *goja.InterruptedError
	var so *goja.StackOverflowError
	var ex *goja.Exception
	switch {
	case failure != nil:
		e = &vm.Error{Kind: failure.Kind, Msg: failure.Msg, Err: failure.Err}
	case errors.As(err, &ie):
		if f, ok := ie.Value().(*vm.Error); ok {
			e = &vm.Error{Kind: f.Kind, Msg: f.Msg, Err: f.Err}
		} else {
			e = &vm.Error{Kind: vm.KindTimeout, Msg: "interrupted", Err: err}
		}
	case errors.As(err, &so):
		e = &vm.Error{Kind: vm.KindTrap, Msg: "maximum call stack size exceeded (deep or infinite recursion)", Err: err}
	case errors.As(err, &ex):
		if f, ok := errors.AsType[*vm.Error](ex.Unwrap()); ok && f.Kind != vm.KindGuest {
			e = &vm.Error{Kind: f.Kind, Msg: f.Msg, Err: f.Err}
		} else {
			msg := "uncaught exception"
			if ex.Value() != nil {
				msg = ex.Value().String()
			}
			e = &vm.Error{Kind: vm.KindGuest, Msg: msg, Err: err}
		}
	default:
		var ve *vm.Error
		if errors.As(err, &ve) {
			return ve
		}
		e = &vm.Error{Kind: vm.KindTrap, Msg: err.Error(), Err: err}
	}
	var stack []goja.StackFrame
	switch {
	case ie != nil:
		stack = ie.Stack()
	case so != nil:
		stack = so.Stack()
	case ex != nil:
		stack = ex.Stack()
	}
	for _, f := range stack {
		pos := f.Position()
		if pos.Line > 0 && !strings.HasPrefix(f.SrcName(), "lockdown") {
			e.Line, e.Column = pos.Line, pos.Column
			if pos.Line == 1 {
				e.Column = max(1, e.Column-shift)
			}
			break
		}
	}
	return e
}

// encodeShown is encode for a completion value a person reads (the REPL's,
// EVAL's): inside objects and arrays, what JSON has no form for is shown
// by a string that says what it is instead of vanishing — functions as
// "[Function: cube.get]", bytes as "Uint8Array(3) [1,2,3]", a region
// iterator or a graph query with the calls that read it. A program's
// output (Run) keeps encode's plain JSON.
func (b *binding) encodeShown(v goja.Value) (out []byte, isJSON bool, err error) {
	o, ok := v.(*goja.Object)
	if !ok {
		return b.encode(v)
	}
	switch exportOf(o).(type) {
	case goja.ArrayBuffer, []byte:
		return b.encode(v) // the bytes themselves
	case *regionIter, *gizmo:
		return []byte(b.shownAs(o)), false, nil
	}
	if b.showReplacer == nil {
		b.showReplacer = b.r.ToValue(func(call goja.FunctionCall) goja.Value {
			o, ok := call.Argument(1).(*goja.Object)
			if !ok {
				return call.Argument(1)
			}
			if s := b.shownAs(o); s != "" {
				return b.r.ToValue(s)
			}
			return o
		})
	}
	s, err := b.stringify(goja.Undefined(), v, b.showReplacer)
	if err != nil {
		return nil, false, toError(err, b.failed(), 0)
	}
	if goja.IsUndefined(s) {
		return nil, false, nil
	}
	return []byte(s.String()), true, nil
}

// shownAs is how encodeShown writes o, or "" to encode it as JSON does.
func (b *binding) shownAs(o *goja.Object) string {
	if _, ok := goja.AssertFunction(o); ok {
		name := ""
		if n := o.Get("name"); n != nil {
			name = n.String()
		}
		return "[Function: " + name + "]"
	}
	switch x := exportOf(o).(type) {
	case goja.ArrayBuffer:
		return showBytes("ArrayBuffer", x.Bytes())
	case []byte:
		return showBytes("Uint8Array", x)
	case *regionIter:
		return "[" + x.name + ": lazy; [...it], it.toArray() or it.count() reads it]"
	case *gizmo:
		return "[cube.V query: lazy; .all(), .count() or .first() runs it]"
	}
	return ""
}

// showBytes writes up to 16 bytes of b, as Node.js shows a typed array.
func showBytes(kind string, b []byte) string {
	var s strings.Builder
	fmt.Fprintf(&s, "%s(%d) [", kind, len(b))
	for i, c := range b {
		if i == 16 {
			s.WriteString(", ...")
			break
		}
		if i > 0 {
			s.WriteString(", ")
		}
		fmt.Fprint(&s, c)
	}
	s.WriteString("]")
	return s.String()
}
