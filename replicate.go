package cube

import (
	"context"
	"io"

	"github.com/cubelinux/cube/engine"
)

// Replicator takes the records of the store's writes to a consensus
// log; see engine.Replicator and DB.SetReplicator. Cluster mode
// (server/cluster) is one, on Raft.
type Replicator = engine.Replicator

// StoreSnapshot is the store's state at one moment, written out later
// while writes go on; see DB.Snapshot.
type StoreSnapshot = engine.Snapshot

// SetReplicator makes every write of the store, programs' included,
// go through r: the write's record is proposed to r and the write
// returns once the record was committed and applied here through
// ApplyReplicated. A read-write program runs once, on this node; only
// the writes it made are proposed. Call it right after Open, before
// any write. See engine.DB.SetReplicator for what stays serializable
// and how durable a write is.
func (db *DB) SetReplicator(r Replicator) { db.eng.SetReplicator(r) }

// ApplyReplicated applies a record that the consensus log committed
// through the store's commit path. It gives the same result on every
// node that applies the same records in the same order; see
// engine.DB.ApplyReplicated.
func (db *DB) ApplyReplicated(rec []byte) error { return db.eng.ApplyReplicated(rec) }

// Snapshot takes a snapshot of the store's state as of now (cheap:
// the trees are copied on write); its WriteTo writes it as a stream
// that Restore reads.
func (db *DB) Snapshot() (*StoreSnapshot, error) { return db.eng.Snapshot() }

// Restore replaces the store's whole state with a snapshot stream. A
// failed restore leaves part of the stream applied: retry it or stop.
func (db *DB) Restore(ctx context.Context, r io.Reader) error { return db.eng.Restore(ctx, r) }

// Sync makes every write the store holds so far durable in its own
// log, whatever its sync mode: a consensus log calls it before it
// counts on the store holding what it applied (a snapshot taken, a
// snapshot restored), since ApplyReplicated does not wait for a sync.
func (db *DB) Sync(ctx context.Context) error { return db.eng.Sync(ctx) }
