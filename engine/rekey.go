package engine

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cubelinux/cube/engine/internal/checkpoint"
	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/vfs"
)

// A rekey stages the store under the new key in rekeyTmp, beside the
// store's own files, and commits by renaming that directory to rekeyDir:
// one atomic rename. Before it the old files rule (and rekeyTmp is
// leftovers, removed at the next open); after it rekeyDir's FORMAT names
// the key, and every open finishes the move before reading anything.
const (
	rekeyTmp = "rekey.tmp"
	rekeyDir = "rekey"

	rekeySegmentSize = 64 << 10
)

// RekeyOptions configure Rekey.
type RekeyOptions struct {
	// FS does all the I/O; nil means the operating system's.
	FS vfs.FS
	// Logger receives the notices of the opens Rekey does; nil discards
	// them.
	Logger *slog.Logger
}

// RekeyReport says what Rekey did.
type RekeyReport struct {
	// Already is set when the store was under the new key when Rekey
	// began (an earlier rekey did the work; if that one was cut short,
	// this one finished it). Nothing else was rewritten.
	Already bool
	// Encrypted says whether the store is now encrypted.
	Encrypted bool
	// Namespaces, Records and Bytes describe the checkpoint written under
	// the new key: the store's whole contents.
	Namespaces int
	Records    uint64
	Bytes      int64
}

// Rekey moves the stopped store in dir from oldKey to newKey: nil means
// none, so it also encrypts a plain store and decrypts an encrypted one.
// It takes the directory's lock (a store open elsewhere is refused with
// ErrLocked), opens the store under oldKey, writes its whole state as one
// checkpoint under newKey beside the old files, makes that durable (files
// and directories synced), commits with one rename, and only then removes
// the old checkpoints and log and puts the new ones in their place. The
// next write goes to a new log under newKey.
//
// A crash or an error at any point leaves a store that opens under exactly
// one of the two keys with all its data; an open with the other key is
// refused with ErrWrongKey saying which key rules and that the rekey did
// not finish. Running Rekey again with the same keys finishes the job
// (opening the store under the new key finishes it too).
//
// # Errors
//
// ErrNoStore if dir holds no store (nothing is created); ErrWrongKey if
// neither key opens it; ErrLocked; ErrBadOptions for a key that is not 32
// bytes. A Rekey whose error says the store is still under the old key
// changed nothing the store reads.
//
// # Notes
//
// Copies of log bytes that an earlier Options.Repair cut out are removed
// with the old log. The old files are unlinked, not overwritten: blocks a
// file system or disk keeps after an unlink can still hold the old bytes.
func Rekey(ctx context.Context, dir string, oldKey, newKey []byte, o RekeyOptions) (RekeyReport, error) {
	var rep RekeyReport
	newC, err := keyCipher(newKey)
	if err != nil {
		return rep, fmt.Errorf("%w: the new key: %v", ErrBadOptions, err)
	}
	if _, err := keyCipher(oldKey); err != nil {
		return rep, fmt.Errorf("%w: the old key: %v", ErrBadOptions, err)
	}
	rep.Encrypted = newC != nil
	// Rekey's opens write no records: a small segment spares the zero-fill
	// of a full-size one (the store's next open rolls on as usual).
	eo := Options{FS: o.FS, Logger: o.Logger, EncryptionKey: oldKey, MustExist: true, CheckpointInterval: -1, SegmentSize: rekeySegmentSize}
	db, err := Open(dir, eo)
	if errors.Is(err, ErrWrongKey) {
		// Already moved, or committed and cut short: the new key opens
		// it (finishing the move) and there is nothing left to do.
		eo.EncryptionKey = newKey
		db2, err2 := Open(dir, eo)
		if err2 == nil {
			rep.Already = true
			return rep, db2.Close()
		}
		if !errors.Is(err2, ErrWrongKey) {
			err = err2
		}
	}
	if err != nil {
		return rep, err
	}
	if bytes.Equal(oldKey, newKey) {
		rep.Already = true
		return rep, db.Close()
	}
	committed, err := db.stageRekey(ctx, newC, &rep)
	if err != nil && !committed {
		removeTree(db.fs, filepath.Join(dir, rekeyTmp)) // best effort: the next open clears it too
		return rep, errors.Join(fmt.Errorf("engine: rekey %s: %w; the store is still under the old key: the rekey did not finish — run it again", dir, err), db.Close())
	}
	// From here the store is under the new key, or (a failed sync of the
	// commit) may be: the old log must not be written again, nor a
	// checkpoint made under the old key.
	cerr := db.closeForRekey()
	if err != nil {
		return rep, errors.Join(fmt.Errorf("engine: rekey %s: %w; the store may be under either key: the rekey did not finish — run it again", dir, err), cerr)
	}
	if cerr != nil {
		return rep, fmt.Errorf("engine: rekey %s: %w; the store is under the new key: the rekey did not finish — run it again, or open the store with the new key", dir, cerr)
	}
	eo.EncryptionKey = newKey
	db, err = Open(dir, eo) // moves the new files into place
	if err != nil {
		return rep, fmt.Errorf("engine: rekey %s: the store is under the new key, but putting its files in place failed: %w; run rekey again, or open the store with the new key", dir, err)
	}
	return rep, db.Close()
}

func keyCipher(key []byte) (*crypt.Cipher, error) {
	if key == nil {
		return nil, nil
	}
	return crypt.New(key)
}

// stageRekey writes the store's state under c into rekeyTmp, durably, and
// commits it. committed is true once the commit rename was done (a failed
// sync after it leaves the outcome unknown, and the old files must then be
// left alone like a committed rekey's).
func (db *DB) stageRekey(ctx context.Context, c *crypt.Cipher, rep *RekeyReport) (committed bool, err error) {
	// Nothing else runs: Open gave this DB to Rekey alone, and its
	// checkpoint timer is off.
	tmp := filepath.Join(db.dir, rekeyTmp)
	tmpCkpt := filepath.Join(tmp, "checkpoint")
	if err := db.fs.MkdirAll(tmpCkpt, dirPerm); err != nil {
		return false, err
	}
	snaps, lsn := db.snapshotAll()
	h := checkpoint.Header{Kind: checkpoint.Base, LSN: lsn, Created: db.opts.Clock()}
	name := checkpoint.FileName(h)
	w, err := checkpoint.Create(db.fs, filepath.Join(tmpCkpt, name), h, c)
	if err != nil {
		return false, err
	}
	if err := db.writeCheckpoint(ctx, w, snaps, nil, true, 0); err != nil {
		w.Abort()
		return false, err
	}
	info, err := w.Finish() // the file and tmp/checkpoint synced
	if err != nil {
		return false, err
	}
	m := checkpoint.Manifest{Base: name, LSN: lsn, Seq: db.manifest.Seq + 1}
	if err := checkpoint.WriteManifest(db.fs, tmpCkpt, m); err != nil {
		return false, err
	}
	if err := writeFormat(db.fs, tmp, c); err != nil { // syncs tmp: its checkpoint/ and FORMAT
		return false, err
	}
	rep.Namespaces, rep.Records, rep.Bytes = len(snaps), info.Records, info.Bytes
	// The commit: one rename, made durable by the sync of dir.
	if err := db.fs.Rename(tmp, filepath.Join(db.dir, rekeyDir)); err != nil {
		return false, err
	}
	if err := db.fs.SyncDir(db.dir); err != nil {
		return true, err
	}
	return true, nil
}

// snapshotAll copies every namespace's state, as Checkpoint's barrier
// does, and returns the LSN it is as of.
func (db *DB) snapshotAll() ([]nsSnap, uint64) {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.snapshotLocked()
}

// closeForRekey closes the store without Close's checkpoint: after the
// commit nothing may be written under the old key.
func (db *DB) closeForRekey() error {
	db.closeMu.Lock()
	defer db.closeMu.Unlock()
	if db.closed.Load() {
		return nil
	}
	close(db.stop)
	<-db.bgDone
	db.closed.Store(true)
	var errs []error
	if err := db.log.Close(context.Background()); err != nil && db.Err() == nil {
		errs = append(errs, fmt.Errorf("engine: close log: %w", err))
	}
	if err := db.lock.Close(); err != nil {
		errs = append(errs, fmt.Errorf("engine: unlock: %w", err))
	}
	return errors.Join(errs...)
}

// resumeRekey, called by Open with the directory locked and before
// anything else is read, deals with what a rekey left. A committed rekey
// (rekeyDir) is finished if this open's key is its new key, and refused
// otherwise; an uncommitted one (rekeyTmp) is removed if the key is the
// old one, and refused otherwise. A refused open changes nothing.
func (db *DB) resumeRekey() error {
	stg := filepath.Join(db.dir, rekeyDir)
	if _, err := db.fs.Stat(stg); err == nil {
		f, exists, err := readFormat(db.fs, stg)
		if err == nil && !exists { // FORMAT already moved into place
			f, _, err = readFormat(db.fs, db.dir)
		}
		if err != nil {
			return err
		}
		if err := f.checkKey(db.dir, db.cipher); err != nil {
			return fmt.Errorf("%w; the store is under the new key of a rekey that did not finish — run the rekey again, or open the store with the new key, to finish it", err)
		}
		return finishRekey(db.fs, db.dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("engine: %w", err)
	}
	tmp := filepath.Join(db.dir, rekeyTmp)
	if _, err := db.fs.Stat(tmp); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	f, exists, err := readFormat(db.fs, db.dir)
	if err != nil || !exists {
		return err
	}
	if err := f.checkKey(db.dir, db.cipher); err != nil {
		return fmt.Errorf("%w; the store is under the old key: a rekey did not finish — run it again", err)
	}
	if err := removeTree(db.fs, tmp); err != nil {
		return fmt.Errorf("engine: removing an unfinished rekey: %w", err)
	}
	return nil
}

// finishRekey puts a committed rekey's files in place. Every step can be
// done again after a crash: files move by rename, the target's directory
// synced before the source's (so a crash between leaves the file under
// both names, never under none), and what is removed is the old key's.
func finishRekey(fsys vfs.FS, dir string) error {
	stg := filepath.Join(dir, rekeyDir)
	stgCkpt, ckpt, wdir := filepath.Join(stg, "checkpoint"), ckptDir(dir), walDir(dir)
	// 1. The new checkpoint, then the manifest that names it.
	names, err := listIfExists(fsys, stgCkpt)
	if err != nil {
		return err
	}
	slices.SortStableFunc(names, func(a, b string) int { // the manifest last
		return cmp.Compare(boolInt(a == checkpoint.ManifestName), boolInt(b == checkpoint.ManifestName))
	})
	for _, n := range names {
		if strings.HasSuffix(n, ".tmp") {
			continue
		}
		if err := fsys.Rename(filepath.Join(stgCkpt, n), filepath.Join(ckpt, n)); err != nil {
			return fmt.Errorf("engine: rekey: %w", err)
		}
	}
	if len(names) > 0 {
		if err := syncDirs(fsys, ckpt, stgCkpt); err != nil {
			return err
		}
	}
	// 2. The old log: every file, the copies of cut bytes included.
	old, err := listIfExists(fsys, wdir)
	if err != nil {
		return err
	}
	for _, n := range old {
		if err := fsys.Remove(filepath.Join(wdir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("engine: rekey: remove the old log: %w", err)
		}
	}
	if len(old) > 0 {
		if err := syncDirs(fsys, wdir); err != nil {
			return err
		}
	}
	// 3. The old checkpoints.
	m, _, err := checkpoint.ReadManifest(fsys, ckpt)
	if err != nil {
		return fmt.Errorf("engine: rekey: %w", err)
	}
	if _, err := checkpoint.RemoveUnreferenced(fsys, ckpt, m); err != nil {
		return fmt.Errorf("engine: rekey: %w", err)
	}
	// 4. FORMAT, whose key from now on rules without rekeyDir.
	if _, err := fsys.Stat(filepath.Join(stg, formatFile)); err == nil {
		if err := fsys.Rename(filepath.Join(stg, formatFile), filepath.Join(dir, formatFile)); err != nil {
			return fmt.Errorf("engine: rekey: %w", err)
		}
		if err := syncDirs(fsys, dir, stg); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("engine: rekey: %w", err)
	}
	// 5. What is left of the staging directory.
	if err := removeTree(fsys, stg); err != nil {
		return fmt.Errorf("engine: rekey: %w", err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func listIfExists(fsys vfs.FS, dir string) ([]string, error) {
	names, err := fsys.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("engine: rekey: %w", err)
	}
	return names, nil
}

func syncDirs(fsys vfs.FS, dirs ...string) error {
	for _, d := range dirs {
		if err := fsys.SyncDir(d); err != nil {
			return fmt.Errorf("engine: rekey: sync %s: %w", d, err)
		}
	}
	return nil
}

// removeTree removes path and everything under it, durably. A missing
// path is not an error.
func removeTree(fsys vfs.FS, path string) error {
	fi, err := fsys.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		names, err := fsys.List(path)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := removeTree(fsys, filepath.Join(path, n)); err != nil {
				return err
			}
		}
		if len(names) > 0 {
			if err := fsys.SyncDir(path); err != nil {
				return err
			}
		}
	}
	if err := fsys.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return fsys.SyncDir(filepath.Dir(path))
}
