package vm

import "context"

// Kind names a sandbox runtime.
type Kind string

const (
	WASM Kind = "wasm"
	JS   Kind = "js"
)

// Sandbox compiles programs for one runtime. It is safe for concurrent use.
type Sandbox interface {
	// Kind reports the runtime.
	Kind() Kind
	// Compile validates and compiles code. A module or script that cannot
	// run here fails with an *Error of KindBadModule or KindABIVersion
	// whose message names what is wrong (the refused import, the syntax
	// error and its line).
	Compile(ctx context.Context, code []byte, lim Limits) (Program, error)
	// Close releases every program compiled by the sandbox.
	Close(ctx context.Context) error
}

// Program is a compiled program. Run may be called concurrently; each run
// starts from the program's initial state (nothing leaks between runs).
type Program interface {
	// Run executes the program against host with args. The output is the
	// program's result bytes. On failure the error is an *Error; the caller
	// must then discard every write the run made through host.
	Run(ctx context.Context, host Host, args []byte) (Result, error)
	// Close releases the compiled program.
	Close(ctx context.Context) error
}

// Result is what a successful run produced, and what it cost.
type Result struct {
	Output    []byte
	Logs      []string // lines the program logged (bounded by DefaultLogBytes)
	HostCalls int64
	Writes    int64
}
