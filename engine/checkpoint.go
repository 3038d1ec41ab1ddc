package engine

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/cubelinux/cube/engine/internal/base"
	"github.com/cubelinux/cube/engine/internal/checkpoint"
	"github.com/tidwall/btree"
)

// CheckpointInfo describes one checkpoint written.
type CheckpointInfo struct {
	Kind     string // "base" or "delta"
	File     string
	LSN      uint64 // the state as of this log position
	Records  uint64
	Bytes    int64
	Duration time.Duration
	At       time.Time
}

// nsSnap is what a checkpoint writes of one namespace.
type nsSnap struct {
	ns    *Namespace
	tree  *btree.BTreeG[vitem]
	edges edgeTrees
	meta  map[string]mentry
}

func (db *DB) lastCheckpoint() time.Time {
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	return db.lastCkpt
}

// Checkpoint writes a checkpoint now: a delta with what changed since the
// last one, or a new base when there is none yet or the deltas have grown
// (Options.MaxDeltas, or larger than half the base). Writers are paused
// only while every namespace's pending writes are sealed and its trees
// copied; the file is written from those copies while writers go on. Log
// segments that the checkpoint covers are deleted once it is durable.
//
// It returns a zero CheckpointInfo when nothing changed since the last one.
func (db *DB) Checkpoint(ctx context.Context) (CheckpointInfo, error) {
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	if err := db.Err(); err != nil {
		return CheckpointInfo{}, err
	}
	if db.closed.Load() {
		return CheckpointInfo{}, ErrClosed
	}
	start := db.opts.Clock()

	// The barrier: with the registry and every namespace locked, every
	// record in the log has been applied, so the copies are the state as
	// of exactly lsn.
	db.mu.Lock()
	snaps, lsn := db.snapshotLocked()
	drops := slices.Clone(db.drops)
	db.mu.Unlock()

	prev := db.manifest
	if lsn == prev.LSN && prev.Base != "" {
		db.lastCkpt = db.opts.Clock()
		return CheckpointInfo{}, nil
	}
	base := prev.Base == "" || len(prev.Deltas) >= db.opts.MaxDeltas || db.ckptSize.deltas > db.ckptSize.base/2
	h := checkpoint.Header{Kind: checkpoint.Delta, LSN: lsn, Prev: prev.LSN, Created: start}
	if base {
		h.Kind, h.Prev = checkpoint.Base, 0
	}
	name := checkpoint.FileName(h)
	path := filepath.Join(ckptDir(db.dir), name)
	w, err := checkpoint.Create(db.fs, path, h, db.cipher)
	if err != nil {
		return CheckpointInfo{}, fmt.Errorf("engine: checkpoint: %w", err)
	}
	if err := db.writeCheckpoint(ctx, w, snaps, drops, base, prev.LSN); err != nil {
		w.Abort()
		return CheckpointInfo{}, fmt.Errorf("engine: checkpoint %s: %w", path, err)
	}
	info, err := w.Finish()
	if err != nil {
		return CheckpointInfo{}, fmt.Errorf("engine: checkpoint %s: %w", path, err)
	}
	m := checkpoint.Manifest{Base: name, LSN: lsn, Seq: prev.Seq + 1}
	if !base {
		m.Base, m.Deltas = prev.Base, append(slices.Clone(prev.Deltas), name)
	}
	if err := checkpoint.WriteManifest(db.fs, ckptDir(db.dir), m); err != nil {
		return CheckpointInfo{}, fmt.Errorf("engine: checkpoint manifest: %w", err)
	}
	db.manifest = m
	if base {
		db.ckptSize.base, db.ckptSize.deltas = info.Bytes, 0
	} else {
		db.ckptSize.deltas += info.Bytes
	}
	// The checkpoint is durable: what it covers may go.
	if err := db.log.RemoveBefore(lsn); err != nil {
		db.opts.Logger.Warn("engine: removing old log segments", "err", err)
	}
	if _, err := checkpoint.RemoveUnreferenced(db.fs, ckptDir(db.dir), m); err != nil {
		db.opts.Logger.Warn("engine: removing old checkpoints", "err", err)
	}
	for _, s := range snaps {
		ns := s.ns
		ns.mu.Lock()
		ns.idx.purgeTombs(lsn)
		ns.edges.purgeTombs(lsn)
		keep := ns.mtombs[:0]
		var meta map[string]mentry // a new map, if anything goes: snapshots share the old one
		for _, k := range ns.mtombs {
			if e, ok := ns.meta[k]; ok && e.lsn&tombBit != 0 {
				if e.lsn&^tombBit <= lsn {
					if meta == nil {
						meta = maps.Clone(ns.meta)
					}
					delete(meta, k)
				} else {
					keep = append(keep, k)
				}
			}
		}
		ns.mtombs = keep
		if meta != nil {
			ns.meta = meta
		}
		ns.mu.Unlock()
	}
	db.mu.Lock()
	db.drops = slices.DeleteFunc(db.drops, func(d drop) bool { return d.lsn <= lsn })
	db.mu.Unlock()
	db.lastCkpt = db.opts.Clock()
	ci := CheckpointInfo{Kind: h.Kind.String(), File: name, LSN: lsn, Records: info.Records, Bytes: info.Bytes, Duration: db.opts.Clock().Sub(start), At: start}
	db.stats.addCheckpoint(ci)
	db.opts.Logger.Info("engine: checkpoint", "kind", ci.Kind, "lsn", lsn, "bytes", ci.Bytes, "took", ci.Duration)
	return ci, nil
}

// writeCheckpoint writes the ops that rebuild the snapshots: everything
// for a base, what changed after prevLSN for a delta.
func (db *DB) writeCheckpoint(ctx context.Context, w *checkpoint.Writer, snaps []nsSnap, drops []drop, base bool, prevLSN uint64) error {
	return writeRecords(ctx, snaps, drops, base, prevLSN, w.Add)
}

// writeRecords gives out, one record at a time, the ops that rebuild
// the snapshots (see writeCheckpoint). A record is valid only during
// its call.
func writeRecords(ctx context.Context, snaps []nsSnap, drops []drop, base bool, prevLSN uint64, out func(rec []byte) error) error {
	var e opEncoder
	add := func() error {
		err := out(e.b)
		e.reset()
		return err
	}
	changed := func(lsn uint64) bool { return base || lsn&^tombBit > prevLSN }
	if !base {
		for _, d := range drops {
			if d.lsn > prevLSN {
				e.nsDrop(d.id)
				if err := add(); err != nil {
					return err
				}
			}
		}
	}
	for _, s := range snaps {
		ns := s.ns
		e.nsCreate(ns.id, ns.name, ns.dims, ns.curveByte(), uint64(ns.maxValue))
		if err := add(); err != nil {
			return err
		}
		keys := make([]string, 0, len(s.meta))
		for k := range s.meta {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			m := s.meta[k]
			if !changed(m.lsn) {
				continue
			}
			switch {
			case m.lsn&tombBit == 0:
				e.metaPut(ns.id, k, m.val)
			case !base:
				e.metaDel(ns.id, k)
			default:
				continue
			}
			if err := add(); err != nil {
				return err
			}
		}
		var err error
		n := 0
		s.tree.Scan(func(it vitem) bool {
			if n++; n%4096 == 0 && ctx.Err() != nil {
				err = ctx.Err()
				return false
			}
			if !changed(it.lsn) || (base && it.tomb()) {
				return true
			}
			if it.tomb() {
				e.del(ns.id, it.c[:ns.dims])
			} else {
				e.put(ns.id, it.c[:ns.dims], it.val)
			}
			err = add()
			return err == nil
		})
		if err != nil {
			return err
		}
		s.edges.out.Scan(func(it eitem) bool {
			if !changed(it.lsn) || (base && it.tomb()) {
				return true
			}
			if it.tomb() {
				e.unlink(ns.id, it.a[:ns.dims], it.b[:ns.dims], it.label)
			} else {
				e.link(ns.id, it.a[:ns.dims], it.b[:ns.dims], it.label, it.weight, it.val)
			}
			err = add()
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// badOp marks an op that does not decode as corruption, its place still
// unknown: the log or inCheckpoint names it.
func badOp(err error) error { return base.Corruptf("", 0, "%w", err) }

// inCheckpoint names the place in the checkpoint file path of a record
// whose ops r read back but the engine cannot apply.
func inCheckpoint(r *checkpoint.Reader, path string, err error) error {
	off, n := r.Where()
	return base.Locate(err, path, off, fmt.Sprintf("record %d, in the block at this offset", n))
}

// loadCheckpoints reads the manifest's chain into the (empty) registry.
func (db *DB) loadCheckpoints(rep *RecoveryReport) error {
	dir := ckptDir(db.dir)
	m, exists, err := checkpoint.ReadManifest(db.fs, dir)
	if err != nil {
		return db.translate(err)
	}
	// A checkpoint that a crash cut short left a file the manifest does
	// not name (with no manifest, none is named); it must go before a new
	// checkpoint reuses its name.
	if _, err := checkpoint.RemoveUnreferenced(db.fs, dir, m); err != nil {
		return fmt.Errorf("engine: removing unfinished checkpoints: %w", err)
	}
	if !exists {
		return nil
	}
	files := append([]string{m.Base}, m.Deltas...)
	if m.Base == "" {
		files = nil
	}
	for i, name := range files {
		path := filepath.Join(dir, name)
		r, h, err := checkpoint.Open(db.fs, path, db.cipher)
		if err != nil {
			return db.translate(err)
		}
		var bl *baseLoad
		if i == 0 {
			bl = newBaseLoad(db, h.LSN)
		}
		var d opDecoder
		var o op
		for rec, err := range r.All() {
			if err != nil {
				r.Close()
				return db.translate(err)
			}
			d = opDecoder{b: rec}
			for {
				more, err := d.next(&o)
				if err != nil {
					r.Close()
					return db.translate(inCheckpoint(r, path, badOp(err)))
				}
				if !more {
					break
				}
				if bl != nil && bl.take(&o) {
					continue
				}
				if err := db.applyRecovered(&o, h.LSN); err != nil {
					r.Close()
					return db.translate(inCheckpoint(r, path, err))
				}
			}
		}
		if bl != nil {
			bl.finish()
		}
		info := r.Info()
		r.Close()
		if i == 0 {
			db.ckptSize.base = info.Bytes
		} else {
			db.ckptSize.deltas += info.Bytes
		}
	}
	db.manifest = m
	rep.CheckpointLSN = m.LSN
	rep.Base, rep.Deltas = m.Base, m.Deltas
	// Drops found in deltas are already covered by the chain.
	db.drops = nil
	return nil
}

// snapshotLocked copies every namespace's state in id order and returns
// the LSN the copies are as of. db.mu must be held: with it and each
// namespace's lock taken in turn, every record in the log has been
// applied, so the copies are the state as of exactly that LSN.
func (db *DB) snapshotLocked() ([]nsSnap, uint64) {
	nss := make([]*Namespace, 0, len(db.byID))
	for _, ns := range db.byID {
		nss = append(nss, ns)
	}
	slices.SortFunc(nss, func(a, b *Namespace) int { return cmp.Compare(a.id, b.id) })
	lsn := db.nsLSN
	snaps := make([]nsSnap, len(nss))
	for i, ns := range nss {
		ns.mu.Lock()
		ns.idx.seal()
		snaps[i] = nsSnap{ns: ns, tree: ns.idx.tree.Copy(), edges: ns.edges.copy(), meta: ns.meta}
		lsn = max(lsn, ns.lastLSN.Load())
		ns.mu.Unlock()
	}
	return snaps, lsn
}
