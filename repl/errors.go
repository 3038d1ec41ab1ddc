package repl

import "errors"

var (
	// ErrInputFailed is returned by Run without a terminal when at least one
	// input failed (an error was printed for each); the wrapping error says
	// how many. A script driving the REPL can exit non-zero on it.
	ErrInputFailed = errors.New("repl: some inputs failed")
	// ErrNoEvaluator: Options has neither DB, Remote nor Socket.
	ErrNoEvaluator = errors.New("repl: nothing to evaluate against: set Options.DB, Options.Remote or Options.Socket")
	// ErrNoNamespace: a script or command needs a namespace and none is
	// selected. Select one with .ns NAME, or create one with .ns NAME DIMS.
	ErrNoNamespace = errors.New("repl: no namespace selected (use .ns NAME, or .ns NAME DIMS to create one)")
	// ErrUnsupported: the evaluator cannot do what was asked (for instance
	// a daemon without the command).
	ErrUnsupported = errors.New("repl: not supported by this evaluator")
	// ErrUsage: a dot-command with wrong arguments. The message says how to
	// call it.
	ErrUsage = errors.New("repl: usage")
	// ErrInterrupted: the input was stopped with Ctrl-C.
	ErrInterrupted = errors.New("repl: interrupted")
)
