// Package plugins is the program registry: it stores WebAssembly and
// JavaScript programs in a namespace, runs them as engine transactions,
// and keeps per-program telemetry.
//
// # Storage
//
// A program is one metadata value of its namespace, under "prog/<name>":
// its kind, options, limits and code, and a version — the SHA-256 of all of
// those except the registration time. Prog writes it with one engine
// transaction, so registration is as durable as any write (see
// engine.Options.Sync) and survives restart and crash; a new version
// replaces the old in that one write, so a run sees the old program or
// the new one, never a mix. Registering the same code with the same
// options again is a no-op: it compiles nothing and writes nothing.
//
// # Runs
//
// A read-only program (ProgOptions.ReadOnly) runs on an engine snapshot:
// any number run at once, each on a consistent view, and never block
// writers. A read-write program runs inside one Namespace.Update: its
// writes commit together when it returns success; on an error, trap,
// timeout or any limit the Update function returns that error, so none
// of the run's writes is ever visible, also after a crash. Read-write runs
// of one namespace are serialized, which makes them serializable.
//
// Every run looks its program up in the transaction it runs in and checks
// the stored version, so it runs exactly the version its transaction sees.
// Compiled programs are cached in memory per (namespace, name, version); after
// a restart a program is compiled on its first run (WASM from the on-disk
// compilation cache when there is one).
//
// A program reaches its own namespace only: the vm.Host it is given wraps
// one engine transaction of that namespace, and nothing else.
//
// # Telemetry
//
// Per program: runs, errors by vm.ErrorKind, latency (an HDR histogram:
// p50, p99, max), host calls, writes and output bytes. Counters live in
// memory and are written to the namespace's metadata ("progstat/<name>")
// every Options.TelemetryInterval (default 10 s) when they changed, and at
// Close. A crash loses at most the counters of the last interval.
package plugins
