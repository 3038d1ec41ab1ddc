//go:build unix

package cluster

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/cubelinux/cube"
)

// TestSnapshotToCandidate: a node that a leader sends a snapshot while
// the node is a candidate (as a restarted follower far behind often is)
// still stands for election, and votes, once that leader falls silent.
// The node under test is a real Node (Raft, its TCP transport, log
// store and the store as FSM); its two peers are Raft transports this
// test speaks through: L sends the snapshot, V asks for a vote after.
// Break seen failing: transport.relay passing the snapshot on without
// the heartbeat before it -> "the node refused V's pre-vote for 10s
// after L fell silent (node Candidate, leader L at ...)": a candidate
// that knows L as leader, refusing votes "since we have a leader", as
// the node that hung TestLinearizable on 5 nodes did.
func TestSnapshotToCandidate(t *testing.T) {
	ctx := context.Background()
	peer := func(id string) *raft.NetworkTransport {
		tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 2, 5*time.Second, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		// Refuse every vote the node asks for, in its own term, so it
		// stays a candidate and its term stays put.
		go func() {
			for rpc := range tr.Consumer() {
				switch req := rpc.Command.(type) {
				case *raft.RequestPreVoteRequest:
					rpc.Respond(&raft.RequestPreVoteResponse{RPCHeader: header(id, tr), Term: req.Term - 1}, nil)
				case *raft.RequestVoteRequest:
					rpc.Respond(&raft.RequestVoteResponse{RPCHeader: header(id, tr), Term: req.Term}, nil)
				default:
					rpc.Respond(nil, errors.New("not a member that answers this"))
				}
			}
		}()
		return tr
	}
	lt, vt := peer("L"), peer("V")

	dir := t.TempDir()
	rdir := filepath.Join(dir, "raft")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	conf := raft.Configuration{Servers: []raft.Server{
		{ID: "N", Address: raft.ServerAddress(addr)},
		{ID: "L", Address: lt.LocalAddr()},
		{ID: "V", Address: vt.LocalAddr()},
	}}
	// The node's Raft state made as a member of {N, L, V} before it
	// starts, in the stores Start opens.
	{
		logs, err := openWALStore(filepath.Join(rdir, "raft-log"))
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
		if err := raft.BootstrapCluster(cfg, logs, state, snaps, lt, conf); err != nil {
			t.Fatal(err)
		}
		logs.Close()
		state.Close()
	}
	db, err := cube.Open(filepath.Join(dir, "data"), cube.Options{Sync: cube.SyncInterval})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n, err := Start(ctx, db, Options{NodeID: "N", RaftAddr: addr, RESPAddr: "127.0.0.1:1", Dir: rdir})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()

	// No leader: the node stands, and L's and V's refusals keep it a
	// candidate.
	for deadline := time.Now().Add(10 * time.Second); n.raft.State() != raft.Candidate; {
		if time.Now().After(deadline) {
			t.Fatalf("the node is %v, not a candidate, after 10s", n.raft.State())
		}
		time.Sleep(10 * time.Millisecond)
	}

	// L, leader in the node's term, sends it a snapshot: a store's, with
	// a value in it.
	src, err := cube.Open(filepath.Join(dir, "src"), cube.Options{Sync: cube.SyncNone})
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
	term := n.raft.CurrentTerm()
	const last = 10
	req := &raft.InstallSnapshotRequest{
		RPCHeader: header("L", lt), SnapshotVersion: raft.SnapshotVersionMax,
		Term: term, Leader: []byte(lt.LocalAddr()), LastLogIndex: last, LastLogTerm: term,
		Configuration: raft.EncodeConfiguration(conf), ConfigurationIndex: 1, Size: int64(data.Len()),
	}
	var resp raft.InstallSnapshotResponse
	if err := lt.InstallSnapshot("N", raft.ServerAddress(addr), req, &resp, &data); err != nil {
		t.Fatal(err)
	}
	if !resp.Success {
		t.Fatalf("the node refused the snapshot (its term %d)", resp.Term)
	}
	got, err := db.Namespace("s")
	if err != nil {
		t.Fatalf("the snapshot was not restored: %v", err)
	}
	if v, err := got.Get(ctx, []int32{7}); err != nil || string(v) != "from the snapshot" {
		t.Fatalf("after the snapshot, s[7] = %q, %v", v, err)
	}

	// L is silent from now on. V, whose log is as long as the node's,
	// asks for a pre-vote until the node grants it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var pv raft.RequestPreVoteResponse
		err := vt.RequestPreVote("N", raft.ServerAddress(addr), &raft.RequestPreVoteRequest{
			RPCHeader: header("V", vt), Term: term + 1, LastLogIndex: last, LastLogTerm: term}, &pv)
		if err == nil && pv.Granted {
			break
		}
		if time.Now().After(deadline) {
			leader, id := n.raft.LeaderWithID()
			t.Fatalf("the node refused V's pre-vote for 10s after L fell silent (%v; node %v, leader %s at %s)", err, n.raft.State(), id, leader)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// header is the RPC header a peer sends.
func header(id string, tr *raft.NetworkTransport) raft.RPCHeader {
	return raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(id), Addr: []byte(tr.LocalAddr())}
}
