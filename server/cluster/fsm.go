package cluster

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"github.com/cubelinux/cube"
)

// fsm is the store as Raft's state machine: an entry's data is a batch
// of records in the engine's log encoding (propose.go), each applied
// through the store's commit path; a snapshot is the store's state as a
// base checkpoint's records.
type fsm struct {
	db    *cube.DB
	snaps raft.SnapshotStore
	// applied is the index of the last command the store applied (or
	// of the snapshot it restored): raft.AppliedIndex counts entries
	// handed to the FSM, not yet applied.
	applied atomic.Uint64
	// durable waits until this node's Raft log holds an entry durably
	// (walStore.waitDurable; nil: at once). A leader syncs its copy
	// beside the followers' (see durability in logstore.go), and its
	// commit may come first.
	durable func(index uint64) error
	// missed is the first entry handed to Apply and not applied (its
	// wait for the log failed), 0 for none. Raft counts it applied all
	// the same, and a snapshot taken now would say the store holds it:
	// a restart replays only what follows a snapshot, so the store
	// would never get it. No snapshot is taken once one was missed.
	missed atomic.Uint64
}

var _ raft.FSM = (*fsm)(nil)

// Apply returns each record's ApplyReplicated error (nil for success)
// as a batchResult, which the proposers' waits return: the same on
// every node. An entry of a build before batching is one bare record,
// and gets its error alone.
func (f *fsm) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	if f.durable != nil {
		if err := f.durable(l.Index); err != nil {
			// Not durable here, so not applied: nor is anything after
			// it, whose wait fails the same way (the log failed, or the
			// node is stopping).
			f.missed.CompareAndSwap(0, l.Index)
			return err
		}
	}
	defer f.applied.Store(l.Index)
	if len(l.Data) == 0 {
		return nil // a new leader's no-op (see Node.watchLeadership)
	}
	if string(l.Extensions) == batchExt {
		return applyBatch(f.db, l.Data)
	}
	return f.db.ApplyReplicated(l.Data)
}

// Snapshot syncs the store's own log first: the store is durable on
// its own (NoSnapshotRestoreOnStart), and a restarted node replays only
// the entries after its last snapshot, so the store must hold every
// entry up to it once Raft may compact them away. ApplyReplicated does
// not wait for the store's sync (Raft's log is what makes a write
// durable), and a cluster node's store syncs every interval only (see
// cmd/cube's serve), so without this a crash could lose entries the
// node's store applied before the snapshot and Raft no longer replays.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	if i := f.missed.Load(); i != 0 {
		return nil, fmt.Errorf("cluster: the store did not apply entry %d (Raft's log failed, or the node is stopping): no snapshot until the node restarts and replays it", i)
	}
	if err := f.db.Sync(context.Background()); err != nil {
		return nil, err
	}
	s, err := f.db.Snapshot()
	if err != nil {
		return nil, err
	}
	return &fsmSnapshot{s}, nil
}

func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	if err := f.db.Restore(context.Background(), rc); err != nil {
		return err
	}
	// Durable before Raft counts the snapshot's index as applied (see
	// Snapshot).
	if err := f.db.Sync(context.Background()); err != nil {
		return err
	}
	// Raft wrote the snapshot it restores to the store first: it is the
	// latest there.
	if metas, err := f.snaps.List(); err == nil && len(metas) > 0 && metas[0].Index > f.applied.Load() {
		f.applied.Store(metas[0].Index)
	}
	return nil
}

type fsmSnapshot struct{ s *cube.StoreSnapshot }

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := s.s.WriteTo(sink); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *fsmSnapshot) Release() {}
