// Package vm runs user programs — WebAssembly modules and JavaScript — in
// sandboxes behind one interface.
//
// A program sees the namespace it runs in only through a [Host]: read and
// write values at coordinates, scan regions, follow and make edges, and call
// the store's built-in walks. The vm package defines that interface; it does
// not import the engine. The plugins package implements Host over an engine
// transaction (read-write programs) or snapshot (read-only programs).
//
// Two sandboxes implement [Sandbox]: vm/wasm on wazero and vm/js on goja.
// Both enforce the same [Limits] and report failures as *[Error] with a
// [ErrorKind], so callers handle a timeout the same way whichever runtime
// produced it.
package vm
