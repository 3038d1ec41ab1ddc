package wasm

import "errors"

// ErrClosed is returned by Compile and Run after the sandbox or program
// was closed.
var ErrClosed = errors.New("wasm: closed")
