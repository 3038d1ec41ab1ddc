package server

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cubelinux/cube"
)

// PING [message]
func cmdPing(cl *call) error {
	switch len(cl.args) {
	case 1:
		cl.w.Simple("PONG")
	case 2:
		cl.w.Bulk(cl.args[1])
	default:
		return cl.cmd.arityError()
	}
	return nil
}

// ECHO message
func cmdEcho(cl *call) error {
	cl.w.Bulk(cl.args[1])
	return nil
}

// HELLO [protover [AUTH username token] [SETNAME name]]
func cmdHello(cl *call) error {
	proto := cl.w.Proto
	if len(cl.args) > 1 {
		v, err := strconv.Atoi(string(cl.args[1]))
		if err != nil {
			return usageErr("Protocol version is not an integer or out of range")
		}
		if v != 2 && v != 3 {
			return &codeError{"NOPROTO", "unsupported protocol version; cube speaks 2 and 3"}
		}
		proto = v
	}
	name := cl.c.name
	for i := 2; i < len(cl.args); {
		switch strings.ToUpper(string(cl.args[i])) {
		case "AUTH":
			if i+2 >= len(cl.args) {
				return usageErr("HELLO: AUTH needs a username and a token")
			}
			if err := cl.c.authenticate(cl.args[i+2]); err != nil {
				return err
			}
			i += 3
		case "SETNAME":
			if i+1 >= len(cl.args) {
				return usageErr("HELLO: SETNAME needs a name")
			}
			name = string(cl.args[i+1])
			i += 2
		default:
			return usageErr("HELLO: unknown option '%s'; usage: %s", clip(cl.args[i]), cl.cmd.Synopsis)
		}
	}
	if !cl.c.authed {
		return errNoAuth
	}
	cl.c.name = name
	cl.w.Proto = proto
	w := cl.w
	w.Map(7)
	w.BulkString("server")
	w.BulkString("cube")
	w.BulkString("version")
	w.BulkString(cl.s.o.Version)
	w.BulkString("proto")
	w.Int(int64(proto))
	w.BulkString("id")
	w.Int(cl.c.id)
	w.BulkString("mode")
	w.BulkString("standalone")
	w.BulkString("role")
	w.BulkString("master")
	w.BulkString("modules")
	w.Array(0)
	return nil
}

func wrongPass(s *Server) error {
	if s.o.AuthToken == "" {
		return usageErr("AUTH called, but this daemon has no token: it listens only on its Unix socket, which needs none")
	}
	return &codeError{"WRONGPASS", "invalid token (see --auth-file / CUBE_AUTH on the daemon)"}
}

// AUTH [username] token
func cmdAuth(cl *call) error {
	if len(cl.args) > 3 {
		return cl.cmd.arityError()
	}
	if err := cl.c.authenticate(cl.args[len(cl.args)-1]); err != nil {
		return err
	}
	cl.w.OK()
	return nil
}

// QUIT
func cmdQuit(cl *call) error {
	cl.c.quit = true
	cl.w.OK()
	return nil
}

// HELP [command]
func cmdHelp(cl *call) error {
	if len(cl.args) > 2 {
		return cl.cmd.arityError()
	}
	if len(cl.args) == 2 {
		c := cl.s.lookup(cl.args[1])
		if c == nil {
			return usageErr("no command '%s'; HELP lists them", clip(cl.args[1]))
		}
		cl.w.Array(2)
		cl.w.Simple(c.Synopsis)
		cl.w.Simple(c.Doc)
		return nil
	}
	cl.w.Array(len(cl.s.table) + 1)
	cl.w.Simple("cube commands (coordinates are d integers, d the namespace's dimensions; HELP <command> for more):")
	for _, c := range cl.s.table {
		cl.w.Simple(fmt.Sprintf("%-70s %s", c.Synopsis, c.Group))
	}
	return nil
}

// CONFIG GET parameter
func cmdConfig(cl *call) error {
	if !strings.EqualFold(string(cl.args[1]), "GET") {
		return usageErr("only CONFIG GET is supported; cube is configured by 'cube serve' flags")
	}
	st := cl.s.db.StoreInfo()
	maxClients := cl.s.o.MaxUnixClients
	if cl.c.tcp {
		maxClients = cl.s.o.MaxClients
	}
	all := [][2]string{
		// The settings of the listener this client came in on.
		{"maxclients", strconv.Itoa(maxClients)},
		{"timeout", strconv.Itoa(int(cl.c.idle / time.Second))},
		{"proto-max-bulk-len", strconv.Itoa(cl.s.o.MaxRequest)},
		{"appendonly", "yes"},
		{"appendfsync", map[string]string{"always": "always", "interval": "everysec", "none": "no"}[strings.ToLower(st.Sync)]},
		{"save", ""},
		{"dir", cl.s.db.Dir()},
	}
	pat := strings.ToLower(string(cl.args[2]))
	var hits [][2]string
	for _, kv := range all {
		if pat == "*" || pat == kv[0] {
			hits = append(hits, kv)
		}
	}
	cl.w.Map(len(hits))
	for _, kv := range hits {
		cl.w.BulkString(kv[0])
		cl.w.BulkString(kv[1])
	}
	return nil
}

// CLIENT ID|GETNAME|SETNAME name|SETINFO attr value
func cmdClient(cl *call) error {
	switch sub := strings.ToUpper(string(cl.args[1])); {
	case sub == "ID" && len(cl.args) == 2:
		cl.w.Int(cl.c.id)
	case sub == "GETNAME" && len(cl.args) == 2:
		if cl.c.name == "" {
			cl.w.Null()
		} else {
			cl.w.BulkString(cl.c.name)
		}
	case sub == "SETNAME" && len(cl.args) == 3:
		cl.c.name = string(cl.args[2])
		cl.w.OK()
	case sub == "SETINFO" && len(cl.args) == 4:
		cl.w.OK()
	default:
		return usageErr("unknown CLIENT subcommand or wrong arguments; usage: %s", cl.cmd.Synopsis)
	}
	return nil
}

// CHECKPOINT
func cmdCheckpoint(cl *call) error {
	info, err := cl.s.db.Checkpoint(cl.ctx)
	if err != nil {
		return err
	}
	if info.File == "" {
		cl.w.Null()
		return nil
	}
	w := cl.w
	w.Map(5)
	w.BulkString("kind")
	w.BulkString(info.Kind)
	w.BulkString("file")
	w.BulkString(info.File)
	w.BulkString("lsn")
	w.Int(int64(info.LSN))
	w.BulkString("bytes")
	w.Int(info.Bytes)
	w.BulkString("duration_us")
	w.Int(info.Duration.Microseconds())
	return nil
}

// SHUTDOWN
func cmdShutdown(cl *call) error {
	if len(cl.args) > 2 {
		return cl.cmd.arityError()
	}
	cl.w.OK()
	cl.c.quit = true
	cl.s.Shutdown()
	return nil
}

// STATS [ns]
func cmdStats(cl *call) error {
	if len(cl.args) > 2 {
		return cl.cmd.arityError()
	}
	var v any
	if len(cl.args) == 2 {
		ns, err := cl.ns(cl.args[1])
		if err != nil {
			return err
		}
		v = NamespaceReply{Namespace: namespaceStats(ns.Info()), Programs: cl.s.programsStats(ns.Name())}
	} else {
		v = cl.s.Stats()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	cl.w.Bulk(b)
	return nil
}

// Stats is what STATS replies (as JSON).
type Stats struct {
	Server   ServerStats            `json:"server"`
	Commands map[string]CommandStat `json:"commands"`
	Store    StoreStats             `json:"store"`
	Programs []ProgramStats         `json:"programs,omitempty"`
	// Cluster is set in cluster mode.
	Cluster *ClusterStatus `json:"cluster,omitempty"`
}

// NamespaceReply is what STATS ns replies (as JSON).
type NamespaceReply = cube.NamespaceReport

// ServerStats describes the daemon itself.
type ServerStats struct {
	Version          string  `json:"version"`
	PID              int     `json:"pid"`
	UptimeS          float64 `json:"uptime_s"`
	Clients          int     `json:"clients"`
	TCPClients       int     `json:"tcp_clients"`
	ConnectionsTotal int64   `json:"connections_total"`
	Rejected         int64   `json:"connections_rejected"`
	TimedOut         int64   `json:"connections_timed_out"`
	// AuthFailures counts wrong tokens (AUTH and HELLO ... AUTH).
	AuthFailures    int64 `json:"auth_failures"`
	ProtocolErrors  int64 `json:"protocol_errors"`
	UnknownCommands int64 `json:"unknown_commands"`
	// Cancelled counts commands cancelled because their client closed
	// the connection while they ran (Ctrl-C in redis-cli or the REPL).
	Cancelled         int64  `json:"commands_cancelled"`
	HeapBytes         uint64 `json:"heap_bytes"`
	Goroutines        int    `json:"goroutines"`
	CommandsProcessed int64  `json:"commands_processed"`
}

// Stats gathers the daemon's, the store's and the programs' statistics.
func (s *Server) Stats() Stats {
	// runtime/metrics, unlike ReadMemStats, does not stop the world.
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	var heap uint64
	if sample[0].Value.Kind() == metrics.KindUint64 {
		heap = sample[0].Value.Uint64()
	}
	cmds := s.CommandStats()
	s.mu.Lock()
	clients, tcpClients := len(s.conns), s.nTCP
	s.mu.Unlock()
	var total int64
	for _, c := range cmds {
		total += c.Calls
	}
	var cs *ClusterStatus
	if s.o.Cluster != nil {
		st := s.o.Cluster.Status()
		cs = &st
	}
	return Stats{
		Cluster: cs,
		Server: ServerStats{
			Version: s.o.Version, PID: os.Getpid(), UptimeS: time.Since(s.started).Seconds(),
			Clients: clients, TCPClients: tcpClients, AuthFailures: s.stats.authFailures.Load(), ConnectionsTotal: s.stats.accepted.Load(), Rejected: s.stats.rejected.Load(),
			TimedOut: s.stats.timedOut.Load(), ProtocolErrors: s.stats.protoErrors.Load(),
			UnknownCommands: s.stats.unknown.Load(), Cancelled: s.stats.cancelled.Load(), HeapBytes: heap, Goroutines: runtime.NumGoroutine(),
			CommandsProcessed: total,
		},
		Commands: cmds,
		Store:    storeStats(s.db.StoreInfo()),
		Programs: s.programsStats(""),
	}
}

// INFO [section]
func cmdInfo(cl *call) error {
	if len(cl.args) > 2 {
		return cl.cmd.arityError()
	}
	want := "all"
	if len(cl.args) == 2 {
		want = strings.ToLower(string(cl.args[1]))
	}
	st := cl.s.Stats()
	es := cl.s.db.StoreInfo()
	var b strings.Builder
	section := func(name string) bool {
		if want != "all" && want != "everything" && want != "default" && want != name {
			return false
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		fmt.Fprintf(&b, "# %s\r\n", strings.ToUpper(name[:1])+name[1:])
		return true
	}
	if section("server") {
		fmt.Fprintf(&b, "cube_version:%s\r\nredis_version:7.0.0\r\nprocess_id:%d\r\nuptime_in_seconds:%d\r\ngo_version:%s\r\n",
			st.Server.Version, st.Server.PID, int(st.Server.UptimeS), runtime.Version())
		if cl.s.unixPath != "" {
			fmt.Fprintf(&b, "unixsocket:%s\r\n", cl.s.unixPath)
		}
		if cl.s.o.Listen != "" {
			fmt.Fprintf(&b, "tcp_listen:%s\r\n", cl.s.o.Listen)
		}
	}
	if section("clients") {
		fmt.Fprintf(&b, "connected_clients:%d\r\nconnected_tcp_clients:%d\r\nmaxclients:%d\r\nmaxclients_unix:%d\r\nrejected_connections:%d\r\ntimedout_connections:%d\r\nauth_failures:%d\r\n",
			st.Server.Clients, st.Server.TCPClients, cl.s.o.MaxClients, cl.s.o.MaxUnixClients, st.Server.Rejected, st.Server.TimedOut, st.Server.AuthFailures)
	}
	if section("memory") {
		fmt.Fprintf(&b, "used_memory:%d\r\ngoroutines:%d\r\n", st.Server.HeapBytes, st.Server.Goroutines)
	}
	if section("persistence") {
		fmt.Fprintf(&b, "sync_mode:%s\r\nwritten_lsn:%d\r\nsynced_lsn:%d\r\nlog_bytes:%d\r\nfsyncs:%d\r\nfsync_p50_us:%d\r\nfsync_p99_us:%d\r\nfsync_max_us:%d\r\ncheckpoints:%d\r\n",
			es.Sync, es.WrittenLSN, es.SyncedLSN, es.LogBytes, es.Syncs,
			es.SyncLatency.P50.Microseconds(), es.SyncLatency.P99.Microseconds(), es.SyncLatency.Max.Microseconds(), len(es.Checkpoints))
		if es.Err != "" {
			fmt.Fprintf(&b, "store_error:%s\r\n", es.Err)
		}
	}
	if section("stats") {
		fmt.Fprintf(&b, "total_connections_received:%d\r\ntotal_commands_processed:%d\r\nprotocol_errors:%d\r\nunknown_commands:%d\r\ncommands_cancelled:%d\r\n",
			st.Server.ConnectionsTotal, st.Server.CommandsProcessed, st.Server.ProtocolErrors, st.Server.UnknownCommands, st.Server.Cancelled)
	}
	if section("commandstats") {
		names := make([]string, 0, len(st.Commands))
		for n := range st.Commands {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			c := st.Commands[n]
			fmt.Fprintf(&b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,failed_calls=%d,p50_usec=%.2f,p99_usec=%.2f,max_usec=%.2f\r\n",
				n, c.Calls, int64(c.MeanUS*float64(c.Calls)), c.MeanUS, c.Errors, c.P50US, c.P99US, c.MaxUS)
		}
	}
	if section("cluster") {
		if cs := st.Cluster; cs == nil {
			b.WriteString("cluster_enabled:0\r\n")
		} else {
			fmt.Fprintf(&b, "cluster_enabled:1\r\nnode_id:%s\r\nrole:%s\r\nleader_id:%s\r\nleader_addr:%s\r\nterm:%d\r\ncommit_index:%d\r\napplied_index:%d\r\nlast_contact_ms:%d\r\npeers:%d\r\nreads:%s\r\nstale_ms:%d\r\nmax_stale_ms:%d\r\n",
				cs.NodeID, cs.Role, cs.LeaderID, cs.LeaderAddr, cs.Term, cs.CommitIndex, cs.AppliedIndex, cs.LastContactMS, cs.Peers, cs.Reads, cs.StaleMS, cs.MaxStaleMS)
		}
	}
	if section("keyspace") {
		for _, n := range es.Namespaces {
			fmt.Fprintf(&b, "ns_%s:dims=%d,curve=%s,values=%d,edges=%d\r\n", n.Name, n.Dims, strings.ToLower(n.Curve), n.Values, n.Edges)
		}
	}
	if b.Len() == 0 {
		return usageErr("INFO: unknown section '%s'; sections: server clients memory persistence stats commandstats cluster keyspace", want)
	}
	cl.w.Verbatim(b.String())
	return nil
}
