// Package server is cube's daemon: it serves one open cube over RESP, the
// Redis protocol, so that redis-cli, redis-benchmark and every Redis client
// library talk to it unchanged.
//
//	db, err := cube.Open(dir, cube.Options{})
//	srv, err := server.New(db, server.Options{Socket: filepath.Join(dir, server.SocketName)})
//	err = srv.Serve(ctx) // until ctx is done, Shutdown, or a client's SHUTDOWN
//	db.Close()
//
// # Listening
//
// The daemon listens on a Unix socket, created with mode 0600 (bound under a
// temporary name, chmod'ed, then renamed into place, so it is never open
// wider). A socket file left by a killed daemon is replaced; one that still
// answers is ErrSocketInUse. TCP is opt-in (Options.Listen) and always
// behind AUTH: a TCP connection may send only PING, HELLO, AUTH and QUIT
// until it has authenticated with Options.AuthToken. A second daemon on the
// same data directory is refused earlier, by the store's directory lock.
//
// # One command table
//
// Every command is one Command entry: name, synopsis, arity, flags, group,
// doc and handler. The table drives dispatch, HELP, COMMAND and COMMAND DOCS
// (whose argument descriptions are derived from the synopsis, which is how
// redis-cli shows hints and "help put" for cube's commands) and the cube
// CLI's verbs (Commands). Errors are RESP errors whose first word is a code
// (ERR, NONS for a missing namespace, NOAUTH, WRONGPASS, READONLY,
// NOTAVAIL, ...) and whose text says what was wrong and what to do; the
// connection stays usable after any of them.
//
// # Durability and pipelining
//
// A write's reply is appended only after the store returned from it, and
// the store returns only once the write is as durable as its sync mode
// promises, so a client never sees OK for a write a crash could lose (in the
// default mode). Each connection runs the commands of a pipeline in order;
// consecutive writes to one namespace (PUT, DEL, LINK, UNLINK) commit as one
// transaction, so a pipeline of N writes waits for one log sync, not N.
// Replies of a pipeline are written together.
//
// # Interrupting a command
//
// RESP has no interrupt: redis-cli and cube's REPL stop a command on Ctrl-C
// by closing the connection. While a command that may run long (any not
// marked Fast: RUN, EVAL, REGION, WALK, ...) runs, its connection is
// watched (from 2 ms into the command, so short ones pay nothing), and a
// close cancels the command's context: a program or script
// is interrupted (so its transaction rolls back and the namespace is free
// for the next writer at once), the rest of that client's pipeline is not
// run, and STATS / INFO count it in commands_cancelled. Bytes that arrive
// meanwhile (a pipelined request) are kept for the next command; a
// unix-socket client that only shut down its writing side still gets its
// reply.
//
// # Protecting the daemon
//
// Requests are decoded by cube's own RESP decoder (internal/resp), which
// checks every announced length before using it (redcon's reader, whose
// reply encoders this package uses, indexes out of range on a bulk length
// near MaxInt64). A request over Options.MaxRequest is refused and its
// connection closed — after a protocol error the byte stream cannot be
// resynchronised — without touching other clients.
//
// Clients that never behave are bounded by absolute limits, none of which
// a client can extend by sending slowly:
//
//   - a request must arrive whole within Options.RequestTimeout (10 s) of
//     its first byte, however steadily it trickles;
//   - a TCP connection must authenticate within Options.AuthTimeout (5 s)
//     of connecting, and until it has it may send requests of at most
//     4 KiB (the server holds no more of a stranger's input than that) and
//     only PING, HELLO, AUTH and QUIT; anything else, unknown commands
//     included, gets NOAUTH;
//   - wrong tokens, by AUTH or HELLO ... AUTH, are answered at most one
//     per 50 ms across the whole daemon, and tokens are compared by their
//     SHA-256 digests in constant time;
//   - an idle TCP connection is closed after Options.IdleTimeout (5 min);
//     Unix socket connections only if Options.UnixIdleTimeout is set;
//   - one that does not read its replies is closed after
//     Options.WriteTimeout.
//
// TCP and the Unix socket have budgets of their own (Options.MaxClients,
// Options.MaxUnixClients), both fitted under the open-file limit, so no
// number of network clients can lock the owner out of its socket. Past a
// budget, new connections are told so and closed.
//
// # Shutdown
//
// Serve stops accepting, lets every connection finish the commands it has
// already received and flush their replies (bounded by
// Options.DrainTimeout), runs Options.AfterDrain (where the caller
// checkpoints and closes the store), removes the socket and returns, so a
// socket file that is gone means a store another process may open. SIGKILL loses nothing acknowledged,
// because nothing is acknowledged before it is durable.
//
// # Statistics
//
// Every command's calls, errors and latency (parse to reply ready) are kept
// per server: in STATS (JSON), INFO commandstats, and as Prometheus metrics
// with the store's fsync figures (MetricsHandler).
package server
