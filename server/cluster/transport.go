package cluster

import (
	"sync"

	"github.com/hashicorp/raft"
)

// transport is Raft's TCP transport with two changes to how Raft
// receives RPCs, each closing a way hashicorp/raft (v1.7.2 and v1.8.0)
// can leave a node a candidate that believes it has a leader. Such a
// node refuses every vote and pre-vote "since we have a leader", and a
// candidate never forgets a leader, so once that leader is gone, while
// the node is one of the few left, no leader can be elected:
// TestLinearizable on 5 nodes hung so in two CI runs, with the leader and
// one follower stopped and such a node among the three left.
//
// First, heartbeats come through Consumer like every other RPC, so that
// Raft's main loop handles them in turn. Raft would otherwise handle
// them at once on the transport's goroutine (a fast path meant for a
// follower busy writing its log); one that checks the node is a
// follower, and records its leader just after the main loop (its
// heartbeat timeout passed) made the node a candidate and cleared its
// leader, leaves exactly that state. It takes two goroutines meeting in a window of a few
// instructions, which a loaded machine makes likely: a stall that
// delays a follower's timer also delays the heartbeat, and both run
// together when it ends. A follower's own work between two heartbeats
// (an append and its fsync) is far shorter than its heartbeat timeout,
// and one whose timer does pass while heartbeats wait merely stands and
// is refused (pre-vote), then hears from the leader and follows again.
// A follower restoring a large snapshot answers no heartbeat until it
// is done: a leader that needs it for a majority steps down meanwhile
// (RATIONALE.md, "A candidate never believes it has a leader").
//
// Second, a snapshot a leader sends is preceded by an empty heartbeat
// from that leader, in its term.
//
// Raft's rule (§5.2) is that a candidate which hears from a leader of a
// term at least its own returns to follower. hashicorp/raft does so on
// AppendEntries, but on InstallSnapshot only records the sender as
// leader; a restarted follower far behind is often a candidate when its
// snapshot comes (its heartbeat timeout passes while the leader
// prepares it). The heartbeat makes the candidate a follower first, as
// the snapshot should have, and a follower that stops hearing from its
// leader forgets it and stands.
//
// It carries no entries, claims no commit and names no previous entry,
// so it changes no log: only the node's state, term and leader, which
// the snapshot behind it was about to set. One of an older term is
// refused, as the snapshot then is.
//
// Third, as a leader it tells followers no commit index past what its
// own log holds durably (clamp; see durability in logstore.go).
type transport struct {
	*raft.NetworkTransport
	// durable is the index through which this node's log is on disk
	// (nil: no bound).
	durable func() uint64
	rpcs    chan raft.RPC
	stop    chan struct{}
	once    sync.Once
	done    sync.WaitGroup
}

func newTransport(t *raft.NetworkTransport, durable func() uint64) *transport {
	w := &transport{NetworkTransport: t, durable: durable, rpcs: make(chan raft.RPC), stop: make(chan struct{})}
	w.done.Add(1)
	go w.relay()
	return w
}

// Consumer implements raft.Transport.
func (w *transport) Consumer() <-chan raft.RPC { return w.rpcs }

// SetHeartbeatHandler implements raft.Transport by setting none: the
// TCP transport then hands heartbeats to Consumer too.
func (w *transport) SetHeartbeatHandler(func(raft.RPC)) {}

func (w *transport) relay() {
	defer w.done.Done()
	in := w.NetworkTransport.Consumer()
	for {
		var rpc raft.RPC
		select {
		case rpc = <-in:
		case <-w.stop:
			return
		}
		if req, ok := rpc.Command.(*raft.InstallSnapshotRequest); ok {
			hb := raft.RPC{
				Command:  &raft.AppendEntriesRequest{RPCHeader: req.RPCHeader, Term: req.Term},
				RespChan: make(chan raft.RPCResponse, 1), // answered to no one
			}
			if !w.send(hb) {
				return
			}
		}
		if !w.send(rpc) {
			return
		}
	}
}

func (w *transport) send(rpc raft.RPC) bool {
	select {
	case w.rpcs <- rpc:
		return true
	case <-w.stop:
		return false
	}
}

// Close implements raft.WithClose.
func (w *transport) Close() error {
	w.once.Do(func() { close(w.stop) })
	w.done.Wait()
	return w.NetworkTransport.Close()
}

// clamp lowers the commit index a leader sends to what its log holds
// durably: Raft may count the leader's copy of an entry before it is
// synced. A follower told less learns the rest with the next append,
// or Raft's commit timeout.
func (w *transport) clamp(req *raft.AppendEntriesRequest) {
	if w.durable != nil {
		req.LeaderCommitIndex = min(req.LeaderCommitIndex, w.durable())
	}
}

// AppendEntries implements raft.Transport.
func (w *transport) AppendEntries(id raft.ServerID, target raft.ServerAddress, req *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	w.clamp(req)
	return w.NetworkTransport.AppendEntries(id, target, req, resp)
}

// AppendEntriesPipeline implements raft.Transport.
func (w *transport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	p, err := w.NetworkTransport.AppendEntriesPipeline(id, target)
	if err != nil {
		return nil, err
	}
	return &pipeline{AppendPipeline: p, w: w}, nil
}

// pipeline is Raft's append pipeline, its commit indexes clamped.
type pipeline struct {
	raft.AppendPipeline
	w *transport
}

// AppendEntries implements raft.AppendPipeline.
func (p *pipeline) AppendEntries(req *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	p.w.clamp(req)
	return p.AppendPipeline.AppendEntries(req, resp)
}
