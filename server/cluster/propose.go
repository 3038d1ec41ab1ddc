package cluster

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/cubelinux/cube"
)

// Proposals: the records the store proposes while an entry is in
// flight go to Raft together, as the next entry.
//
// A write of cube's is one small record. Given to Raft one record an
// entry, each cost every node an encoding for its log and one for the
// transport, a decoding, a future and an FSM call; the leader wrote
// small batches of them often, each a log write and sync on every
// node; and a goroutine a write waited on the entry's future. A single goroutine, the proposer,
// keeps one entry in flight: it hands Raft every record queued, as one
// entry, waits until that entry is committed and applied here, gives
// each record its outcome, and starts over with what queued meanwhile.
// Records are proposed in the order Propose was called.
//
// A batch entry's data is its records in the framing of a snapshot
// stream (engine.Snapshot.WriteTo): each a uvarint length, then the
// record in the engine's log encoding, so there is no second encoding
// of a write. Its Extensions are batchExt. The FSM applies the records
// one by one through ApplyReplicated, in order, and answers each one's
// error (batchResult): a record's outcome does not depend on the
// records batched with it, and is the same on every node.

// batchExt marks an entry whose data is framed records. An entry
// without it, which a build before batching wrote, is one bare record.
const batchExt = "cube.batch.v1"

// maxBatchBytes bounds the records of one entry; a bigger record goes
// alone.
const maxBatchBytes = 1 << 20

// proposal is one record waiting for the fate of its entry.
type proposal struct {
	rec  []byte
	err  error
	done chan struct{} // closed once err is set
}

func (p *proposal) wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func settle(ps []*proposal, err error) {
	for _, p := range ps {
		p.err = err
		close(p.done)
	}
}

// proposer is the queue of records for Node.proposeLoop.
type proposer struct {
	mu      sync.Mutex
	queue   []*proposal
	stopped bool
	wake    chan struct{} // 1 buffered: the queue is no longer empty
}

// Propose implements cube.Replicator: rec joins the next entry.
func (n *Node) Propose(rec []byte) func(context.Context) error {
	p := &proposal{rec: rec, done: make(chan struct{})}
	pr := &n.prop
	pr.mu.Lock()
	if pr.stopped {
		pr.mu.Unlock()
		settle([]*proposal{p}, n.translate(raft.ErrRaftShutdown))
		return p.wait
	}
	pr.queue = append(pr.queue, p)
	first := len(pr.queue) == 1
	pr.mu.Unlock()
	if first {
		select {
		case pr.wake <- struct{}{}:
		default:
		}
	}
	return p.wait
}

// proposeLoop proposes the queued records, an entry at a time, until
// the node stops; then it settles what is left.
func (n *Node) proposeLoop() {
	defer n.wg.Done()
	pr := &n.prop
	for {
		select {
		case <-n.stop:
			pr.mu.Lock()
			pr.stopped = true
			left := pr.queue
			pr.queue = nil
			pr.mu.Unlock()
			settle(left, n.translate(raft.ErrRaftShutdown))
			return
		case <-pr.wake:
		}
		for ps := pr.take(); len(ps) > 0; ps = pr.take() {
			n.proposeBatch(ps)
		}
	}
}

// take removes the queue's first records, up to maxBatchBytes (one at
// least).
func (pr *proposer) take() []*proposal {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	size, i := 0, 0
	for ; i < len(pr.queue); i++ {
		size += len(pr.queue[i].rec)
		if i > 0 && size > maxBatchBytes {
			break
		}
	}
	ps := pr.queue[:i:i]
	pr.queue = pr.queue[i:]
	if len(pr.queue) == 0 {
		pr.queue = nil
	}
	return ps
}

// proposeBatch proposes ps as one entry, waits until it is applied
// here (or failed), and settles each proposal with its record's
// outcome.
func (n *Node) proposeBatch(ps []*proposal) {
	size := 0
	for _, p := range ps {
		size += binary.MaxVarintLen64 + len(p.rec)
	}
	data := make([]byte, 0, size)
	for _, p := range ps {
		data = binary.AppendUvarint(data, uint64(len(p.rec)))
		data = append(data, p.rec...)
	}
	f := n.raft.ApplyLog(raft.Log{Data: data, Extensions: []byte(batchExt)}, 0)
	if err := f.Error(); err != nil {
		settle(ps, n.translate(err))
		return
	}
	if err, ok := f.Response().(error); ok {
		settle(ps, n.translate(err))
		return
	}
	res, _ := f.Response().(batchResult)
	for i, p := range ps {
		if i < len(res) {
			p.err = res[i]
		} else {
			p.err = fmt.Errorf("cluster: entry %d holds %d records, not %d", f.Index(), len(res), len(ps))
		}
		close(p.done)
	}
}

// batchResult is the FSM's answer to a batch entry: each record's
// ApplyReplicated error, in order.
type batchResult []error

// applyBatch applies the framed records of a batch entry in order.
// Framing that does not decode ends the batch, the same on every node:
// the records after it are missing from the answer.
func applyBatch(db *cube.DB, data []byte) batchResult {
	var res batchResult
	for len(data) > 0 {
		size, n := binary.Uvarint(data)
		if n <= 0 || size > uint64(len(data)-n) {
			break
		}
		res = append(res, db.ApplyReplicated(data[n:n+int(size)]))
		data = data[n+int(size):]
	}
	return res
}
