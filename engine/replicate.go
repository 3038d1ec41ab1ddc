package engine

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/cubelinux/cube/engine/curve"
)

// Replicator hands the records of writes to a consensus log (cube's
// cluster mode puts them in Raft) instead of the store committing them
// itself. See DB.SetReplicator.
type Replicator interface {
	// Propose submits rec, a record in the engine's log encoding, to
	// the consensus log. Records proposed by one caller after another
	// are ordered as they were proposed. The returned wait blocks until
	// rec is committed and applied on this node through
	// DB.ApplyReplicated, and returns ApplyReplicated's error, or why
	// rec could not be committed (this node is not the leader, it lost
	// leadership). A wait may be called more than once, from more than
	// one goroutine, and must return once the record's fate is known
	// whatever its ctx says; ctx only bounds the caller's wait. Propose
	// must not keep rec past the wait's return, nor change it.
	Propose(rec []byte) (wait func(ctx context.Context) error)
}

// replicating is the DB's state under a Replicator.
type replicating struct {
	r  Replicator
	mu sync.Mutex // one namespace create or drop proposal at a time
}

// SetReplicator makes every write of the store go through r: Update
// (and Put, Delete, Link, Unlink, which are Updates), CreateNamespace
// and DropNamespace encode their record as usual but, instead of
// appending it to the store's log, Propose it, and return once it was
// applied through ApplyReplicated (on every node of a cluster, the
// proposer's included). Call it once, right after Open, before any
// write.
//
// # Transactions
//
// The function of a replicated Update runs once, on the node that
// proposes, and only the writes it made are proposed: another node
// never runs it again. Updates of one namespace still run one at a
// time; one that reads (Get, Region, Edges, Meta...) first waits until
// every write this node proposed before it was applied, so it reads
// its predecessors' writes and stays serializable in the order of the
// consensus log. One that only writes does not wait for that, and does
// not hold the next one back while its record is being committed:
// blind writes from many callers share consensus round trips the way
// writes to a single store share log syncs.
//
// # Durability
//
// A replicated write returns once the consensus log has committed and
// this node applied it: the consensus log is what makes it durable.
// ApplyReplicated appends it to the store's own log without waiting
// for a sync; reads still wait for the store's sync in SyncAlways mode,
// as they do on a single store.
func (db *DB) SetReplicator(r Replicator) {
	db.repl.Store(&replicating{r: r})
}

// replicator returns the DB's replicating state, or nil.
func (db *DB) replicator() *replicating {
	return db.repl.Load()
}

// updateReplicated is Update under a Replicator: fn runs under the
// namespace's proposal lock (rmu), not its writer lock, which
// ApplyReplicated takes to commit.
func (ns *Namespace) updateReplicated(ctx context.Context, rp *replicating, fn func(*Tx) error) error {
	ns.rmu.Lock()
	locked := true
	defer func() {
		if locked {
			ns.rmu.Unlock()
		}
	}()
	if err := ns.alive(); err != nil {
		return err
	}
	tx := &Tx{ns: ns, writable: true, repl: true, lsn: ns.lastLSN.Load()}
	defer func() { tx.done = true }()
	err := fn(tx)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil || tx.nops == 0 {
		return err
	}
	wait := rp.r.Propose(slices.Clone(tx.enc.b))
	ns.pending = wait
	ns.rmu.Unlock()
	locked = false
	return wait(ctx)
}

// syncReads lets a replicated transaction read: it waits, once, until
// the writes proposed before it were applied (see SetReplicator). The
// caller holds rmu, so nothing else of this node's is proposed
// meanwhile.
func (tx *Tx) syncReads() {
	if !tx.repl || tx.synced {
		return
	}
	tx.synced = true
	if w := tx.ns.pending; w != nil {
		// Its outcome is its proposer's to report: here only its being
		// settled counts. A wait returns once it is, whatever ctx says.
		_ = w(context.Background())
	}
}

// createReplicated is CreateNamespace under a Replicator.
func (db *DB) createReplicated(ctx context.Context, rp *replicating, name string, o NamespaceOptions) (*Namespace, error) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	db.mu.RLock()
	_, exists := db.byName[name]
	id := db.nextID
	err := db.writable()
	db.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	if exists {
		return nil, fmt.Errorf("%w: %q", ErrNamespaceExists, name)
	}
	ns, err := newNamespace(db, id, name, o)
	if err != nil {
		return nil, err
	}
	var e opEncoder
	e.nsCreate(id, name, ns.dims, ns.curveByte(), uint64(ns.maxValue))
	// Held until applied, so that the next create sees this one's id
	// taken.
	if err := rp.r.Propose(e.b)(ctx); err != nil {
		return nil, err
	}
	return db.Namespace(name)
}

// dropReplicated is DropNamespace under a Replicator.
func (db *DB) dropReplicated(ctx context.Context, rp *replicating, name string) error {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	db.mu.RLock()
	ns, ok := db.byName[name]
	err := db.writable()
	db.mu.RUnlock()
	if !ok {
		return fmt.Errorf("%w: %q", ErrNoNamespace, name)
	}
	if err != nil {
		return err
	}
	var e opEncoder
	e.nsDrop(ns.id)
	return rp.r.Propose(e.b)(ctx)
}

// ApplyReplicated applies rec, a record that the consensus log
// committed, through the store's commit path: it is appended to the
// store's log (without waiting for a sync: the consensus log holds it
// durably) and its ops made visible at once. rec is a namespace create,
// a namespace drop, or the writes of one transaction on one namespace,
// as Propose was given them; its bytes are not kept.
//
// Applying the same sequence of records to equal states gives equal
// states, and the errors are the same on every node: a write to a
// namespace that a record before it dropped fails with ErrNoNamespace,
// a create of a name taken by another namespace with
// ErrNamespaceExists, and both change nothing. A create of the same
// namespace again (same id and name) and a drop of one already gone
// change nothing and return nil, so that replaying records the store
// already holds is harmless.
//
// # Errors
//
// A record that does not decode, or mixes namespaces, is refused with
// an error matching ErrCorruption, changing nothing.
func (db *DB) ApplyReplicated(rec []byte) error {
	ops, err := decodeRecord(rec)
	if err != nil {
		return err
	}
	if len(ops) == 0 {
		return nil
	}
	o := &ops[0]
	switch o.kind {
	case opNSCreate, opNSDrop:
		if len(ops) != 1 {
			return badOp(errors.New("a namespace create or drop shares its record"))
		}
		if o.kind == opNSCreate {
			return db.applyCreate(o, rec)
		}
		return db.applyDrop(o, rec)
	}
	db.mu.RLock()
	ns, ok := db.byID[o.ns]
	db.mu.RUnlock()
	if !ok {
		return fmt.Errorf("%w: id %d (dropped before this write was applied)", ErrNoNamespace, o.ns)
	}
	for i := range ops {
		if err := ns.checkReplicated(&ops[i], o.ns); err != nil {
			return err
		}
	}
	// The applied values point into the record (as a transaction's
	// point into its own): the caller's bytes may be reused.
	rec = slices.Clone(rec)
	ns.wmu.Lock()
	defer ns.wmu.Unlock()
	if err := ns.alive(); err != nil {
		return err
	}
	_, err = ns.commit(rec, false)
	return err
}

// decodeRecord decodes every op of rec, or none.
func decodeRecord(rec []byte) ([]op, error) {
	var ops []op
	d := opDecoder{b: rec}
	for {
		var o op
		more, err := d.next(&o)
		if err != nil {
			return nil, badOp(err)
		}
		if !more {
			return ops, nil
		}
		ops = append(ops, o)
	}
}

// checkReplicated checks one op of a transaction's record against the
// namespace, as the proposer's Tx did: a record from elsewhere is not
// trusted to be one.
func (ns *Namespace) checkReplicated(o *op, id uint64) error {
	if o.ns != id {
		return badOp(fmt.Errorf("a record writes namespaces %d and %d", id, o.ns))
	}
	switch o.kind {
	case opNSCreate, opNSDrop:
		return badOp(errors.New("a namespace create or drop shares its record"))
	case opMetaPut, opMetaDel:
		return checkName("meta key", o.name)
	}
	if o.dims != ns.dims {
		return badOp(fmt.Errorf("op with %d dims on namespace %q of %d", o.dims, ns.name, ns.dims))
	}
	if len(o.value) > ns.maxValue {
		return fmt.Errorf("%w: %d bytes, namespace %q allows %d", ErrValueTooLarge, len(o.value), ns.name, ns.maxValue)
	}
	if o.kind == opLink || o.kind == opUnlink {
		if err := checkLabel(o.name); err != nil {
			return err
		}
	}
	if o.kind == opLink {
		return checkWeight(o.weight)
	}
	return nil
}

func (db *DB) applyCreate(o *op, rec []byte) error {
	if o.maxValue > 1<<40 {
		return badOp(fmt.Errorf("namespace %q: max value size %d", o.name, o.maxValue))
	}
	if err := checkName("namespace", o.name); err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.writable(); err != nil {
		return err
	}
	if old, ok := db.byName[o.name]; ok {
		if old.id == o.ns {
			return nil // replayed
		}
		return fmt.Errorf("%w: %q", ErrNamespaceExists, o.name)
	}
	if old, ok := db.byID[o.ns]; ok {
		return fmt.Errorf("%w: id %d is namespace %q's", ErrNamespaceExists, o.ns, old.name)
	}
	ns, err := newNamespace(db, o.ns, o.name, NamespaceOptions{Dims: o.dims, Curve: curve.Kind(o.curve &^ curveGeo), Geo: o.curve&curveGeo != 0, MaxValueSize: int(o.maxValue)})
	if err != nil {
		return err
	}
	lsn, err := db.log.Append(rec)
	if err != nil {
		return db.logFailed(err)
	}
	db.nextID = max(db.nextID, o.ns+1)
	db.nsLSN = lsn
	ns.created = lsn
	ns.lastLSN.Store(lsn)
	db.byName[o.name], db.byID[o.ns] = ns, ns
	return nil
}

func (db *DB) applyDrop(o *op, rec []byte) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.writable(); err != nil {
		return err
	}
	ns, ok := db.byID[o.ns]
	if !ok {
		return nil // replayed, or dropped by a record before it
	}
	ns.wmu.Lock()
	ns.mu.Lock()
	lsn, err := db.log.Append(rec)
	if err == nil {
		ns.dropped.Store(true)
		delete(db.byName, ns.name)
		delete(db.byID, ns.id)
		db.drops = append(db.drops, drop{ns.id, lsn})
		db.nsLSN = lsn
	}
	ns.mu.Unlock()
	ns.wmu.Unlock()
	if err != nil {
		return db.logFailed(err)
	}
	return nil
}

// snapMagic starts a snapshot stream; the 8th byte is its version.
const snapMagic = "cubesnp\x01"

// maxSnapRecord bounds one record of a snapshot stream when reading it:
// a checkpoint record is one op, at most a value of 1 TiB's declared
// limit in theory, but the values a namespace accepts (MaxValueSize)
// are what a snapshot holds.
const maxSnapRecord = 1 << 31

// Snapshot is the state of every namespace at one moment, to be written
// out later (WriteTo) while writes go on: a consensus log's snapshot of
// the store. It holds copies of the trees (copy on write: cheap to
// take, paid for as writes change what it shares).
type Snapshot struct {
	db    *DB
	snaps []nsSnap
	lsn   uint64
}

// Snapshot takes a snapshot of the store's state as of now. Under a
// Replicator it is the state after the last record ApplyReplicated
// applied, if nothing applies meanwhile (a consensus log takes it
// between two applies).
func (db *DB) Snapshot() (*Snapshot, error) {
	if err := db.writable(); err != nil {
		return nil, err
	}
	db.mu.Lock()
	snaps, lsn := db.snapshotLocked()
	db.mu.Unlock()
	return &Snapshot{db: db, snaps: snaps, lsn: lsn}, nil
}

// WriteTo writes the snapshot as a stream: snapMagic, then records in
// the engine's log encoding, each a uvarint length and its bytes. The
// records are a base checkpoint's, written by the checkpoint's own
// code: namespace creates, then each namespace's metadata, values and
// edges.
func (s *Snapshot) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	cw := &countWriter{w: bw}
	if _, err := io.WriteString(cw, snapMagic); err != nil {
		return cw.n, err
	}
	var lenBuf [binary.MaxVarintLen64]byte
	err := writeRecords(context.Background(), s.snaps, nil, true, 0, func(rec []byte) error {
		n := binary.PutUvarint(lenBuf[:], uint64(len(rec)))
		if _, err := cw.Write(lenBuf[:n]); err != nil {
			return err
		}
		_, err := cw.Write(rec)
		return err
	})
	if err == nil {
		err = bw.Flush()
	}
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Restore replaces the store's whole state with a snapshot stream that
// Snapshot.WriteTo wrote (on this node or another): every namespace is
// dropped, then the stream's records are applied through
// ApplyReplicated, in order. The caller makes sure nothing else writes
// meanwhile (a consensus log restores between applies).
//
// # Errors
//
// A stream that is not a snapshot, or is cut short, fails with an error
// matching ErrCorruption; what was applied before the bad spot stays,
// so the caller must not go on as if the restore succeeded: a consensus
// log retries the restore or stops.
func (db *DB) Restore(ctx context.Context, r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<16)
	magic := make([]byte, len(snapMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != snapMagic {
		return badOp(fmt.Errorf("not a cube snapshot stream (magic %q)", magic))
	}
	db.mu.RLock()
	var drops [][]byte
	for _, ns := range db.byID {
		var e opEncoder
		e.nsDrop(ns.id)
		drops = append(drops, e.b)
	}
	db.mu.RUnlock()
	for _, rec := range drops {
		if err := db.ApplyReplicated(rec); err != nil {
			return err
		}
	}
	// Consecutive records of one namespace are applied as one, up to
	// batchBytes, so a large snapshot is not one log append per value.
	const batchBytes = 1 << 20
	var batch []byte
	var batchNS uint64
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := db.ApplyReplicated(batch)
		batch = batch[:0]
		return err
	}
	buf := make([]byte, 0, 1<<12)
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		size, err := binary.ReadUvarint(br)
		if err == io.EOF {
			break
		}
		if err != nil || size > maxSnapRecord {
			return badOp(fmt.Errorf("snapshot record %d: bad length (%v)", n, err))
		}
		buf = slices.Grow(buf[:0], int(size))[:size]
		if _, err := io.ReadFull(br, buf); err != nil {
			return badOp(fmt.Errorf("snapshot record %d: cut short: %w", n, err))
		}
		d := opDecoder{b: buf}
		var o op
		more, err := d.next(&o)
		if err != nil {
			return badOp(fmt.Errorf("snapshot record %d: %w", n, err))
		}
		if !more {
			continue
		}
		registry := o.kind == opNSCreate || o.kind == opNSDrop
		if registry || o.ns != batchNS || len(batch)+len(buf) > batchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		if registry {
			if err := db.ApplyReplicated(buf); err != nil {
				return err
			}
			continue
		}
		batchNS = o.ns
		batch = append(batch, buf...)
	}
	return flush()
}
