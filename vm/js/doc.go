// Package js runs JavaScript programs on goja behind the [vm.Sandbox]
// interface.
//
// A program defines a function run(args); its return value is the output:
// a string (as UTF-8), a Uint8Array or ArrayBuffer (as bytes), undefined
// (empty) or anything else JSON.stringify can encode. Programs reach the
// namespace only through the frozen global cube (see cube.go for the whole
// API: get/put/del, region iterators, edges, built-in walks, shortest path
// and a lazy Gizmo-style graph query, cube.V(c).out("road").all()).
//
// # Isolation
//
// Each program version is parsed and compiled once. Runs reuse goja
// runtimes from a per-program pool, because building a runtime with the
// size-checked built-ins costs tens of microseconds and a reused one costs
// about two. Reuse is made safe by construction, not by cleaning up:
//
//   - every object reachable from the global object (all built-in
//     constructors and prototypes, hidden intrinsics such as iterator and
//     generator prototypes, and cube itself) is frozen once, when the
//     runtime is built, so a run cannot change what the next run sees
//     (Object.prototype.x = 1 throws a TypeError in strict code);
//   - the program's top level runs inside a fresh function scope each run,
//     so its variables, functions and module state start over;
//   - a runtime whose run failed in any way is dropped, never pooled.
//
// Freezing built-ins brings JavaScript's "override mistake" (assigning
// obj.toString = f fails when Object.prototype.toString is frozen); the
// usual properties (constructor, toString, valueOf, name, message, ...) on
// the built-in prototypes are turned into accessors whose setter defines
// an own property on the receiver, as SES's lockdown does.
//
// Ad-hoc scripts ([Sandbox.Eval]) and REPL sessions ([Session]) get their
// own unfrozen runtime: a session keeps its global state between calls.
//
// # Limits
//
// Wall time and context cancellation interrupt the runtime
// (Runtime.Interrupt); the call stack is bounded (Options.MaxCallStack);
// host calls, writes, output bytes and logs are counted at the cube
// boundary. Backtracking regular expressions (goja hands patterns Go's
// regexp cannot run to dlclark/regexp2) get a match timeout
// (Options.RegexpTimeout): a match that hits it ends the run with
// KindTimeout instead of silently not matching. Built-ins that build a
// large string or array in one step, where an interrupt cannot reach
// (String.prototype.repeat, padStart, padEnd, Array.prototype.join and
// fill, ArrayBuffer and typed-array constructors), are replaced by
// size-checked versions that end the run with KindMemoryLimit once the
// result would pass Limits.MemoryBytes. Growth step by step (s += s, pushing
// to arrays) is caught by a heap watchdog that samples the Go heap while
// runs are active; see watchdog.go for what it can and cannot attribute.
//
// These checks are best effort: a built-in they do not know can still
// allocate or loop out of reach. Where the code is not yours, run it in
// worker processes instead (vm/jsproc, what cube serve does), where the
// kernel enforces the limits.
package js
