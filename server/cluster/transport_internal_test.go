//go:build unix

package cluster

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/cubelinux/cube"
)

// raftLab is a node under test, N: a real Node (Raft, its TCP
// transport, its log store, a store as FSM), member of a cluster of
// three whose other two, L and V, are Raft transports the test speaks
// through. Both refuse every vote N asks for, in N's own term, so that
// N stays a candidate while no one leads, and its term stays put.
type raftLab struct {
	t      *testing.T
	n      *Node
	db     *cube.DB
	dir    string
	addr   string // N's Raft address
	lt, vt *raft.NetworkTransport
	conf   raft.Configuration
}

// newRaftLab starts N, its Raft log going to logs (nil: nowhere), with
// L and V refusing its votes.
func newRaftLab(t *testing.T, logs io.Writer) *raftLab {
	return startRaftLab(t, logs, refuseVotes)
}

// refuseVotes answers N as L or V of newRaftLab: every vote refused,
// in N's own term, and nothing else answered.
func refuseVotes(id string, tr *raft.NetworkTransport, rpc raft.RPC) {
	switch req := rpc.Command.(type) {
	case *raft.RequestPreVoteRequest:
		rpc.Respond(&raft.RequestPreVoteResponse{RPCHeader: header(id, tr), Term: req.Term - 1}, nil)
	case *raft.RequestVoteRequest:
		rpc.Respond(&raft.RequestVoteResponse{RPCHeader: header(id, tr), Term: req.Term}, nil)
	default:
		rpc.Respond(nil, errors.New("not a member that answers this"))
	}
}

// startRaftLab starts N, L and V answering it through answer.
func startRaftLab(t *testing.T, logs io.Writer, answer func(id string, tr *raft.NetworkTransport, rpc raft.RPC)) *raftLab {
	l := &raftLab{t: t, dir: t.TempDir()}
	peer := func(id string) *raft.NetworkTransport {
		tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 2, 5*time.Second, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		go func() {
			for rpc := range tr.Consumer() {
				answer(id, tr, rpc)
			}
		}()
		return tr
	}
	l.lt, l.vt = peer("L"), peer("V")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.addr = ln.Addr().String()
	ln.Close()
	l.conf = raft.Configuration{Servers: []raft.Server{
		{ID: "N", Address: raft.ServerAddress(l.addr)},
		{ID: "L", Address: l.lt.LocalAddr()},
		{ID: "V", Address: l.vt.LocalAddr()},
	}}
	// N's Raft state made as a member of {N, L, V} before it starts, in
	// the stores Start opens.
	rdir := filepath.Join(l.dir, "raft")
	logStore, err := openWALStore(filepath.Join(rdir, "raft-log"))
	if err != nil {
		t.Fatal(err)
	}
	state, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(rdir, "raft.db")})
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := raft.NewFileSnapshotStore(rdir, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg := raft.DefaultConfig()
	cfg.LocalID = "N"
	if err := raft.BootstrapCluster(cfg, logStore, state, snaps, l.lt, l.conf); err != nil {
		t.Fatal(err)
	}
	logStore.Close()
	state.Close()

	l.db, err = cube.Open(filepath.Join(l.dir, "data"), cube.Options{Sync: cube.SyncInterval})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.db.Close() })
	l.n, err = Start(context.Background(), l.db, Options{NodeID: "N", RaftAddr: l.addr, RESPAddr: "127.0.0.1:1", Dir: rdir, LogOutput: logs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.n.Close() })
	return l
}

// heartbeat is L's heartbeat to N, in N's current term.
func (l *raftLab) heartbeat() (raft.AppendEntriesResponse, error) {
	var resp raft.AppendEntriesResponse
	err := l.lt.AppendEntries("N", raft.ServerAddress(l.addr), &raft.AppendEntriesRequest{
		RPCHeader: header("L", l.lt), Term: l.n.raft.CurrentTerm()}, &resp)
	return resp, err
}

// waitPreVote has V ask N for a pre-vote, as up to date as last and
// lastTerm, until N grants one, and fails the test after 10s.
func (l *raftLab) waitPreVote(last, lastTerm uint64) {
	l.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var pv raft.RequestPreVoteResponse
		err := l.vt.RequestPreVote("N", raft.ServerAddress(l.addr), &raft.RequestPreVoteRequest{
			RPCHeader: header("V", l.vt), Term: l.n.raft.CurrentTerm() + 1, LastLogIndex: last, LastLogTerm: lastTerm}, &pv)
		if err == nil && pv.Granted {
			return
		}
		if time.Now().After(deadline) {
			leader, id := l.n.raft.LeaderWithID()
			l.t.Fatalf("N refused V's pre-vote for 10s after L fell silent (%v; N is %v, leader %s at %s)", err, l.n.raft.State(), id, leader)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitState waits up to 10s for N to be in state s.
func (l *raftLab) waitState(s raft.RaftState) {
	l.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); l.n.raft.State() != s; {
		if time.Now().After(deadline) {
			l.t.Fatalf("N is %v, not %v, after 10s", l.n.raft.State(), s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSnapshotToCandidate: a node that a leader sends a snapshot while
// the node is a candidate (as a restarted follower far behind often is)
// still stands for election, and votes, once that leader falls silent.
// L, leader in N's term, sends N a snapshot; then V asks for a vote.
// Break seen failing: transport.relay passing the snapshot on without
// the heartbeat before it -> "N refused V's pre-vote for 10s after L
// fell silent (N is Candidate, leader L at ...)": a candidate that knows
// L as leader, refusing votes "since we have a leader", as the node that
// hung TestLinearizable on 5 nodes did.
func TestSnapshotToCandidate(t *testing.T) {
	ctx := context.Background()
	l := newRaftLab(t, nil)
	// No leader: N stands, and L's and V's refusals keep it a candidate.
	l.waitState(raft.Candidate)

	// L sends N a snapshot: a store's, with a value in it.
	src, err := cube.Open(filepath.Join(l.dir, "src"), cube.Options{Sync: cube.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ns, err := src.CreateNamespace(ctx, "s", cube.NamespaceOptions{Dims: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Put(ctx, []int32{7}, []byte("from the snapshot")); err != nil {
		t.Fatal(err)
	}
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var data bytes.Buffer
	if _, err := snap.WriteTo(&data); err != nil {
		t.Fatal(err)
	}
	term := l.n.raft.CurrentTerm()
	const last = 10
	req := &raft.InstallSnapshotRequest{
		RPCHeader: header("L", l.lt), SnapshotVersion: raft.SnapshotVersionMax,
		Term: term, Leader: []byte(l.lt.LocalAddr()), LastLogIndex: last, LastLogTerm: term,
		Configuration: raft.EncodeConfiguration(l.conf), ConfigurationIndex: 1, Size: int64(data.Len()),
	}
	var resp raft.InstallSnapshotResponse
	if err := l.lt.InstallSnapshot("N", raft.ServerAddress(l.addr), req, &resp, &data); err != nil {
		t.Fatal(err)
	}
	if !resp.Success {
		t.Fatalf("N refused the snapshot (its term %d)", resp.Term)
	}
	got, err := l.db.Namespace("s")
	if err != nil {
		t.Fatalf("the snapshot was not restored: %v", err)
	}
	if v, err := got.Get(ctx, []int32{7}); err != nil || string(v) != "from the snapshot" {
		t.Fatalf("after the snapshot, s[7] = %q, %v", v, err)
	}
	// L is silent from now on.
	l.waitPreVote(last, term)
}

// gate is a log output that holds the first line holding match, once
// armed, until release: the goroutine writing it waits there.
type gate struct {
	match   []byte
	armed   atomic.Bool
	once    sync.Once
	hit     chan struct{}
	release chan struct{}
}

func (g *gate) Write(p []byte) (int, error) {
	if g.armed.Load() && bytes.Contains(p, g.match) {
		first := false
		g.once.Do(func() { first = true; close(g.hit) })
		if first {
			<-g.release
		}
	}
	return len(p), nil
}

// TestHeartbeatWaitsForTheMainLoop: a heartbeat is handled by Raft's
// main loop in turn, never beside it. Raft handling heartbeats on the
// transport's goroutine could record the leader just after the main
// loop, its heartbeat timeout passed, made the node a candidate: a
// candidate that knows a leader, which refuses every vote once that
// leader is gone (see transport). That meeting of two goroutines takes
// a few instructions and cannot be forced from outside, so this test
// holds the main loop where it decided to stand (in its log line
// saying so, through Options.LogOutput) and checks that a heartbeat
// sent then is not answered until the loop goes on; then that N, once
// L falls silent, stands and grants V's pre-vote. Break seen failing:
// transport without its SetHeartbeatHandler (Raft's fast path set) ->
// "L's heartbeat was answered (success true) while Raft's main loop was
// held".
func TestHeartbeatWaitsForTheMainLoop(t *testing.T) {
	g := &gate{match: []byte("heartbeat timeout reached, starting election"), hit: make(chan struct{}), release: make(chan struct{})}
	l := newRaftLab(t, g)
	released := false
	defer func() {
		if !released {
			close(g.release)
		}
	}()

	// N follows L.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := l.heartbeat(); err != nil {
			t.Fatal(err)
		}
		if _, id := l.n.raft.LeaderWithID(); id == "L" && l.n.raft.State() == raft.Follower {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("N did not follow L in 10s: it is %v", l.n.raft.State())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// L falls silent, until N's heartbeat timeout passes and its main
	// loop, deciding to stand, is held.
	g.armed.Store(true)
	select {
	case <-g.hit:
	case <-time.After(10 * time.Second):
		t.Fatal("N's heartbeat timeout did not pass in 10s")
	}
	type answer struct {
		resp raft.AppendEntriesResponse
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := l.heartbeat()
		answered <- answer{resp, err}
	}()
	select {
	case a := <-answered:
		t.Fatalf("L's heartbeat was answered (success %v, %v) while Raft's main loop was held", a.resp.Success, a.err)
	case <-time.After(300 * time.Millisecond):
	}
	close(g.release)
	released = true
	select {
	case a := <-answered:
		if a.err != nil {
			t.Fatal(a.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("L's heartbeat was not answered in 5s after Raft's main loop went on")
	}
	// L is silent from now on: N forgets it and stands.
	l.waitPreVote(1, 1)
}

// header is the RPC header a peer sends.
func header(id string, tr *raft.NetworkTransport) raft.RPCHeader {
	return raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(id), Addr: []byte(tr.LocalAddr())}
}
