package cluster

import (
	"context"
	"io"

	"github.com/hashicorp/raft"

	"github.com/cubelinux/cube"
)

// fsm is the store as Raft's state machine: an entry's data is one
// record in the engine's log encoding, applied through the store's
// commit path; a snapshot is the store's state as a base checkpoint's
// records.
type fsm struct{ db *cube.DB }

var _ raft.FSM = (*fsm)(nil)

// Apply returns ApplyReplicated's error (nil for success), which the
// proposer's wait returns: the same on every node.
func (f *fsm) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	return f.db.ApplyReplicated(l.Data)
}

func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	s, err := f.db.Snapshot()
	if err != nil {
		return nil, err
	}
	return &fsmSnapshot{s}, nil
}

func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	return f.db.Restore(context.Background(), rc)
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
