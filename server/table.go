package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server/internal/resp"
)

// Flags describe a command.
type Flags uint16

const (
	// Write: the command changes the store. Its reply is sent only after
	// the change is as durable as the store's sync mode promises.
	Write Flags = 1 << iota
	// ReadOnly: the command only reads.
	ReadOnly
	// NoAuth: allowed before AUTH on a TCP connection. Only PING, HELLO,
	// AUTH and QUIT have it: a stranger learns nothing of the daemon.
	NoAuth
	// Admin: acts on the daemon rather than on data.
	Admin
	// Fast: constant time, no I/O wait beyond a log sync.
	Fast
)

// Command is one entry of the daemon's command table, which drives
// dispatch, HELP, COMMAND / COMMAND DOCS and the CLI's verbs.
type Command struct {
	Name     string // upper case, as clients send it in any case: "PUT", "NS.CREATE"
	Synopsis string // "PUT ns c1..cd value"
	// Arity counts the words of a call, the name included, as Redis does:
	// n means exactly n, -n at least n. Commands taking coordinates check
	// the exact count against the namespace's dimensions.
	Arity int
	Flags Flags
	Group string // "server", "namespace", "value", "graph", "program"
	Doc   string // what it does and what it replies

	run  func(*call) error
	prep func(*call) (*cube.Namespace, txOp, error)
}

// txOp is a write whose prep parsed its arguments into cl, run inside
// a transaction; it appends its reply to cl.w.
type txOp func(cl *call, tx *cube.Tx) error

// call is one command being run.
type call struct {
	ctx  context.Context
	s    *Server
	c    *conn
	cmd  *Command
	args [][]byte
	w    *resp.Writer
	geo  bool // the command's namespace is geographic: coordinates in degrees (set by ns)
	// What a write's prep parsed, for its txOp: coordinates (in buf: a
	// command's coordinates take no allocation), and a link's label,
	// weight and value.
	at     [2][]int32
	buf    [2][cube.MaxDims]int32
	label  string
	weight float64
	value  []byte
}

// Commands returns the command table, in HELP order.
func Commands() []Command {
	t := commandTable()
	out := make([]Command, len(t))
	for i, c := range t {
		out[i] = *c
		out[i].run, out[i].prep = nil, nil
	}
	return out
}

func (c *Command) arityOK(n int) bool {
	if c.Arity >= 0 {
		return n == c.Arity
	}
	return n >= -c.Arity
}

func (c *Command) arityError() error {
	return usageErr("wrong number of arguments for '%s' command; usage: %s", strings.ToLower(c.Name), c.Synopsis)
}

// lookup finds a command by name, in any case, without allocating.
func (s *Server) lookup(name []byte) *Command {
	var b [32]byte
	if len(name) > len(b) {
		return nil
	}
	for i, ch := range name {
		if 'a' <= ch && ch <= 'z' {
			ch -= 'a' - 'A'
		}
		b[i] = ch
	}
	return s.byName[string(b[:len(name)])]
}

// commandTable builds the table. It is a function, not a package variable,
// so that the package has no global state.
func commandTable() []*Command {
	return []*Command{
		// server
		{Name: "PING", Synopsis: "PING [message]", Arity: -1, Flags: NoAuth | Fast, Group: "server",
			Doc: "Replies PONG, or the message.", run: cmdPing},
		{Name: "ECHO", Synopsis: "ECHO message", Arity: 2, Flags: Fast, Group: "server",
			Doc: "Replies the message.", run: cmdEcho},
		{Name: "HELLO", Synopsis: "HELLO [protover [AUTH username token] [SETNAME name]]", Arity: -1, Flags: NoAuth | Fast, Group: "server",
			Doc: "Switches the protocol (2 or 3; 3 gives maps, doubles and nulls), optionally authenticates, and describes the server.", run: cmdHello},
		{Name: "AUTH", Synopsis: "AUTH [username] token", Arity: -2, Flags: NoAuth | Fast, Group: "server",
			Doc: "Authenticates a TCP connection with the daemon's token (--auth-file or CUBE_AUTH).", run: cmdAuth},
		{Name: "QUIT", Synopsis: "QUIT", Arity: -1, Flags: NoAuth | Fast, Group: "server",
			Doc: "Replies OK and closes the connection.", run: cmdQuit},
		{Name: "HELP", Synopsis: "HELP [command]", Arity: -1, Group: "server",
			Doc: "Lists the commands, or describes one.", run: cmdHelp},
		{Name: "COMMAND", Synopsis: "COMMAND [COUNT | LIST | INFO name... | DOCS name...]", Arity: -1, Flags: ReadOnly, Group: "server",
			Doc: "Describes the commands in Redis's format, so that redis-cli and client libraries learn them.", run: cmdCommand},
		{Name: "INFO", Synopsis: "INFO [section]", Arity: -1, Flags: ReadOnly, Group: "server",
			Doc: "Server, clients, persistence, command statistics and keyspace, as Redis-style text.", run: cmdInfo},
		{Name: "STATS", Synopsis: "STATS [ns]", Arity: -1, Flags: ReadOnly, Group: "server",
			Doc: "Statistics as JSON: the store, the daemon's commands (calls, errors, latency mean/p50/p99/max) and programs; or one namespace's.", run: cmdStats},
		{Name: "CHECKPOINT", Synopsis: "CHECKPOINT", Arity: 1, Flags: Admin | Write, Group: "server",
			Doc: "Writes a checkpoint now and describes it (nil if nothing changed since the last one).", run: cmdCheckpoint},
		{Name: "SHUTDOWN", Synopsis: "SHUTDOWN", Arity: -1, Flags: Admin, Group: "server",
			Doc: "Replies OK, then drains in-flight commands, checkpoints, removes the socket and exits.", run: cmdShutdown},
		{Name: "CONFIG", Synopsis: "CONFIG GET parameter", Arity: 3, Flags: Admin | ReadOnly, Group: "server",
			Doc: "Reads the daemon's settings (maxclients, timeout, appendfsync, ...), as redis-benchmark expects.", run: cmdConfig},
		{Name: "CLUSTER.INFO", Synopsis: "CLUSTER.INFO", Arity: 1, Flags: ReadOnly | Fast, Group: "server",
			Doc: "In cluster mode (cube serve --cluster): this node's id and role (leader, follower, candidate), the Raft term, commit and applied indexes, the leader, and the members, as key:value lines.", run: cmdClusterInfo},
		{Name: "CLUSTER.READINDEX", Synopsis: "CLUSTER.READINDEX", Arity: 1, Flags: Admin | ReadOnly, Group: "server",
			Doc: "On the leader: confirms with a quorum that it still leads and replies the Raft index of the last write it applied, which covers every write acknowledged before the call. Followers ask it to bound how stale their reads are; a follower answers MOVED to the leader.", run: cmdClusterReadIndex},
		{Name: "CLUSTER.READS", Synopsis: "CLUSTER.READS [LEADER | ANY]", Arity: -1, Flags: Fast, Group: "server",
			Doc: "How this connection's reads are answered in cluster mode: ANY (the default) lets a follower answer within --max-stale; LEADER has a follower answer MOVED to the leader, so that every read is linearizable and sees the connection's own writes. Without an argument, replies the setting. A node not in a cluster is its own leader.", run: cmdClusterReads},
		{Name: "CLUSTER.JOIN", Synopsis: "CLUSTER.JOIN id raft-addr resp-addr", Arity: 4, Flags: Admin, Group: "server",
			Doc: "On the leader: adds the node id (Raft at raft-addr, clients at resp-addr) to the cluster as a voter. A follower answers MOVED to the leader. cube serve --join sends it.", run: cmdClusterJoin},
		{Name: "CLUSTER.LEAVE", Synopsis: "CLUSTER.LEAVE id", Arity: 2, Flags: Admin, Group: "server",
			Doc: "On the leader: removes the node id from the cluster. A follower answers MOVED to the leader.", run: cmdClusterLeave},
		{Name: "CLIENT", Synopsis: "CLIENT ID | GETNAME | SETNAME name | SETINFO attr value", Arity: -2, Flags: Fast, Group: "server",
			Doc: "The connection's id and name; SETINFO is accepted for client libraries.", run: cmdClient},

		// namespaces
		{Name: "NS.CREATE", Synopsis: "NS.CREATE ns DIMS d | GEO [CURVE hilbert|morton] [MAXVALUE bytes]", Arity: -3, Flags: Write, Group: "namespace",
			Doc: "Creates a namespace with d dimensions (1-8) on a space-filling curve (hilbert by default); GEO makes it geographic: coordinates are longitude latitude in decimal degrees (stored exactly at 7 decimals), NEARBY and WITHIN measure metres on the sphere.", run: cmdNSCreate},
		{Name: "NS.LIST", Synopsis: "NS.LIST", Arity: 1, Flags: ReadOnly | Fast, Group: "namespace",
			Doc: "The namespaces' names, sorted.", run: cmdNSList},
		{Name: "NS.INFO", Synopsis: "NS.INFO ns", Arity: 2, Flags: ReadOnly | Fast, Group: "namespace",
			Doc: "Dimensions, curve, whether it is geographic, value limit, number of values and edges.", run: cmdNSInfo},
		{Name: "NS.DROP", Synopsis: "NS.DROP ns", Arity: 2, Flags: Write, Group: "namespace",
			Doc: "Deletes a namespace with all its values, edges and programs.", run: cmdNSDrop},

		// values
		{Name: "PUT", Synopsis: "PUT ns c1..cd value", Arity: -4, Flags: Write | Fast, Group: "value",
			Doc: "Stores value at the coordinate (d integers, d the namespace's dimensions). Replies OK once durable.", prep: prepPut},
		{Name: "GET", Synopsis: "GET ns c1..cd", Arity: -3, Flags: ReadOnly | Fast, Group: "value",
			Doc: "The value at the coordinate, or nil.", run: cmdGet},
		{Name: "DEL", Synopsis: "DEL ns c1..cd", Arity: -3, Flags: Write | Fast, Group: "value",
			Doc: "Deletes the value at the coordinate; replies 1 if there was one, else 0.", prep: prepDel},
		{Name: "REGION", Synopsis: "REGION ns min1..mind max1..maxd [LIMIT n] [COUNT]", Arity: -4, Flags: ReadOnly, Group: "value",
			Doc: "The values inside the box (inclusive), in curve order, as [[c1..cd], value] pairs; with COUNT, their number.", run: cmdRegion},
		{Name: "NEARBY", Synopsis: "NEARBY ns c1..cd K [MAXDIST d] [COUNT]", Arity: -4, Flags: ReadOnly, Group: "value",
			Doc: "The K values nearest to the coordinate by Euclidean distance, nearest first (ties in curve order), as [[c1..cd], value, distance]; MAXDIST leaves out those farther than d; with COUNT, their number. On a GEO namespace the coordinate is longitude latitude in degrees and distances are metres on the sphere.", run: cmdNearby},
		{Name: "WITHIN", Synopsis: "WITHIN ns c1..cd r [LIMIT n] [COUNT]", Arity: -4, Flags: ReadOnly, Group: "value",
			Doc: "The values at Euclidean distance at most r from the coordinate, in curve order, as [[c1..cd], value] pairs; with COUNT, their number. On a GEO namespace r is in metres on the sphere.", run: cmdWithin},

		// graph
		{Name: "LINK", Synopsis: "LINK ns from1..fromd to1..tod label [WEIGHT w] [VALUE v]", Arity: -5, Flags: Write | Fast, Group: "graph",
			Doc: "Creates or replaces the edge from -[label]-> to (weight 1 unless given).", prep: prepLink},
		{Name: "UNLINK", Synopsis: "UNLINK ns from1..fromd to1..tod label", Arity: -5, Flags: Write | Fast, Group: "graph",
			Doc: "Removes the edge; replies 1 if it existed, else 0.", prep: prepUnlink},
		{Name: "EDGES", Synopsis: "EDGES ns c1..cd [OUT|IN|BOTH] [LABEL l]", Arity: -3, Flags: ReadOnly, Group: "graph",
			Doc: "The edges of the coordinate (OUT by default), each as [from, to, label, weight, value].", run: cmdEdges},
		{Name: "WALK", Synopsis: "WALK ns start1..startd [DEPTH n] [LABEL l] [DIR OUT|IN|BOTH] [ORDER BFS|DFS] [LIMIT n]", Arity: -3, Flags: ReadOnly, Group: "graph",
			Doc: "Walks the graph from start (BFS, depth 1, outgoing, by default); each node as [coordinate, depth, reached-from].", run: cmdWalk},
		{Name: "PATH", Synopsis: "PATH ns from1..fromd to1..tod [LABEL l] [DIR OUT|IN|BOTH] [MAXHOPS n]", Arity: -4, Flags: ReadOnly, Group: "graph",
			Doc: "The least-weight path as [[coordinates...], total weight], or nil if there is none; with MAXHOPS n (0 = no bound), the least-weight path of at most n edges. Equal weights go to the fewest edges, then to the least coordinates counted back from the target.", run: cmdPath},

		// programs
		{Name: "PROG", Synopsis: "PROG ns name WASM|JS code [RO] [TIMEOUT ms] [MEMORY mib]", Arity: -5, Flags: Write, Group: "program",
			Doc: "Registers (or replaces) a program; replies its version hash.", run: cmdProg},
		{Name: "PROGS", Synopsis: "PROGS ns", Arity: 2, Flags: ReadOnly, Group: "program",
			Doc: "The namespace's programs: name, kind, version, size, limits.", run: cmdProgs},
		{Name: "UNPROG", Synopsis: "UNPROG ns name", Arity: 3, Flags: Write, Group: "program",
			Doc: "Removes a program; replies 1 if it existed, else 0.", run: cmdUnprog},
		{Name: "RUN", Synopsis: "RUN ns name [arg]", Arity: -3, Flags: Write, Group: "program",
			Doc: "Runs a program as one transaction and replies its output (RUN.TYPED adds what it logged).", run: cmdRun},
		{Name: "RUN.TYPED", Synopsis: "RUN.TYPED ns name [arg]", Arity: -3, Flags: Write, Group: "program",
			Doc: "RUN with the program's log: replies [\"bytes\", 0, output, [log lines]] (EVAL.TYPED's shape), the lines being what it passed to cube.log or cube_log and wrote to standard output or error.", run: cmdRunTyped},
		{Name: "EVAL", Synopsis: "EVAL ns script [arg] [TIMEOUT ms] [MEMORY mib]", Arity: -3, Flags: Write, Group: "program",
			Doc: "Runs ad-hoc JavaScript in this connection's session (its globals persist between EVALs), with cube.args set to arg for this call; replies its output. TIMEOUT and MEMORY set this call's limits (otherwise the store's defaults: 1 s and 64 MiB under cube serve), up to the daemon's maximum (cube serve --max-eval-timeout, --max-eval-memory).", run: cmdEval},
		{Name: "EVAL.TYPED", Synopsis: "EVAL.TYPED ns script [arg] [TIMEOUT ms] [MEMORY mib]", Arity: -3, Flags: Write, Group: "program",
			Doc: "EVAL for REPLs and tools: replies [type, json (0|1), output, [log lines]], so a client can tell the string \"42\" from the number 42 and show what the script logged.", run: cmdEvalTyped},
	}
}

// usageErr is a mistake in a command's arguments.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErr(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }
