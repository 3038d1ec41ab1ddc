package server

import (
	"context"
	"errors"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Cluster is what the daemon asks of cluster mode (package
// server/cluster, on Raft, implements it). With Options.Cluster set,
// every write command first asks WriteCheck, every read of data
// ReadCheck, and the CLUSTER.* commands reach it.
type Cluster interface {
	// WriteCheck returns nil when this node takes writes (it is the
	// leader), else the error to reply: a redirect to the leader (see
	// Redirect) or why there is none to send the client to.
	WriteCheck() error
	// ReadCheck returns nil when this node may answer a read now at
	// the consistency it promises (linearizable on the leader, bounded
	// stale elsewhere), else the error to reply, as WriteCheck's.
	ReadCheck() error
	// ReadIndex, on the leader, confirms with a quorum that it still
	// leads and returns the index of the last write it applied: every
	// write acknowledged before the call is at or below it. Followers
	// ask it (CLUSTER.READINDEX) to bound their staleness.
	ReadIndex(ctx context.Context) (uint64, error)
	// Status is the node's state for INFO, STATS and the metrics.
	Status() ClusterStatus
	// Info describes the node and the cluster as "key:value" lines in
	// the order they should be shown.
	Info() [][2]string
	// Join adds the node id, reached for Raft at raftAddr and by
	// clients at respAddr, as a voter. Leave removes a node.
	Join(ctx context.Context, id, raftAddr, respAddr string) error
	Leave(ctx context.Context, id string) error
}

// ClusterStatus is a node's place in its cluster, as INFO's Cluster
// section, STATS's "cluster" and the cube_cluster_* metrics show it.
type ClusterStatus struct {
	NodeID string `json:"node_id"`
	// Role is leader, follower, candidate or shutdown.
	Role string `json:"role"`
	// LeaderID and LeaderAddr (its client address) are "" when no
	// leader is known.
	LeaderID     string `json:"leader_id"`
	LeaderAddr   string `json:"leader_addr"`
	Term         uint64 `json:"term"`
	CommitIndex  uint64 `json:"commit_index"`
	AppliedIndex uint64 `json:"applied_index"`
	// LastContactMS is the time since a follower last heard from the
	// leader: 0 on the leader, -1 if never.
	LastContactMS int64 `json:"last_contact_ms"`
	// Peers counts the other voters.
	Peers int `json:"peers"`
	// Reads says how this node answers a read now: "linearizable" (the
	// leader), "stale" (a follower within MaxStaleMS of the leader) or
	// "redirect" (MOVED to the leader, or TRYAGAIN).
	Reads string `json:"reads"`
	// StaleMS bounds how far behind a read on this node may be: it sees
	// every write acknowledged more than StaleMS ago. 0 on a leader that
	// answers reads, -1 when unknown (no leader confirmed this node's
	// state yet).
	StaleMS    int64 `json:"stale_ms"`
	MaxStaleMS int64 `json:"max_stale_ms"`
}

// Reply is an error that is its own reply: its text goes to the client
// as it is, code first (MOVED, TRYAGAIN, CLUSTERDOWN), so that a client
// that knows the code can act on it.
type Reply interface {
	error
	Reply() string
}

// replyText is the reply of err if it is, or wraps, a Reply.
func replyText(err error) (string, bool) {
	var r Reply
	if errors.As(err, &r) {
		return r.Reply(), true
	}
	return "", false
}

// clusterCheck refuses a write on a node that does not take them, and
// a read of data on a node that cannot answer it at the consistency it
// promises. CHECKPOINT is a write of this node's own files, not of the
// data, and the server group's reads (INFO, STATS, COMMAND,
// CLUSTER.INFO) describe this node: every node answers them. A RUN of
// a read-only program is a read; were the program replaced by a
// read-write one before it runs, its write would still be refused on a
// follower, by Raft.
func (c *conn) clusterCheck(cmd *Command, args [][]byte) error {
	cl := c.s.o.Cluster
	if cl == nil || cmd.Flags&Admin != 0 {
		return nil
	}
	switch {
	case (cmd.Name == "RUN" || cmd.Name == "RUN.TYPED") && len(args) >= 3 && c.readOnlyProgram(args[1], args[2]):
		return c.readCheck(cl)
	case cmd.Flags&Write != 0:
		return cl.WriteCheck()
	case cmd.Flags&ReadOnly != 0 && cmd.Group != "server":
		return c.readCheck(cl)
	}
	return nil
}

// readCheck is ReadCheck, after WriteCheck for a connection that reads
// from the leader only (CLUSTER.READS LEADER): WriteCheck passes only on
// the leader, once it has applied what its predecessors committed, and
// redirects elsewhere.
func (c *conn) readCheck(cl Cluster) error {
	if c.leaderReads {
		if err := cl.WriteCheck(); err != nil {
			return err
		}
	}
	return cl.ReadCheck()
}

// CLUSTER.READS [LEADER | ANY]
func cmdClusterReads(cl *call) error {
	switch {
	case len(cl.args) == 1:
		if cl.c.leaderReads {
			cl.w.Simple("LEADER")
		} else {
			cl.w.Simple("ANY")
		}
		return nil
	case len(cl.args) > 2:
		return cl.cmd.arityError()
	}
	switch strings.ToUpper(string(cl.args[1])) {
	case "LEADER":
		cl.c.leaderReads = true
	case "ANY":
		cl.c.leaderReads = false
	default:
		return usageErr("CLUSTER.READS takes LEADER (every read from the leader: linearizable, sees this connection's writes) or ANY (a follower may answer within --max-stale), not '%s'", clip(cl.args[1]))
	}
	cl.w.OK()
	return nil
}

func (c *conn) readOnlyProgram(ns, name []byte) bool {
	p, err := c.s.db.ProgInfo(string(ns), string(name))
	return err == nil && p.ReadOnly
}

// CLUSTER.READINDEX
func cmdClusterReadIndex(cl *call) error {
	cc := cl.s.o.Cluster
	if cc == nil {
		return usageErr("this daemon is not in cluster mode (cube serve --cluster)")
	}
	i, err := cc.ReadIndex(cl.ctx)
	if err != nil {
		return err
	}
	cl.w.Int(int64(i))
	return nil
}

// CLUSTER.INFO
func cmdClusterInfo(cl *call) error {
	cc := cl.s.o.Cluster
	if cc == nil {
		return usageErr("this daemon is not in cluster mode (cube serve --cluster)")
	}
	var b []byte
	for _, kv := range cc.Info() {
		b = append(b, kv[0]...)
		b = append(b, ':')
		b = append(b, kv[1]...)
		b = append(b, "\r\n"...)
	}
	cl.w.Bulk(b)
	return nil
}

// CLUSTER.JOIN id raft-addr resp-addr
func cmdClusterJoin(cl *call) error {
	cc := cl.s.o.Cluster
	if cc == nil {
		return usageErr("this daemon is not in cluster mode (cube serve --cluster)")
	}
	if err := cc.WriteCheck(); err != nil {
		return err
	}
	if err := cc.Join(cl.ctx, string(cl.args[1]), string(cl.args[2]), string(cl.args[3])); err != nil {
		return err
	}
	cl.w.OK()
	return nil
}

// CLUSTER.LEAVE id
func cmdClusterLeave(cl *call) error {
	cc := cl.s.o.Cluster
	if cc == nil {
		return usageErr("this daemon is not in cluster mode (cube serve --cluster)")
	}
	if err := cc.WriteCheck(); err != nil {
		return err
	}
	if err := cc.Leave(cl.ctx, string(cl.args[1])); err != nil {
		return err
	}
	cl.w.OK()
	return nil
}

// clusterCollector is ClusterStatus as gauges, read at scrape time.
type clusterCollector struct {
	c                                                      Cluster
	term, commit, applied, lastContact, stale, peers, role *prometheus.Desc
}

func newClusterCollector(c Cluster) *clusterCollector {
	return &clusterCollector{
		c:           c,
		term:        prometheus.NewDesc("cube_cluster_term", "The Raft term this node is in.", nil, nil),
		commit:      prometheus.NewDesc("cube_cluster_commit_index", "The last Raft index this node knows committed.", nil, nil),
		applied:     prometheus.NewDesc("cube_cluster_applied_index", "The last Raft index this node applied to its store.", nil, nil),
		lastContact: prometheus.NewDesc("cube_cluster_last_contact_seconds", "Time since a follower last heard from the leader (0 on the leader, -1 never).", nil, nil),
		stale:       prometheus.NewDesc("cube_cluster_stale_seconds", "Bound on how far behind a read on this node may be (0 on a leader that answers reads, -1 unknown).", nil, nil),
		peers:       prometheus.NewDesc("cube_cluster_peers", "Other voters in the cluster.", nil, nil),
		role:        prometheus.NewDesc("cube_cluster_role", "1 for the role this node has now.", []string{"role"}, nil),
	}
}

func (cc *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cc.term, cc.commit, cc.applied, cc.lastContact, cc.stale, cc.peers, cc.role} {
		ch <- d
	}
}

func (cc *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	st := cc.c.Status()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	seconds := func(ms int64) float64 {
		if ms < 0 {
			return -1
		}
		return float64(ms) / 1e3
	}
	gauge(cc.term, float64(st.Term))
	gauge(cc.commit, float64(st.CommitIndex))
	gauge(cc.applied, float64(st.AppliedIndex))
	gauge(cc.lastContact, seconds(st.LastContactMS))
	gauge(cc.stale, seconds(st.StaleMS))
	gauge(cc.peers, float64(st.Peers))
	for _, r := range []string{"leader", "follower", "candidate"} {
		v := 0.0
		if st.Role == r {
			v = 1
		}
		gauge(cc.role, v, r)
	}
}
