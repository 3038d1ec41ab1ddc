package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/redis/go-redis/v9"
	"go.etcd.io/bbolt"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server"
)

// Defaults for the zero fields of Options: Raft's timeouts tuned for a
// LAN (its own defaults, 1 s, suit a WAN), so that a dead leader is
// replaced in about a second.
const (
	DefaultHeartbeatTimeout  = 500 * time.Millisecond
	DefaultElectionTimeout   = 500 * time.Millisecond
	DefaultLeaderLease       = 250 * time.Millisecond
	DefaultSnapshotThreshold = 8192
	DefaultJoinTimeout       = 30 * time.Second
	DefaultMaxStale          = 500 * time.Millisecond
)

// logCacheSize is how many of the latest Raft entries the leader keeps
// in memory for replication. An entry is a batch of writes of up to
// maxBatchBytes, and one is in flight at a time (propose.go), so a
// follower that keeps up needs the last one or two: the rest is for
// one a little behind, and bounds the cache at 128 MiB.
const logCacheSize = 128

// DirectoryNamespace is the namespace where the cluster keeps its
// members' client addresses (metadata "resp/<id>"), so that every node,
// a new leader's followers included, can redirect writes. It is written
// through Raft like any other, and is in snapshots.
const DirectoryNamespace = "cube.cluster"

// Options configure a Node.
type Options struct {
	// NodeID names the node in the cluster, for good: a restarted node
	// must keep it.
	NodeID string
	// RaftAddr is the host:port Raft listens on and other nodes dial
	// (a host, not 0.0.0.0: it is advertised as it is).
	RaftAddr string
	// RESPAddr is where clients reach this node's daemon
	// (cube serve --listen): the address a follower's redirect gives.
	RESPAddr string
	// Dir holds Raft's log (raft-log), its term and vote (raft.db,
	// bbolt) and its snapshots.
	Dir string
	// Join is the RESP address of a member, which this node asks
	// (CLUSTER.JOIN, following redirects) to add it, if Dir holds no
	// Raft state yet. With neither state nor Join, the node bootstraps
	// a new cluster of itself.
	Join string
	// AuthToken authenticates the join (every member's daemon has the
	// same token).
	AuthToken string

	HeartbeatTimeout time.Duration
	ElectionTimeout  time.Duration
	LeaderLease      time.Duration
	// SnapshotThreshold, SnapshotInterval and TrailingLogs are Raft's
	// (zero: Raft's defaults, but DefaultSnapshotThreshold): a snapshot
	// is taken when, checked every SnapshotInterval, that many entries
	// were applied since the last, and TrailingLogs entries are kept
	// after it for followers that are behind; one further behind gets
	// the snapshot.
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64
	JoinTimeout       time.Duration
	// MaxStale bounds how stale a read a follower answers: one whose
	// store may lack a write acknowledged more than MaxStale ago
	// redirects the read to the leader instead (MOVED, or TRYAGAIN while
	// there is no leader). Zero means DefaultMaxStale; negative, that
	// followers answer no reads. The leader's reads are linearizable
	// whatever it is (read.go).
	MaxStale time.Duration
	// Logger receives the node's notices; Raft's own go to LogOutput.
	Logger    *slog.Logger
	LogOutput io.Writer
}

// Node is one member of a cube cluster: Raft over a store. It is the
// store's Replicator and the daemon's server.Cluster.
type Node struct {
	o     Options
	db    *cube.DB
	raft  *raft.Raft
	trans *transport
	logs  *walStore
	state *raftboltdb.BoltStore
	fsm   *fsm
	rd    reads
	prop  proposer

	readyTerm atomic.Uint64 // the term in which this node, leader, applied all before it
	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

var (
	_ cube.Replicator = (*Node)(nil)
	_ server.Cluster  = (*Node)(nil)
)

// Start makes db a member of a cluster: it opens Raft's state in
// o.Dir, sets itself as db's Replicator (so call it before anything
// writes to db), and bootstraps, joins or rejoins as Options.Join
// says. It returns once the node runs; on a join, once the leader has
// added it.
//
// A restarted node keeps its store as it was and replays the Raft
// entries after its last snapshot on it: records are applied in the
// same order again, which ends in the same state (see
// cube.DB.ApplyReplicated).
func Start(ctx context.Context, db *cube.DB, o Options) (*Node, error) {
	if o.NodeID == "" || o.RaftAddr == "" || o.RESPAddr == "" || o.Dir == "" {
		return nil, fmt.Errorf("%w: a node needs an id, a Raft address, a client (RESP) address and a directory", ErrBadOptions)
	}
	if o.HeartbeatTimeout <= 0 {
		o.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if o.ElectionTimeout <= 0 {
		o.ElectionTimeout = DefaultElectionTimeout
	}
	if o.LeaderLease <= 0 {
		o.LeaderLease = DefaultLeaderLease
	}
	if o.SnapshotThreshold == 0 {
		o.SnapshotThreshold = DefaultSnapshotThreshold
	}
	if o.MaxStale == 0 {
		o.MaxStale = DefaultMaxStale
	}
	if o.JoinTimeout <= 0 {
		o.JoinTimeout = DefaultJoinTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.LogOutput == nil {
		o.LogOutput = io.Discard
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	hl := hclog.New(&hclog.LoggerOptions{Name: "raft", Output: o.LogOutput, Level: hclog.Warn})
	// raft.db (bbolt) keeps Raft's term and vote, written at elections;
	// its log is walStore, which syncs once per append (logstore.go).
	// A build before it kept the log in raft.db too: migrateLogs moves
	// it. bbolt's free list is not written at each commit (it rebuilds
	// it from the pages as the file opens, as etcd has it).
	state, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(o.Dir, "raft.db"),
		BoltOptions: &bbolt.Options{NoFreelistSync: true, FreelistType: bbolt.FreelistMapType}})
	if err != nil {
		return nil, fmt.Errorf("cluster: open Raft's state in %s: %w", o.Dir, err)
	}
	logs, err := openWALStore(filepath.Join(o.Dir, "raft-log"))
	if err != nil {
		state.Close()
		return nil, err
	}
	// Until Raft runs, a failure closes here what Start opened; after,
	// Close does.
	var trans *transport
	undo := true
	defer func() {
		if undo {
			if trans != nil {
				trans.Close()
			}
			logs.Close()
			state.Close()
		}
	}()
	if err := migrateLogs(state, logs); err != nil {
		return nil, err
	}
	// The leader sends followers the entries it has just written: from
	// memory, not read back from the log and decoded.
	cached, err := raft.NewLogCache(logCacheSize, logs)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(o.Dir, 2, hl)
	if err != nil {
		return nil, fmt.Errorf("cluster: snapshots in %s: %w", o.Dir, err)
	}
	tcp, err := raft.NewTCPTransportWithLogger(o.RaftAddr, nil, 3, 10*time.Second, hl)
	if err != nil {
		return nil, fmt.Errorf("cluster: Raft transport on %s: %w", o.RaftAddr, err)
	}
	trans = newTransport(tcp, logs.Durable)
	cfg := raft.DefaultConfig()
	cfg.LocalID = raft.ServerID(o.NodeID)
	// Pre-vote stays on (Raft's default): a node cut off from the
	// leader alone must not raise its term and depose the leader when
	// the link heals (TestPartitionBridge).
	cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout = o.HeartbeatTimeout, o.ElectionTimeout, o.LeaderLease
	cfg.SnapshotThreshold = o.SnapshotThreshold
	if o.SnapshotInterval > 0 {
		cfg.SnapshotInterval = o.SnapshotInterval
	}
	if o.TrailingLogs > 0 {
		cfg.TrailingLogs = o.TrailingLogs
	}
	cfg.NoSnapshotRestoreOnStart = true // the store is durable on its own
	cfg.Logger = hl
	existing, err := raft.HasExistingState(logs, state, snaps)
	if err != nil {
		return nil, fmt.Errorf("cluster: read Raft's state: %w", err)
	}
	n := &Node{o: o, db: db, trans: trans, logs: logs, state: state, stop: make(chan struct{}),
		fsm: &fsm{db: db, snaps: snaps}}
	n.prop.wake = make(chan struct{}, 1)
	n.rd.epoch = time.Now()
	n.rd.readLease = min(o.LeaderLease, o.HeartbeatTimeout/2)
	n.rd.fresh.Store(-1)
	// The store holds what the last snapshot did (it is durable on its
	// own: NoSnapshotRestoreOnStart), and Raft replays what came after.
	if metas, err := snaps.List(); err == nil && len(metas) > 0 {
		n.fsm.applied.Store(metas[0].Index)
	}
	db.SetReplicator(n)
	n.fsm.durable = func(index uint64) error { return logs.waitDurable(index, n.stop) }
	var started atomic.Pointer[raft.Raft]
	// Raft's main goroutine appends and sets its state, so what this
	// reads is the state of the append it is called in.
	logs.leading = func() bool {
		r := started.Load()
		return r != nil && r.State() == raft.Leader
	}
	r, err := raft.NewRaft(cfg, n.fsm, cached, state, snaps, trans)
	if err != nil {
		return nil, fmt.Errorf("cluster: start Raft: %w", err)
	}
	started.Store(r)
	n.raft = r
	undo = false
	n.wg.Add(2)
	go n.proposeLoop()
	go n.watchLeadership()
	if o.MaxStale > 0 {
		n.wg.Add(1)
		go n.trackFreshness()
	}
	switch {
	case existing:
		o.Logger.Info("cluster: rejoining with the Raft state in "+o.Dir, "id", o.NodeID)
	case o.Join == "":
		f := r.BootstrapCluster(raft.Configuration{Servers: []raft.Server{{ID: cfg.LocalID, Address: trans.LocalAddr()}}})
		if err := f.Error(); err != nil {
			n.Close()
			return nil, fmt.Errorf("cluster: bootstrap: %w", err)
		}
		o.Logger.Info("cluster: bootstrapped a new cluster", "id", o.NodeID, "raft", trans.LocalAddr())
	default:
		jctx, cancel := context.WithTimeout(ctx, o.JoinTimeout)
		defer cancel()
		if err := n.join(jctx); err != nil {
			n.Close()
			return nil, err
		}
	}
	return n, nil
}

// Close stops the node's Raft (the store stays open: close it after).
func (n *Node) Close() error {
	var err error
	n.closeOnce.Do(func() {
		close(n.stop)
		err = n.raft.Shutdown().Error()
		n.wg.Wait()
		n.trans.Close()
		if e := n.logs.Close(); err == nil {
			err = e
		}
		if e := n.state.Close(); err == nil {
			err = e
		}
	})
	return err
}

// watchLeadership marks the node ready for writes and reads once,
// newly leader, it has applied every entry before its term: a read, or
// a read-write transaction, must see what earlier leaders committed. It
// commits a no-op command (empty data) for that, not a Barrier, which
// followers never see: the no-op's index is one their store applies,
// which the leader's read index may then name (read.go). Then it writes
// its client address to the directory.
func (n *Node) watchLeadership() {
	defer n.wg.Done()
	for {
		select {
		case <-n.stop:
			return
		case leader := <-n.raft.LeaderCh():
			n.readyTerm.Store(0)
			if !leader {
				continue
			}
			term := n.raft.CurrentTerm()
			if err := n.raft.Apply(nil, 0).Error(); err != nil {
				n.o.Logger.Warn("cluster: elected, but could not catch up", "err", err)
				continue
			}
			n.readyTerm.Store(term)
			n.o.Logger.Info("cluster: leader", "id", n.o.NodeID, "term", term)
			n.wg.Add(1)
			go func() {
				defer n.wg.Done()
				if err := n.setDirectory(context.Background(), n.o.NodeID, n.o.RESPAddr); err != nil {
					n.o.Logger.Warn("cluster: cannot record this node's address", "err", err)
				}
			}()
		}
	}
}

// setDirectory records a member's client address, if it changed.
func (n *Node) setDirectory(ctx context.Context, id, respAddr string) error {
	ns, err := n.db.Namespace(DirectoryNamespace)
	if errors.Is(err, cube.ErrNoNamespace) {
		ns, err = n.db.CreateNamespace(ctx, DirectoryNamespace, cube.NamespaceOptions{Dims: 1})
		if errors.Is(err, cube.ErrNamespaceExists) {
			ns, err = n.db.Namespace(DirectoryNamespace)
		}
	}
	if err != nil {
		return err
	}
	return ns.Update(ctx, func(tx *cube.Tx) error {
		if v, ok := tx.Meta("resp/" + id); ok && string(v) == respAddr {
			return nil
		}
		return tx.SetMeta("resp/"+id, []byte(respAddr))
	})
}

// directory returns a member's client address, as this node knows it.
func (n *Node) directory(id string) string {
	ns, err := n.db.Namespace(DirectoryNamespace)
	if err != nil {
		return ""
	}
	var addr string
	ns.View(context.Background(), func(tx *cube.Tx) error {
		v, _ := tx.Meta("resp/" + id)
		addr = string(v)
		return nil
	})
	return addr
}

// WriteCheck implements server.Cluster.
func (n *Node) WriteCheck() error {
	if n.raft.State() == raft.Leader {
		if t := n.readyTerm.Load(); t != 0 && t == n.raft.CurrentTerm() {
			return nil
		}
		return tryAgain(fmt.Errorf("%w: this node was just elected and is applying what the last leader committed; retry shortly", ErrNoLeader))
	}
	return n.notLeader()
}

func (n *Node) notLeader() error {
	raftAddr, id := n.raft.LeaderWithID()
	if id == "" || id == raft.ServerID(n.o.NodeID) {
		return tryAgain(fmt.Errorf("%w: no leader is known (an election may be under way, or most nodes are down); retry shortly", ErrNoLeader))
	}
	addr := n.directory(string(id))
	if addr == "" {
		return tryAgain(fmt.Errorf("%w: the leader is %s (Raft at %s), whose client address this node does not know yet; retry shortly", ErrNotLeader, id, raftAddr))
	}
	return &Redirect{LeaderID: string(id), Addr: addr}
}

// translate puts Raft's errors in the daemon's words.
func (n *Node) translate(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader):
		return n.notLeader()
	case errors.Is(err, raft.ErrLeadershipLost):
		return tryAgain(fmt.Errorf("%w (%v)", ErrUnknownOutcome, err))
	case errors.Is(err, raft.ErrRaftShutdown):
		return fmt.Errorf("%w: cluster node is shutting down", cube.ErrClosed)
	}
	return fmt.Errorf("cluster: %w", err)
}

// Info implements server.Cluster.
func (n *Node) Info() [][2]string {
	rs := n.Status()
	st := n.raft.Stats()
	raftAddr, leader := n.raft.LeaderWithID()
	info := [][2]string{
		{"node_id", n.o.NodeID},
		{"role", strings.ToLower(st["state"])},
		{"term", st["term"]},
		{"commit_index", st["commit_index"]},
		{"applied_index", st["applied_index"]},
		{"last_log_index", st["last_log_index"]},
		{"last_snapshot_index", st["last_snapshot_index"]},
		{"last_contact", st["last_contact"]},
		{"reads", rs.Reads},
		{"stale_ms", strconv.FormatInt(rs.StaleMS, 10)},
		{"max_stale_ms", strconv.FormatInt(rs.MaxStaleMS, 10)},
		{"leader_id", string(leader)},
		{"leader_raft_addr", string(raftAddr)},
		{"leader_resp_addr", n.directory(string(leader))},
		{"raft_addr", string(n.trans.LocalAddr())},
		{"resp_addr", n.o.RESPAddr},
	}
	if f := n.raft.GetConfiguration(); f.Error() == nil {
		servers := slices.Clone(f.Configuration().Servers)
		info = append(info, [2]string{"members", strconv.Itoa(len(servers))})
		for _, s := range servers {
			info = append(info, [2]string{"member_" + string(s.ID), fmt.Sprintf("raft=%s,resp=%s,%s", s.Address, n.directory(string(s.ID)), strings.ToLower(s.Suffrage.String()))})
		}
	}
	return info
}

// Join implements server.Cluster: the address goes to the directory
// first, so that the node's redirects work as soon as it is a member.
func (n *Node) Join(ctx context.Context, id, raftAddr, respAddr string) error {
	if err := n.setDirectory(ctx, id, respAddr); err != nil {
		return err
	}
	if err := n.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(raftAddr), 0, 0).Error(); err != nil {
		return n.translate(err)
	}
	n.o.Logger.Info("cluster: added a member", "id", id, "raft", raftAddr, "resp", respAddr)
	return nil
}

// Leave implements server.Cluster.
func (n *Node) Leave(ctx context.Context, id string) error {
	if err := n.raft.RemoveServer(raft.ServerID(id), 0, 0).Error(); err != nil {
		return n.translate(err)
	}
	n.o.Logger.Info("cluster: removed a member", "id", id)
	return nil
}

// join asks the member at o.Join, and the leader it redirects to, to
// add this node, until it does or ctx ends.
func (n *Node) join(ctx context.Context) error {
	addr := n.o.Join
	var last error
	for {
		if ctx.Err() != nil {
			return fmt.Errorf("cluster: join through %s: %w (last answer: %v)", n.o.Join, ctx.Err(), last)
		}
		c := redis.NewClient(&redis.Options{Addr: addr, Password: n.o.AuthToken, MaxRetries: -1, DialTimeout: 2 * time.Second})
		err := c.Do(ctx, "CLUSTER.JOIN", n.o.NodeID, string(n.trans.LocalAddr()), n.o.RESPAddr).Err()
		c.Close()
		if err == nil {
			n.o.Logger.Info("cluster: joined", "id", n.o.NodeID, "via", addr)
			return nil
		}
		last = err
		if to, ok := strings.CutPrefix(err.Error(), "MOVED 0 "); ok {
			addr = to
			continue
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: join through %s: %w (last answer: %v)", n.o.Join, ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
