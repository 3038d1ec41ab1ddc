package cluster

import (
	"sync"

	"github.com/hashicorp/raft"
)

// transport is Raft's TCP transport with one change to what Raft
// receives: a snapshot a leader sends is preceded by an empty heartbeat
// from that leader, in its term.
//
// Raft's rule (§5.2) is that a candidate which hears from a leader of a
// term at least its own returns to follower. hashicorp/raft (v1.7.2 and
// v1.8.0) does so on AppendEntries, but on InstallSnapshot only records
// the sender as leader, and a candidate never forgets a leader it
// records. Such a node, which a restarted follower far behind often is
// (its heartbeat timeout passes while the leader streams it the
// snapshot), then refuses every vote "since we have a leader" after that
// leader is gone, and while it is one of the few nodes left, no leader
// can be elected: TestLinearizable on 5 nodes hung so, with the leader
// and one follower stopped and this node among the three left
// (TestSnapshotToCandidate shows it in one node). The heartbeat makes
// the candidate a follower first, as the snapshot should have, and a
// follower that stops hearing from its leader forgets it and stands.
//
// It carries no entries, claims no commit and names no previous entry,
// so it changes no log: only the node's state, term and leader, which
// the snapshot behind it was about to set. One of an older term is
// refused, as the snapshot then is.
type transport struct {
	*raft.NetworkTransport
	rpcs chan raft.RPC
	stop chan struct{}
	once sync.Once
	done sync.WaitGroup
}

func newTransport(t *raft.NetworkTransport) *transport {
	w := &transport{NetworkTransport: t, rpcs: make(chan raft.RPC), stop: make(chan struct{})}
	w.done.Add(1)
	go w.relay()
	return w
}

// Consumer implements raft.Transport.
func (w *transport) Consumer() <-chan raft.RPC { return w.rpcs }

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
