// Package jsproc runs JavaScript programs in worker processes, so that a
// run's memory and time limits are enforced by the operating system
// rather than by checks inside goja.
//
// goja's built-ins are Go functions: while one runs (JSON.stringify of a
// large graph, String.prototype.replaceAll with a long replacement,
// Array.from with a huge length) nothing can interrupt it, and Go cannot
// tell which goroutine allocated what. In a process of its own a run is
// accounted for exactly:
//
//   - memory: before each run the worker lowers its own RLIMIT_DATA to
//     the memory it used when idle plus the run's limit plus a fixed slack,
//     so an allocation past it fails in the kernel and the worker dies; the
//     pool reports KindMemoryLimit. The worker also sets Go's soft memory
//     limit, so garbage is collected before the hard limit is reached.
//   - time: the worker interrupts the runtime at the run's limit, as the
//     in-process sandbox does; when a built-in does not return within
//     Options.KillGrace of that, the pool kills the worker with SIGKILL and
//     reports KindTimeout.
//
// A killed worker is replaced; nothing of the daemon's own memory was spent
// on the run. The host API crosses the process boundary as gob messages on
// the worker's standard input and output (a caller's cancellation on a
// third pipe, so that it reaches a run that is computing): the worker is a client of the
// namespace, the pool serves its host calls from the run's transaction, so
// transactions, visibility and limits on writes are unchanged.
//
// A Session (a REPL connection's scope) owns one worker for its lifetime,
// since its state lives in that worker's runtime. A session whose worker
// was killed by a limit starts over in a new worker, and its next Eval's
// error says that its state was lost.
//
// # Notes
//
// The worker is the same binary as the daemon, started with a command the
// caller gives (cube serve uses its own executable with a hidden verb); the
// worker side is [Serve]. Hard memory limits need Linux (RLIMIT_DATA counts
// anonymous writable mappings there since 4.7); elsewhere the worker keeps
// only the in-process checks and the time limit stays hard.
package jsproc
