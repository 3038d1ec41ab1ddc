package js

import (
	"context"
	"sync"

	"github.com/dop251/goja"

	"github.com/cubelinux/cube/vm"
)

// Completion is a script's completion value, for a REPL to display:
// Output holds it as a vm.Result would (strings as UTF-8, byte arrays as
// bytes, anything else as JSON), and Type says what it was.
type Completion struct {
	vm.Result
	// Type is the value's JavaScript type: "undefined", "null", "string",
	// "number", "boolean", "bigint", "symbol", "function", "bytes"
	// (Uint8Array or ArrayBuffer), "lazy" (a region iterator or a graph
	// query, shown by the calls that read it) or "object" (arrays
	// included).
	Type string
	// JSON reports that Output is JSON text (numbers, booleans, null,
	// objects and arrays).
	JSON bool
}

// Eval runs an ad-hoc script in a fresh runtime; its completion value is
// the output. cube.args holds args. Nothing of the script survives it.
func (s *Sandbox) Eval(ctx context.Context, host vm.Host, script string, args []byte, lim vm.Limits) (vm.Result, error) {
	c, err := s.EvalCompletion(ctx, host, script, args, lim)
	return c.Result, err
}

// EvalCompletion is Eval, also reporting the completion value's type.
func (s *Sandbox) EvalCompletion(ctx context.Context, host vm.Host, script string, args []byte, lim vm.Limits) (Completion, error) {
	if s.closed.Load() {
		return Completion{}, ErrClosed
	}
	b, err := newBinding(s.boot, s.maxStack, s.rxLimit, s.wd, false)
	if err != nil {
		return Completion{}, &vm.Error{Kind: vm.KindTrap, Msg: "cannot build a runtime: " + err.Error(), Err: err}
	}
	return b.eval(ctx, host, script, args, lim)
}

// eval compiles and runs script on b's runtime.
func (b *binding) eval(ctx context.Context, host vm.Host, script string, args []byte, lim vm.Limits) (c Completion, err error) {
	prg, err := compileScript("eval.js", script)
	if err != nil {
		return Completion{}, err
	}
	end := b.begin(ctx, host, args, lim)
	defer func() {
		if x := recover(); x != nil {
			c, err = Completion{}, &vm.Error{Kind: vm.KindTrap, Msg: "internal error in the JavaScript runtime"}
		}
		end()
	}()
	v, err := b.r.RunProgram(prg)
	if err != nil {
		return Completion{}, toError(err, b.failed(), 0)
	}
	c.Type = typeOf(v)
	if c.Type == "function" {
		name := ""
		if o, ok := v.(*goja.Object); ok {
			if n := o.Get("name"); n != nil {
				name = n.String()
			}
		}
		c.Output = []byte("[Function: " + name + "]")
	} else if c.Type == "symbol" {
		c.Output = []byte(v.String())
	} else {
		out, isJSON, err := b.encodeShown(v)
		if err != nil {
			return Completion{}, err
		}
		if b.lim.OutputBytes > 0 && int64(len(out)) > b.lim.OutputBytes {
			return Completion{}, &vm.Error{Kind: vm.KindOutputLimit, Msg: "the completion value is larger than the output limit"}
		}
		c.Output, c.JSON = out, isJSON
	}
	if f := b.failed(); f != nil {
		return Completion{}, f
	}
	c.Logs, c.HostCalls, c.Writes = b.logs, b.calls, b.writes
	return c, nil
}

func typeOf(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	case goja.IsString(v):
		return "string"
	case goja.IsNumber(v):
		return "number"
	case goja.IsBigInt(v):
		return "bigint"
	}
	if _, ok := v.(*goja.Symbol); ok {
		return "symbol"
	}
	if o, ok := v.(*goja.Object); ok {
		if _, ok := goja.AssertFunction(o); ok {
			return "function"
		}
		switch exportOf(o).(type) {
		case goja.ArrayBuffer, []byte:
			return "bytes"
		case *regionIter, *gizmo:
			return "lazy"
		}
		return "object"
	}
	if _, ok := v.Export().(bool); ok {
		return "boolean"
	}
	return "object"
}

// Session is a JavaScript scope that lives across evaluations: a function
// or variable defined by one Eval is there for the next. The REPL and the
// daemon's per-connection EVAL use one each. Calls are serialized.
//
// A session is its owner's own: unlike a registered program's runs, its
// built-ins are not frozen, so a script may change them for the
// session's later scripts (and only for them).
type Session struct {
	sb  *Sandbox
	lim vm.Limits

	mu     sync.Mutex
	b      *binding
	err    error
	closed bool
}

// NewSession returns a session whose every Eval runs under lim.
func (s *Sandbox) NewSession(lim vm.Limits) *Session {
	ss := &Session{sb: s, lim: lim}
	ss.b, ss.err = newBinding(s.boot, s.maxStack, s.rxLimit, s.wd, false)
	return ss
}

// Eval runs script in the session; its completion value is the output.
func (s *Session) Eval(ctx context.Context, host vm.Host, script string) (vm.Result, error) {
	c, err := s.EvalCompletion(ctx, host, script)
	return c.Result, err
}

// EvalCompletion is Eval, also reporting the completion value's type.
func (s *Session) EvalCompletion(ctx context.Context, host vm.Host, script string) (Completion, error) {
	return s.EvalArgs(ctx, host, script, nil)
}

// EvalArgs is EvalCompletion with cube.args holding args for this call
// only (the session's later scripts see their own).
func (s *Session) EvalArgs(ctx context.Context, host vm.Host, script string, args []byte) (Completion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.sb.closed.Load() {
		return Completion{}, ErrClosed
	}
	if s.err != nil {
		return Completion{}, &vm.Error{Kind: vm.KindTrap, Msg: "cannot build a runtime: " + s.err.Error(), Err: s.err}
	}
	return s.b.eval(ctx, host, script, args, s.lim)
}

// EvalWith is EvalArgs under lim for this call instead of the session's
// limits (an EVAL that asks for a longer time limit). lim is used as
// given: merge it with the session's first.
func (s *Session) EvalWith(ctx context.Context, host vm.Host, script string, args []byte, lim vm.Limits) (Completion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.sb.closed.Load() {
		return Completion{}, ErrClosed
	}
	if s.err != nil {
		return Completion{}, &vm.Error{Kind: vm.KindTrap, Msg: "cannot build a runtime: " + s.err.Error(), Err: s.err}
	}
	return s.b.eval(ctx, host, script, args, lim)
}

// Close ends the session and releases its runtime.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed, s.b = true, nil
}
