package repl

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Evaluator is what the REPL runs inputs against. Embedded and Remote
// implement it; tests and other front ends may bring their own.
//
// Eval runs script in namespace ns, in the evaluator's session: state left
// by one call (variables, functions) is there for the next call, whatever
// its namespace. A call
// is one transaction: its writes are visible once it returns without error
// and never if it fails. Cancelling ctx stops the script.
type Evaluator interface {
	Eval(ctx context.Context, ns, script string) (Result, error)
	// Namespaces lists the namespaces, sorted by name.
	Namespaces(ctx context.Context) ([]NamespaceInfo, error)
	// CreateNamespace creates a namespace with dims dimensions on curve
	// ("" = the default, hilbert).
	CreateNamespace(ctx context.Context, name string, dims int, curve string) error
	// Programs lists the programs registered in ns, sorted by name.
	Programs(ctx context.Context, ns string) ([]ProgramInfo, error)
	// Prog registers (or replaces) a program; kind is "js" or "wasm". It
	// returns the new version.
	Prog(ctx context.Context, ns, name, kind string, code []byte) (version string, err error)
	// Run runs a registered program with arg; it returns its output.
	Run(ctx context.Context, ns, name string, arg []byte) (Result, error)
	// Stats describes ns ("" = the whole store) as JSON.
	Stats(ctx context.Context, ns string) ([]byte, error)
	// Close releases the evaluator's sessions and connections (not the
	// DB it was given).
	Close() error
}

// Result is what an input produced.
type Result struct {
	// Output is the completion value: a string as UTF-8, bytes as they are,
	// anything else as JSON.
	Output []byte
	// Type is the JavaScript type ("undefined", "string", "number",
	// "object", "function", "bytes", ...), or "" when the evaluator does not
	// know it (a daemon returns bytes only).
	Type string
	// JSON reports that Output is JSON text.
	JSON bool
	// Logs are the lines the script passed to cube.log.
	Logs []string
	// Writes counts the writes the input committed.
	Writes int64
}

// NamespaceInfo describes a namespace for .ns and completion.
type NamespaceInfo struct {
	Name   string `json:"name"`
	Dims   int    `json:"dims"`
	Curve  string `json:"curve,omitempty"`
	Values int    `json:"values"`
	Edges  int    `json:"edges"`
}

// ProgramInfo describes a registered program for .progs and completion.
type ProgramInfo struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Version  string `json:"version"`
	ReadOnly bool   `json:"readonly"`
	Runs     int64  `json:"runs"`
}

// ScriptError is a failed input: what kind of failure (guest, timeout,
// aborted, ...), the message, and where in the input when known (1-based;
// 0 = unknown). Evaluators return it so that the REPL can point at the
// line.
type ScriptError struct {
	Kind   string
	Msg    string
	Line   int
	Column int
}

func (e *ScriptError) Error() string {
	s := e.Msg
	if e.Kind != "" {
		s = e.Kind + ": " + s
	}
	if e.Line > 0 {
		s += fmt.Sprintf(" (line %d, column %d)", e.Line, e.Column)
	}
	return s
}

// lineCol finds the "(line N, column M)" that cube's errors end with, in
// text that crossed the wire.
var lineCol = regexp.MustCompile(`\s*\(line (\d+), column (\d+)\)`)

// kindNames are vm.ErrorKind's names, as a daemon's messages carry them.
var kindNames = []string{
	"guest error", "trap", "timeout", "memory limit", "output limit", "write limit",
	"host call limit", "read-only", "bad module", "abi version", "aborted",
}

// failedRe matches the daemon's "script failed: ", "program 'p' failed: "
// and "cannot register program 'p': " lead-ins.
var failedRe = regexp.MustCompile(`^(?:script failed|program '[^']*' failed|cannot register (?:program '[^']*'|script)): `)

// parseScriptError turns an error message from a daemon ("PROGERR script
// failed: guest error: ReferenceError: x is not defined (line 1, column
// 1)") into a ScriptError with its kind and position.
func parseScriptError(msg string) *ScriptError {
	msg = failedRe.ReplaceAllString(msg, "")
	e := &ScriptError{Msg: msg}
	for _, k := range kindNames {
		if rest, ok := strings.CutPrefix(msg, k+": "); ok {
			e.Kind, e.Msg = k, rest
			break
		}
	}
	msg = e.Msg
	if m := lineCol.FindStringSubmatchIndex(msg); m != nil {
		e.Line, _ = strconv.Atoi(msg[m[2]:m[3]])
		e.Column, _ = strconv.Atoi(msg[m[4]:m[5]])
		e.Msg = msg[:m[0]] + msg[m[1]:]
	}
	return e
}
