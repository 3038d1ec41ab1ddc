package cube

import (
	"context"

	"github.com/cubelinux/cube/plugins"
	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/js"
)

// Result is what a successful run of a program produced, and what it
// cost.
type Result struct {
	Output    []byte
	Logs      []string // lines the program logged (bounded to 64 KiB, the rest counted)
	HostCalls int64
	Writes    int64
}

// Its fields are vm.Result's, in order: the conversion is free (no
// copy of the output) and stops compiling if the two drift apart.
func resultOf(r vm.Result) Result { return Result(r) }

// Completion is a script's completion value, for a REPL to display:
// Output holds it as a Result would (strings as UTF-8, byte arrays as
// bytes, anything else as JSON), and Type says what it was.
type Completion struct {
	Result
	// Type is the value's JavaScript type: "undefined", "null", "string",
	// "number", "boolean", "bigint", "symbol", "function", "bytes"
	// (Uint8Array or ArrayBuffer) or "object" (arrays included).
	Type string
	// JSON reports that Output is JSON text (numbers, booleans, null,
	// objects and arrays).
	JSON bool
}

func completionOf(c js.Completion) Completion {
	return Completion{Result: resultOf(c.Result), Type: c.Type, JSON: c.JSON}
}

// Session is a JavaScript scope that keeps its state between Evals (a
// function defined by one is there for the next): the REPL's, and each
// daemon connection's EVAL. Each Eval is one read-write transaction of
// the session's current namespace. Calls are serialized. Close it when
// done.
type Session plugins.Session

func (s *Session) p() *plugins.Session { return (*plugins.Session)(s) }

// Eval runs script in the session as one read-write transaction of the
// session's namespace and returns its completion value; its writes
// commit, as durably as the sync mode promises, when it succeeds.
// cube.args is empty; see EvalArgs.
func (s *Session) Eval(ctx context.Context, script string) (Completion, error) {
	c, err := s.p().Eval(ctx, script)
	return completionOf(c), err
}

// EvalArgs is Eval with cube.args holding args for this call only.
func (s *Session) EvalArgs(ctx context.Context, script string, args []byte) (Completion, error) {
	c, err := s.p().EvalArgs(ctx, script, args)
	return completionOf(c), err
}

// EvalWith is EvalArgs under lim for this call only; lim's zero fields
// take the DB's defaults (Options.Limits). Bounding lim is the caller's
// job: the daemon keeps it under its own maximum.
func (s *Session) EvalWith(ctx context.Context, script string, args []byte, lim Limits) (Completion, error) {
	c, err := s.p().EvalWith(ctx, script, args, lim)
	return completionOf(c), err
}

// Namespace returns the namespace the session's Evals run in.
func (s *Session) Namespace() string { return s.p().Namespace() }

// Use switches the session to namespace ns; its JavaScript state stays.
func (s *Session) Use(ns string) { s.p().Use(ns) }

// Close ends the session.
func (s *Session) Close() { s.p().Close() }
