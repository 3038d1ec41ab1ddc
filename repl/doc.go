// Package repl is cube's interactive JavaScript prompt: the same cube API
// that programs see (cube.get, cube.region, cube.V(...).out(...), ...), plus
// dot-commands for namespaces, programs and statistics.
//
//	err := repl.Run(ctx, repl.Options{DB: db, Namespace: "world"})
//
// # Sessions
//
// Every input runs in a session that keeps its JavaScript state between
// inputs: a function defined on one line can be called on the next. The
// state stays when .ns switches namespace; cube itself always means the
// current one. Each input is one transaction: its writes commit when it
// succeeds and vanish when it fails or is stopped.
//
// # Evaluators
//
// The REPL talks to an Evaluator: Embedded runs scripts in-process on a
// *cube.DB; Remote sends them to a daemon as RESP commands (EVAL ns
// script, NS.LIST, NS.INFO, NS.CREATE, PROGS, PROG, RUN, STATS) over one
// connection, which the daemon gives its own session scope. RESP cannot
// interrupt a command, so Ctrl-C on a remote input closes the connection:
// the prompt comes back at once, the next input opens a new connection and
// a new session (the REPL says so), and the daemon's own limits end the
// abandoned script.
//
// # Terminals and pipes
//
// On a terminal the REPL uses a line editor (github.com/peterh/liner) with
// history (~/.cube_history), tab completion of the cube API, namespace and
// program names and dot-commands, and a continuation prompt ("... ") while
// brackets, template literals or comments are still open. Ctrl-C stops a
// running script and returns to the prompt; at an empty prompt it says how
// to leave; Ctrl-D leaves.
//
// Without a terminal (piped standard input) there are no prompts and no
// escape codes: inputs are read one complete statement group at a time and
// each prints one result, so the REPL serves scripts and tests. Errors go
// to Options.Err, and Run returns ErrInputFailed if any input failed.
package repl
