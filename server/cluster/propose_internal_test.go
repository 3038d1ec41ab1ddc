package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cubelinux/cube"
)

// recorder is a Replicator that applies each record to its own store at
// once and keeps it: a way to get a store's records to replay elsewhere.
type recorder struct {
	db   *cube.DB
	recs [][]byte
}

func (r *recorder) Propose(rec []byte) func(context.Context) error {
	r.recs = append(r.recs, slices.Clone(rec))
	err := r.db.ApplyReplicated(rec)
	return func(context.Context) error { return err }
}

// startNode starts a one-node cluster in process over a new store, and
// waits until it takes writes and has written its address to the
// directory (namespace id 1).
func startNode(t *testing.T) (*Node, *cube.DB) {
	t.Helper()
	dir := t.TempDir()
	db, err := cube.Open(filepath.Join(dir, "data"), cube.Options{Sync: cube.SyncInterval})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	n, err := Start(context.Background(), db, Options{NodeID: "n1", RaftAddr: addr, RESPAddr: "127.0.0.1:1", Dir: filepath.Join(dir, "raft")})
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Close()
		db.Close()
	})
	for deadline := time.Now().Add(10 * time.Second); n.WriteCheck() != nil || n.directory("n1") == ""; {
		if time.Now().After(deadline) {
			t.Fatalf("the node never took writes: %v", n.WriteCheck())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return n, db
}

// TestBatchAnswersEachRecord proposes records as one entry, some of
// which fail, and checks that each proposal gets its own record's
// outcome and the records after a failed one are applied. Seen failing
// with applyBatch stopping at the first error (the put to "b" not
// applied, its answer missing) and with proposeBatch settling every
// proposal with the first record's answer.
func TestBatchAnswersEachRecord(t *testing.T) {
	ctx := context.Background()
	src, err := cube.Open(filepath.Join(t.TempDir(), "src"), cube.Options{Sync: cube.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	rec := &recorder{db: src}
	src.SetReplicator(rec)
	// Id 1, as the node's directory.
	if _, err := src.CreateNamespace(ctx, DirectoryNamespace, cube.NamespaceOptions{Dims: 1}); err != nil {
		t.Fatal(err)
	}
	a, err := src.CreateNamespace(ctx, "a", cube.NamespaceOptions{Dims: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := src.CreateNamespace(ctx, "b", cube.NamespaceOptions{Dims: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, []int32{1}, []byte("to a")); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, []int32{1}, []byte("to b")); err != nil {
		t.Fatal(err)
	}
	if err := src.DropNamespace(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	createA, createB, putA, putB, dropA := rec.recs[1], rec.recs[2], rec.recs[3], rec.recs[4], rec.recs[5]

	n, db := startNode(t)
	recs := [][]byte{createA, createB, dropA, putA, putB, {0xff}, createA}
	want := []func(error) bool{isNil, isNil, isNil, is(cube.ErrNoNamespace), isNil, cube.IsCorruption, isNil}
	var ps []*proposal
	for _, r := range recs {
		ps = append(ps, &proposal{rec: r, done: make(chan struct{})})
	}
	n.proposeBatch(ps)
	for i, p := range ps {
		if err := p.wait(ctx); !want[i](err) {
			t.Errorf("record %d: %v", i, err)
		}
	}
	nb, err := db.Namespace("b")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := nb.Get(ctx, []int32{1}); err != nil || string(v) != "to b" {
		t.Errorf("b[1] = %q, %v; want the put batched after the failed one", v, err)
	}
	na, err := db.Namespace("a")
	if err != nil {
		t.Fatalf("a, created again last in the entry: %v", err)
	}
	if _, err := na.Get(ctx, []int32{1}); !errors.Is(err, cube.ErrNotFound) {
		t.Errorf("a[1] after a's drop and a put that came too late: %v", err)
	}
}

func isNil(err error) bool { return err == nil }

func is(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

// TestProposeHammer has P writers put through the node's store at
// once, N puts each, and checks every put was acknowledged and holds
// its value: proposals batched into shared entries each reach their
// own writer. It logs how many entries the writes took.
func TestProposeHammer(t *testing.T) {
	P, N := 32, 50
	if testing.Short() {
		N = 10
	}
	ctx := context.Background()
	n, db := startNode(t)
	ns, err := db.CreateNamespace(ctx, "h", cube.NamespaceOptions{Dims: 2})
	if err != nil {
		t.Fatal(err)
	}
	first := n.raft.LastIndex()
	var wg sync.WaitGroup
	for w := range P {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range N {
				if err := ns.Put(ctx, []int32{int32(w), int32(i)}, fmt.Appendf(nil, "%d/%d", w, i)); err != nil {
					t.Errorf("writer %d, put %d: %v", w, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d puts in %d Raft entries", P*N, n.raft.LastIndex()-first)
	for w := range P {
		for i := range N {
			v, err := ns.Get(ctx, []int32{int32(w), int32(i)})
			if err != nil || string(v) != fmt.Sprintf("%d/%d", w, i) {
				t.Fatalf("(%d, %d) = %q, %v", w, i, v, err)
			}
		}
	}
}
