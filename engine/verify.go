package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/cubelinux/cube/engine/internal/checkpoint"
	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/internal/wal"
	"github.com/cubelinux/cube/engine/vfs"
)

// VerifyOptions configure Verify.
type VerifyOptions struct {
	FS            vfs.FS // nil = the operating system's
	EncryptionKey []byte // the store's key, if it is encrypted
}

// VerifyReport says what Verify checked.
type VerifyReport struct {
	Format      int
	Encrypted   bool
	Checkpoints []checkpoint.Info // base first, then deltas
	Ops         int               // ops decoded from the checkpoints
	Log         wal.Report        // what recovery of the log would find
	// UnfinishedRekey is set when a rekey was cut short before its commit
	// (its staging directory, rekey.tmp, is there): the store is under
	// its old key, the one given, and was checked as such; the next Open
	// removes what the rekey left.
	UnfinishedRekey bool
}

// Verify checks a data directory offline without changing anything: the
// format file and key, the manifest, every checkpoint it names (every
// block, seal and op), and every log record (and its ops). It returns the first problem
// as a *CorruptionError (file and offset; it matches ErrCorruption),
// ErrWrongKey or ErrNewerFormat.
// A torn log tail is not an error: Open would cut it, and the report says
// where. Verify takes no lock; run it on a directory no one is writing.
//
// A rekey cut short (see Rekey) is named as such. Before its commit the
// old key rules: Verify checks the store under it and sets
// UnfinishedRekey, and refuses the new key with ErrWrongKey saying the
// rekey did not finish. After its commit the store's files are split
// between the two keys until an Open finishes the move, so Verify refuses
// either key, saying which one rules and how to finish.
func Verify(dir string, o VerifyOptions) (VerifyReport, error) {
	fsys := o.FS
	if fsys == nil {
		fsys = vfs.OS()
	}
	var rep VerifyReport
	var c *crypt.Cipher
	if o.EncryptionKey != nil {
		var err error
		if c, err = crypt.New(o.EncryptionKey); err != nil {
			return rep, fmt.Errorf("%w: %w", ErrBadOptions, err)
		}
	}
	if err := verifyRekeyCommitted(fsys, dir, c); err != nil {
		return rep, err
	}
	f, exists, err := readFormat(fsys, dir)
	if err != nil {
		return rep, err
	}
	if !exists {
		return rep, fmt.Errorf("engine: %s is not a cube data directory (no %s)", dir, formatFile)
	}
	rep.Format, rep.Encrypted = f.Format, f.Encrypted
	if _, err := fsys.Stat(filepath.Join(dir, rekeyTmp)); err == nil {
		rep.UnfinishedRekey = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return rep, fmt.Errorf("engine: %w", err)
	}
	if err := f.checkKey(dir, c); err != nil {
		if rep.UnfinishedRekey {
			return rep, fmt.Errorf("%w; the store is under the old key: a rekey did not finish — run it again, or open the store with the old key (which removes what the rekey left)", err)
		}
		return rep, err
	}
	db := &DB{dir: dir} // only for translate
	m, ok, err := checkpoint.ReadManifest(fsys, ckptDir(dir))
	if err != nil {
		return rep, db.translate(err)
	}
	if ok && m.Base != "" {
		for _, name := range append([]string{m.Base}, m.Deltas...) {
			path := filepath.Join(ckptDir(dir), name)
			r, _, err := checkpoint.Open(fsys, path, c)
			if err != nil {
				return rep, db.translate(err)
			}
			var d opDecoder
			var o op
			for rec, err := range r.All() {
				if err != nil {
					r.Close()
					return rep, db.translate(err)
				}
				d = opDecoder{b: rec}
				for {
					more, err := d.next(&o)
					if err != nil {
						r.Close()
						return rep, db.translate(inCheckpoint(r, path, badOp(err)))
					}
					if !more {
						break
					}
					rep.Ops++
				}
			}
			rep.Checkpoints = append(rep.Checkpoints, r.Info())
			r.Close()
		}
	}
	// Every log record's ops are decoded as recovery would decode them: a
	// record whose checksum holds but whose op does not decode would make
	// Open refuse the store, so Verify must not call it ok.
	var d opDecoder
	var lo op
	rep.Log, err = wal.Verify(fsys, walDir(dir), c, func(_ uint64, payload []byte) error {
		d = opDecoder{b: payload}
		for {
			more, err := d.next(&lo)
			if err != nil {
				return badOp(err)
			}
			if !more {
				return nil
			}
		}
	})
	if err != nil {
		return rep, db.translate(err)
	}
	return rep, nil
}

// verifyRekeyCommitted refuses a store whose rekey committed and did not
// finish (rekeyDir is there): its new checkpoint may already sit beside
// the old one, and the old log may be partly removed, so neither key's
// files can be checked as a whole without finishing the move, which
// Verify, changing nothing, does not do. The error says which key rules
// (the one in the staged FORMAT, or once that moved, the store's) and
// whether c is it.
func verifyRekeyCommitted(fsys vfs.FS, dir string, c *crypt.Cipher) error {
	stg := filepath.Join(dir, rekeyDir)
	if _, err := fsys.Stat(stg); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	f, exists, err := readFormat(fsys, stg)
	if err == nil && !exists {
		f, _, err = readFormat(fsys, dir)
	}
	if err != nil {
		return err
	}
	const finish = "open the store with the new key, or run the rekey again, to finish it; then verify"
	if err := f.checkKey(dir, c); err != nil {
		return fmt.Errorf("%w; the store is under the new key of a rekey that did not finish — %s", err, finish)
	}
	return fmt.Errorf("engine: %s: a rekey did not finish: it committed, and the store is under its new key (the key given), but its files are not all in place — %s", dir, finish)
}
