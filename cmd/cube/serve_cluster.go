package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server"
	"github.com/cubelinux/cube/server/cluster"
)

// clusterFlags are cube serve's cluster mode (docs/CLUSTER.md).
type clusterFlags struct {
	on                          bool
	nodeID, raft, join, raftDir string
	advertise                   string
	snapEvery, trailing         uint64
	snapInterval                time.Duration
	heartbeat, election, lease  time.Duration
	maxStale                    time.Duration
}

func (c *clusterFlags) add(f *pflag.FlagSet) {
	f.BoolVar(&c.on, "cluster", false, "run as a node of a replicated cluster (Raft); needs --node-id, --raft and --listen")
	f.StringVar(&c.nodeID, "node-id", "", "this node's name in the cluster, kept across restarts")
	f.StringVar(&c.raft, "raft", "", "host:port for Raft between the nodes")
	f.StringVar(&c.join, "join", "", "client (RESP) address of a member to join through; without it, a node with no Raft state starts a new cluster")
	f.StringVar(&c.raftDir, "raft-dir", "", "Raft's log and snapshots (default DATA/raft)")
	f.StringVar(&c.advertise, "advertise", "", "the address clients reach this node at, given in redirects (default --listen)")
	// Raft's timeouts: the defaults suit a LAN (a dead leader is replaced
	// in about a second); a cluster across a WAN wants them longer.
	f.DurationVar(&c.heartbeat, "raft-heartbeat-timeout", 0, "how long a follower goes without hearing from the leader before it calls an election (default 500ms, for a LAN; Raft's own is 1s)")
	f.DurationVar(&c.election, "raft-election-timeout", 0, "how long a candidate waits for votes before it tries again (default 500ms, or --raft-heartbeat-timeout if that is longer)")
	f.DurationVar(&c.lease, "raft-leader-lease", 0, "how long a leader stays leader without hearing from a majority (default 250ms, or half of --raft-heartbeat-timeout if that is longer)")
	f.DurationVar(&c.maxStale, "max-stale", cluster.DefaultMaxStale, "a follower answers a read only if it holds every write acknowledged more than this long ago, else redirects it to the leader (0: followers answer no reads)")
	// For tests that make a follower catch up by snapshot.
	f.Uint64Var(&c.snapEvery, "raft-snapshot-threshold", 0, "entries applied between Raft snapshots (default 8192)")
	f.Uint64Var(&c.trailing, "raft-trailing-logs", 0, "entries kept after a snapshot for followers behind (default Raft's, 10240)")
	f.DurationVar(&c.snapInterval, "raft-snapshot-interval", 0, "how often Raft checks whether a snapshot is due (default Raft's, 2m)")
	for _, h := range []string{"raft-snapshot-threshold", "raft-trailing-logs", "raft-snapshot-interval"} {
		f.MarkHidden(h)
	}
}

func (c *clusterFlags) check(listen string) error {
	if !c.on {
		if c.nodeID != "" || c.raft != "" || c.join != "" || c.raftDir != "" || c.advertise != "" {
			return usagef("serve: --node-id, --raft, --join, --raft-dir and --advertise need --cluster")
		}
		if c.maxStale != cluster.DefaultMaxStale {
			return usagef("serve: --max-stale needs --cluster")
		}
		return nil
	}
	if c.nodeID == "" || c.raft == "" {
		return usagef("serve: --cluster needs --node-id ID and --raft HOST:PORT")
	}
	if c.maxStale < 0 {
		return usagef("serve: --max-stale must be 0 (followers answer no reads) or positive")
	}
	if listen == "" {
		return usagef("serve: --cluster needs --listen HOST:PORT: followers send clients to the leader's TCP address")
	}
	if c.advertise == "" {
		c.advertise = listen
	}
	// Raft wants election >= heartbeat >= lease: a longer heartbeat
	// timeout alone lengthens the defaults of the others with it.
	if c.heartbeat > 0 {
		if c.election == 0 && c.heartbeat > cluster.DefaultElectionTimeout {
			c.election = c.heartbeat
		}
		if c.lease == 0 && c.heartbeat/2 > cluster.DefaultLeaderLease {
			c.lease = c.heartbeat / 2
		}
	}
	hb, el, le := or(c.heartbeat, cluster.DefaultHeartbeatTimeout), or(c.election, cluster.DefaultElectionTimeout), or(c.lease, cluster.DefaultLeaderLease)
	if el < hb || le > hb {
		return usagef("serve: Raft needs --raft-election-timeout (%v) >= --raft-heartbeat-timeout (%v) >= --raft-leader-lease (%v): lengthen the election timeout or shorten the lease", el, hb, le)
	}
	return nil
}

// storeSync is the sync mode a node's store runs in: a write is
// acknowledged once a majority's Raft logs hold it, fsynced, so the
// store's own log, which ApplyReplicated appends to without waiting,
// need not be fsynced at each write too (that was one more fdatasync a
// log write on every node, a third of a node's). Under --sync always it
// syncs every interval, and at each Raft snapshot (cluster's fsm), the
// point a restarted node replays Raft's log from; --sync interval and
// none are as given.
func (c *clusterFlags) storeSync(m cube.SyncMode) cube.SyncMode {
	if c.on && m == cube.SyncAlways {
		return cube.SyncInterval
	}
	return m
}

// or is d, or def if d is zero.
func or(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// start starts the node, or returns nil outside cluster mode.
func (c *clusterFlags) start(ctx context.Context, db *cube.DB, data, token string, log *slog.Logger, stderr io.Writer) (*cluster.Node, error) {
	if !c.on {
		return nil, nil
	}
	dir := c.raftDir
	if dir == "" {
		dir = filepath.Join(data, "raft")
	}
	maxStale := c.maxStale
	if maxStale == 0 {
		maxStale = -1 // cluster.Options: negative is none, zero the default
	}
	return cluster.Start(ctx, db, cluster.Options{
		MaxStale: maxStale,
		NodeID:   c.nodeID, RaftAddr: c.raft, RESPAddr: c.advertise, Dir: dir,
		Join: c.join, AuthToken: token, Logger: log, LogOutput: stderr,
		SnapshotThreshold: c.snapEvery, TrailingLogs: c.trailing, SnapshotInterval: c.snapInterval,
		HeartbeatTimeout: c.heartbeat, ElectionTimeout: c.election, LeaderLease: c.lease,
	})
}

// clusterOf is node as the server's Cluster: nil, not a nil *Node.
func clusterOf(node *cluster.Node) server.Cluster {
	if node == nil {
		return nil
	}
	return node
}
