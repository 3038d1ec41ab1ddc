package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"github.com/redis/go-redis/v9"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server"
)

// Reads in cluster mode.
//
// On the leader a read is linearizable: it sees every write
// acknowledged before it was sent. The leader answers one only once it
// has applied a no-op of its own term (so every write an earlier leader
// acknowledged is in its store) and while it holds a read lease: a
// quorum accepted an entry of its log (a raft.Barrier) appended less
// than readLease ago. A voter that heard from a leader does not vote
// for another before HeartbeatTimeout has passed, so no other leader
// can have acknowledged a write while the lease lasts; the lease is
// half HeartbeatTimeout at most, the other half a margin for clock
// rates and scheduling. The lease is on the node's own clock, not
// Raft's state: a leader paused (GC, SIGSTOP, a frozen VM) past its
// lease confirms it again before it answers, where raft.State would
// still say Leader. It confirms with a log entry, not with
// raft.VerifyLeader: VerifyLeader counts any heartbeat answer that
// arrives after it was called, and a leader resumed from a pause reads
// answers to heartbeats it sent before the pause, from followers that
// have since elected another leader (TestClusterPausedLeaderReads saw
// it answer a stale read); only requests sent after the entry was
// appended can acknowledge the entry.
//
// Elsewhere a read is bounded stale: a follower answers it only if its
// store holds every write acknowledged more than MaxStale ago, else it
// redirects (MOVED to the leader, or TRYAGAIN while there is none). To
// know that, it asks the leader CLUSTER.READINDEX every MaxStale/4: the
// leader, under its lease, replies the index of the last write it
// applied, which covers every write acknowledged before the question was
// sent; once the follower's store applied that index it is fresh as of
// the time it asked. Raft's own LastContact would not do: heartbeats
// refresh it on a follower that is far behind (catching up, or whose
// log the leader is still repairing).

// lease is the leader's read lease: until is on the node's clock (see
// now).
type lease struct {
	term  uint64
	until time.Duration
}

// verifyCall is one lease renewal in flight, which every read that
// finds the lease expired meanwhile waits for.
type verifyCall struct {
	done chan struct{}
	err  error
}

// freshMark: every write acknowledged before at is at or below index.
type freshMark struct {
	at    time.Duration
	index uint64
}

// maxMarks bounds the marks waiting for the store to apply their index;
// when full, the newest replaces the last (the node then counts itself
// fresh a little later than it could: the safe side).
const maxMarks = 16

// reads is a Node's state for reads.
type reads struct {
	epoch     time.Time // now's zero
	readLease time.Duration

	lease     atomic.Pointer[lease]
	vmu       sync.Mutex
	verifying *verifyCall

	mmu   sync.Mutex
	marks []freshMark
	fresh atomic.Int64 // a time on now's clock: the store holds every write acknowledged before it; negative: never known
}

// now is the node's monotonic clock, which goes on while the process is
// stopped.
func (n *Node) now() time.Duration { return time.Since(n.rd.epoch) }

// ReadCheck implements server.Cluster.
func (n *Node) ReadCheck() error {
	if n.raft.State() == raft.Leader {
		return n.leaderRead()
	}
	if n.o.MaxStale > 0 {
		if d, ok := n.staleness(); ok && d <= n.o.MaxStale {
			return nil
		}
	}
	return n.notLeader()
}

// ReadIndex implements server.Cluster.
func (n *Node) ReadIndex(ctx context.Context) (uint64, error) {
	if n.raft.State() != raft.Leader {
		return 0, n.notLeader()
	}
	if err := n.leaderRead(); err != nil {
		return 0, err
	}
	return n.fsm.applied.Load(), nil
}

// leaderRead is ReadCheck on the leader.
func (n *Node) leaderRead() error {
	term := n.raft.CurrentTerm()
	if t := n.readyTerm.Load(); t == 0 || t != term {
		return tryAgain(fmt.Errorf("%w: this node was just elected and is applying what the last leader committed; retry shortly", ErrNoLeader))
	}
	now := n.now()
	if l := n.rd.lease.Load(); l != nil && l.term == term && now < l.until {
		if l.until-now < n.rd.readLease/2 {
			n.verify(term) // renew early, so that reads seldom wait for it
		}
		return nil
	}
	c := n.verify(term)
	select {
	case <-c.done:
	case <-n.stop:
		return fmt.Errorf("%w: cluster node is shutting down", cube.ErrClosed)
	}
	if c.err != nil {
		if errors.Is(c.err, raft.ErrRaftShutdown) {
			return fmt.Errorf("%w: cluster node is shutting down", cube.ErrClosed)
		}
		return n.notLeader()
	}
	if l := n.rd.lease.Load(); l != nil && l.term == term && n.now() < l.until {
		return nil
	}
	return tryAgain(fmt.Errorf("%w: this node could not confirm in time that it still leads; retry shortly", ErrNoLeader))
}

// verify starts a lease renewal, unless one is in flight, and returns
// it. On success the lease runs from the moment it started: the quorum
// accepted an entry appended after that.
func (n *Node) verify(term uint64) *verifyCall {
	n.rd.vmu.Lock()
	defer n.rd.vmu.Unlock()
	if c := n.rd.verifying; c != nil {
		return c
	}
	c := &verifyCall{done: make(chan struct{})}
	n.rd.verifying = c
	go func() {
		start := n.now()
		err := n.raft.Barrier(0).Error()
		if err == nil && n.raft.CurrentTerm() == term {
			n.rd.lease.Store(&lease{term: term, until: start + n.rd.readLease})
		}
		n.rd.vmu.Lock()
		n.rd.verifying = nil
		n.rd.vmu.Unlock()
		c.err = err
		close(c.done)
	}()
	return c
}

// staleness returns how long ago this node's store was last known to
// hold every acknowledged write, or false if it never was.
func (n *Node) staleness() (time.Duration, bool) {
	f := time.Duration(n.rd.fresh.Load())
	now := n.now()
	if f < 0 || now-f > n.o.MaxStale/2 {
		n.promote()
		f = time.Duration(n.rd.fresh.Load())
	}
	if f < 0 {
		return 0, false
	}
	return now - f, true
}

// promote makes fresh the latest mark whose index the store applied.
func (n *Node) promote() {
	n.rd.mmu.Lock()
	defer n.rd.mmu.Unlock()
	applied := n.fsm.applied.Load()
	for len(n.rd.marks) > 0 && n.rd.marks[0].index <= applied {
		if at := n.rd.marks[0].at; int64(at) > n.rd.fresh.Load() {
			n.rd.fresh.Store(int64(at))
		}
		n.rd.marks = n.rd.marks[1:]
	}
}

func (n *Node) addMark(m freshMark) {
	n.rd.mmu.Lock()
	if len(n.rd.marks) < maxMarks {
		n.rd.marks = append(n.rd.marks, m)
	} else {
		n.rd.marks[len(n.rd.marks)-1] = m
	}
	n.rd.mmu.Unlock()
	n.promote()
}

// trackFreshness asks the leader for its read index every MaxStale/4,
// while this node is not the leader, and marks the answers.
func (n *Node) trackFreshness() {
	defer n.wg.Done()
	every := min(max(n.o.MaxStale/4, 10*time.Millisecond), 250*time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	var c *redis.Client
	var addr string
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for {
		select {
		case <-n.stop:
			return
		case <-tick.C:
		}
		if n.raft.State() == raft.Leader {
			continue
		}
		_, id := n.raft.LeaderWithID()
		if id == "" || id == raft.ServerID(n.o.NodeID) {
			continue
		}
		a := n.directory(string(id))
		if a == "" {
			continue
		}
		if a != addr {
			if c != nil {
				c.Close()
			}
			c = redis.NewClient(&redis.Options{Addr: a, Password: n.o.AuthToken, MaxRetries: -1, PoolSize: 1,
				DialTimeout: time.Second, ContextTimeoutEnabled: true})
			addr = a
		}
		at := n.now()
		ctx, cancel := context.WithTimeout(context.Background(), max(n.o.MaxStale, every))
		i, err := c.Do(ctx, "CLUSTER.READINDEX").Uint64()
		cancel()
		if err != nil {
			continue
		}
		n.addMark(freshMark{at: at, index: i})
	}
}

// Status implements server.Cluster. It may wait a quorum round trip on
// the leader, whose read lease it renews to tell how it reads.
func (n *Node) Status() server.ClusterStatus {
	_, id := n.raft.LeaderWithID()
	st := server.ClusterStatus{
		NodeID:        n.o.NodeID,
		Role:          strings.ToLower(n.raft.State().String()),
		LeaderID:      string(id),
		LeaderAddr:    n.directory(string(id)),
		Term:          n.raft.CurrentTerm(),
		CommitIndex:   n.raft.CommitIndex(),
		AppliedIndex:  n.raft.AppliedIndex(),
		LastContactMS: -1,
		StaleMS:       -1,
		MaxStaleMS:    max(n.o.MaxStale, 0).Milliseconds(),
		Reads:         "redirect",
	}
	if last := n.raft.LastContact(); st.Role == "leader" {
		st.LastContactMS = 0
	} else if !last.IsZero() {
		st.LastContactMS = time.Since(last).Milliseconds()
	}
	if f := n.raft.GetConfiguration(); f.Error() == nil {
		for _, s := range f.Configuration().Servers {
			if s.Suffrage == raft.Voter && s.ID != raft.ServerID(n.o.NodeID) {
				st.Peers++
			}
		}
	}
	if st.Role == "leader" {
		if n.leaderRead() == nil {
			st.Reads, st.StaleMS = "linearizable", 0
		}
		return st
	}
	if d, ok := n.staleness(); ok {
		st.StaleMS = d.Milliseconds()
	}
	if n.ReadCheck() == nil {
		st.Reads = "stale"
	}
	return st
}
