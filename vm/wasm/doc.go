// Package wasm runs WebAssembly programs on wazero (compiled mode) behind
// vm.Sandbox.
//
// A program speaks ABI v1: it imports host functions from the module
// "cube_v1" (the name carries the version), exports run() -> i32, and
// passes plain i32/i64/f64 values, pointers and lengths into its own memory.
// docs/ABI.md documents the ABI for guest authors in any language.
//
// Safety: every pointer a guest passes is bounds-checked, and a bad one
// traps the guest (KindTrap) — a host function never lets a panic reach the
// caller. Imports outside the ABI and a small WASI subset (no files, no
// network) are refused at Compile, naming the import. The wall-time limit
// is enforced by closing the module when the run's context ends; wazero
// checks for that at every loop header, and Compile adds an empty loop at
// the start of every function so that recursion without loops is caught
// too. The same rewrite (internal/instrument, a full instruction decoder)
// bounds the call stack: each call adds its frame's size to a counter and
// traps past a budget of a quarter of the memory limit (StackBytes), which
// ends runaway recursion with KindStackLimit.
//
// Isolation: by default (vm.Fresh) every run instantiates the module anew,
// so nothing leaks between runs; for a small module this costs about a
// microsecond. vm.Reuse keeps instances between runs of one program, for
// guests whose start-up is expensive (Go's runtime), at the documented
// price that such a program sees its own globals and memory from earlier
// runs.
package wasm
