//go:build unix

package cluster

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/cubelinux/cube"
)

// ackingPeers answers N as members that vote for it and take every
// append, keeping the highest commit index N told each of them.
type ackingPeers struct {
	mu     sync.Mutex
	commit map[string]uint64
}

func (p *ackingPeers) answer(id string, tr *raft.NetworkTransport, rpc raft.RPC) {
	switch req := rpc.Command.(type) {
	case *raft.RequestPreVoteRequest:
		rpc.Respond(&raft.RequestPreVoteResponse{RPCHeader: header(id, tr), Term: req.Term, Granted: true}, nil)
	case *raft.RequestVoteRequest:
		rpc.Respond(&raft.RequestVoteResponse{RPCHeader: header(id, tr), Term: req.Term, Granted: true}, nil)
	case *raft.AppendEntriesRequest:
		last := req.PrevLogEntry
		if n := len(req.Entries); n > 0 {
			last = req.Entries[n-1].Index
		}
		p.mu.Lock()
		p.commit[id] = max(p.commit[id], req.LeaderCommitIndex)
		p.mu.Unlock()
		rpc.Respond(&raft.AppendEntriesResponse{RPCHeader: header(id, tr), Term: req.Term, LastLog: last, Success: true}, nil)
	default:
		rpc.Respond(nil, errors.New("not a member that answers this"))
	}
}

// told returns the highest commit index N sent any peer.
func (p *ackingPeers) told() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(p.commit["L"], p.commit["V"])
}

// TestLeaderAppliesOnlyWhatItsLogHolds: a leader syncs its own copy of
// an entry beside its followers' (see durability in logstore.go), and
// Raft counts the leader's copy before that sync; until it is done the
// leader neither applies the entry, nor acknowledges it, nor tells a
// follower it is committed. N leads L and V, which take every append at
// once, while N's own sync of a write is held. Breaks seen failing:
// fsm.Apply without its wait for the log ("the write was acknowledged
// (<nil>) while N's sync of it was held"); transport without clamp ("N
// told a follower commit index 7 while its own copy of 7 was not
// synced").
func TestLeaderAppliesOnlyWhatItsLogHolds(t *testing.T) {
	ctx := context.Background()
	peers := &ackingPeers{commit: map[string]uint64{}}
	l := startRaftLab(t, nil, peers.answer)
	for deadline := time.Now().Add(10 * time.Second); l.n.WriteCheck() != nil || l.n.directory("N") == ""; {
		if time.Now().After(deadline) {
			t.Fatalf("N did not become a ready leader in 10s: it is %v", l.n.raft.State())
		}
		time.Sleep(10 * time.Millisecond)
	}
	ns, err := l.db.CreateNamespace(ctx, "d", cube.NamespaceOptions{Dims: 1})
	if err != nil {
		t.Fatal(err)
	}

	// The lab's cleanups, closing N, run after this one's release.
	held, release := holdDeferredSyncs(t)

	put := make(chan error, 1)
	go func() { put <- ns.Put(ctx, []int32{1}, []byte("one")) }()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("N's sync of the write did not begin in 10s")
	}
	index := l.n.raft.LastIndex()
	for deadline := time.Now().Add(10 * time.Second); l.n.raft.CommitIndex() < index; {
		if time.Now().After(deadline) {
			t.Fatalf("Raft did not count entry %d committed in 10s (commit index %d)", index, l.n.raft.CommitIndex())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Raft counts it committed; several of Raft's commit timeouts (50ms),
	// each an append telling the followers the commit index, pass.
	time.Sleep(400 * time.Millisecond)
	select {
	case err := <-put:
		t.Fatalf("the write was acknowledged (%v) while N's sync of it was held", err)
	default:
	}
	if v, err := ns.Get(ctx, []int32{1}); err == nil {
		t.Fatalf("the write was applied while N's sync of it was held: d[1] = %q", v)
	}
	if c := peers.told(); c >= index {
		t.Fatalf("N told a follower commit index %d while its own copy of %d was not synced", c, index)
	}

	release()
	select {
	case err := <-put:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the write was not acknowledged in 10s after N's sync went on")
	}
	if v, err := ns.Get(ctx, []int32{1}); err != nil || string(v) != "one" {
		t.Fatalf("after the sync, d[1] = %q, %v", v, err)
	}
	for deadline := time.Now().Add(10 * time.Second); peers.told() < index; {
		if time.Now().After(deadline) {
			t.Fatalf("the followers were not told entry %d is committed in 10s (told %d)", index, peers.told())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
