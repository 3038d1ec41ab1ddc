package repl

import "errors"

// pickNamespace says how to pick a namespace.
const pickNamespace = ".ns NAME picks one (.ns lists them, .ns NAME DIMS creates one), or start with cube -n NAME"

var (
	// ErrInputFailed is returned by Run without a terminal when at least one
	// input failed (an error was printed for each); the wrapping error says
	// how many. A script driving the REPL can exit non-zero on it.
	ErrInputFailed = errors.New("repl: some inputs failed")
	// ErrNoEvaluator: Options has neither DB, Remote nor Socket.
	ErrNoEvaluator = errors.New("repl: nothing to evaluate against: set Options.DB, Options.Remote or Options.Socket")
	// ErrNoNamespace: a command needs a namespace and none is selected.
	// Select one with .ns NAME, or create one with .ns NAME DIMS. (Plain
	// JavaScript needs none; the cube API in it does, and its error says
	// the same.)
	ErrNoNamespace = errors.New("repl: no namespace selected: " + pickNamespace)
	// ErrUnsupported: the evaluator cannot do what was asked (for instance
	// a daemon without the command).
	ErrUnsupported = errors.New("repl: not supported by this evaluator")
	// ErrUsage: a dot-command with wrong arguments. The message says how to
	// call it.
	ErrUsage = errors.New("repl: usage")
	// ErrInterrupted: the input was stopped with Ctrl-C.
	ErrInterrupted = errors.New("repl: interrupted")
)
