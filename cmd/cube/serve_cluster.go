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
}

func (c *clusterFlags) add(f *pflag.FlagSet) {
	f.BoolVar(&c.on, "cluster", false, "run as a node of a replicated cluster (Raft); needs --node-id, --raft and --listen")
	f.StringVar(&c.nodeID, "node-id", "", "this node's name in the cluster, kept across restarts")
	f.StringVar(&c.raft, "raft", "", "host:port for Raft between the nodes")
	f.StringVar(&c.join, "join", "", "client (RESP) address of a member to join through; without it, a node with no Raft state starts a new cluster")
	f.StringVar(&c.raftDir, "raft-dir", "", "Raft's log and snapshots (default DATA/raft)")
	f.StringVar(&c.advertise, "advertise", "", "the address clients reach this node at, given in redirects (default --listen)")
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
		return nil
	}
	if c.nodeID == "" || c.raft == "" {
		return usagef("serve: --cluster needs --node-id ID and --raft HOST:PORT")
	}
	if listen == "" {
		return usagef("serve: --cluster needs --listen HOST:PORT: followers send clients to the leader's TCP address")
	}
	if c.advertise == "" {
		c.advertise = listen
	}
	return nil
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
	return cluster.Start(ctx, db, cluster.Options{
		NodeID: c.nodeID, RaftAddr: c.raft, RESPAddr: c.advertise, Dir: dir,
		Join: c.join, AuthToken: token, Logger: log, LogOutput: stderr,
		SnapshotThreshold: c.snapEvery, TrailingLogs: c.trailing, SnapshotInterval: c.snapInterval,
	})
}

// clusterOf is node as the server's Cluster: nil, not a nil *Node.
func clusterOf(node *cluster.Node) server.Cluster {
	if node == nil {
		return nil
	}
	return node
}
