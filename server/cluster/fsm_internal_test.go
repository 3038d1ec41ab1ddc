//go:build unix

package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// TestSnapshotSyncsTheStore: what the store applied before a Raft
// snapshot is on disk once the snapshot is taken, and what a restore put
// in the store is on disk once Restore returns. A cluster node's store
// syncs only every interval, and Raft replays only the entries after its
// latest snapshot, so without these syncs a power loss would lose entries
// that no node's Raft log holds any more. The store sits on an in-memory
// file system whose CrashClean keeps exactly what was synced. Breaks seen
// failing: the db.Sync in fsm.Snapshot removed (the values written before
// the snapshot are gone after the crash); the one in fsm.Restore removed
// (the restored values are gone).
func TestSnapshotSyncsTheStore(t *testing.T) {
	ctx := context.Background()
	const n = 50
	// A store as a cluster node runs it, syncing its log every interval
	// (an hour here: never during the test).
	open := func(fs *vfs.MemFS) *cube.DB {
		t.Helper()
		db, err := cube.Open("/data", cube.Options{Engine: engine.Options{FS: fs, Sync: engine.SyncInterval, SyncInterval: time.Hour}, TelemetryInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	// A one-node consensus log: each record is applied through the FSM
	// as Raft would, in order.
	node := func(db *cube.DB) *fsm {
		f := &fsm{db: db, snaps: raft.NewInmemSnapshotStore()}
		var index uint64
		db.SetReplicator(replicatorFunc(func(rec []byte) func(context.Context) error {
			index++
			res := f.Apply(&raft.Log{Type: raft.LogCommand, Index: index, Data: rec})
			return func(context.Context) error {
				err, _ := res.(error)
				return err
			}
		}))
		return f
	}
	check := func(db *cube.DB, what string) {
		t.Helper()
		ns, err := db.Namespace("s")
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for i := range int32(n) {
			v, err := ns.Get(ctx, []int32{i})
			if err != nil || string(v) != fmt.Sprint(i) {
				t.Fatalf("%s: value %d: %q, %v", what, i, v, err)
			}
		}
	}

	fs := vfs.NewMem()
	db := open(fs)
	f := node(db)
	ns, err := db.CreateNamespace(ctx, "s", cube.NamespaceOptions{Dims: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range int32(n) {
		if err := ns.Put(ctx, []int32{i}, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	if err := snap.Persist(&sink{Buffer: &stream}); err != nil {
		t.Fatal(err)
	}
	fs.CrashClean()
	db = open(fs)
	check(db, "after a crash that followed a snapshot")
	db.Close()

	// A follower far behind restores that snapshot, then loses power.
	fs2 := vfs.NewMem()
	db2 := open(fs2)
	f2 := node(db2)
	if err := f2.Restore(io.NopCloser(bytes.NewReader(stream.Bytes()))); err != nil {
		t.Fatal(err)
	}
	fs2.CrashClean()
	db2 = open(fs2)
	check(db2, "after a crash that followed a restore")
	db2.Close()
}

type replicatorFunc func(rec []byte) func(context.Context) error

func (r replicatorFunc) Propose(rec []byte) func(context.Context) error { return r(rec) }

// sink is a raft.SnapshotSink into a buffer.
type sink struct{ *bytes.Buffer }

func (s *sink) ID() string    { return "test" }
func (s *sink) Cancel() error { return nil }
func (s *sink) Close() error  { return nil }

// TestNoSnapshotAfterAMissedEntry: once an entry could not be applied
// (the node's Raft log failed before the entry was durable here), the
// FSM takes no snapshot: Raft counts the entry applied, and a snapshot
// past it would keep a restarted node from ever replaying it. Break
// seen failing: fsm.Snapshot without its check ("a snapshot was taken
// after entry 2 was not applied").
func TestNoSnapshotAfterAMissedEntry(t *testing.T) {
	db, err := cube.Open(t.TempDir(), cube.Options{Sync: cube.SyncNone, TelemetryInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	logFailed := errors.New("the log failed")
	f := &fsm{db: db, snaps: raft.NewInmemSnapshotStore(), durable: func(index uint64) error {
		if index >= 2 {
			return logFailed
		}
		return nil
	}}
	if res := f.Apply(&raft.Log{Type: raft.LogCommand, Index: 1}); res != nil {
		t.Fatalf("entry 1: %v", res)
	}
	if _, err := f.Snapshot(); err != nil {
		t.Fatalf("a snapshot before any missed entry: %v", err)
	}
	if res := f.Apply(&raft.Log{Type: raft.LogCommand, Index: 2}); res != logFailed {
		t.Fatalf("entry 2, not durable: Apply answered %v", res)
	}
	if got := f.applied.Load(); got != 1 {
		t.Fatalf("applied index %d after entry 2 was not applied", got)
	}
	if _, err := f.Snapshot(); err == nil {
		t.Fatal("a snapshot was taken after entry 2 was not applied")
	}
}
