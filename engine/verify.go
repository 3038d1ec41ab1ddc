package engine

import (
	"fmt"
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
}

// Verify checks a data directory offline without changing anything: the
// format file and key, the manifest, every checkpoint it names (every
// block, seal and op), and every log record. It returns the first problem
// as a *CorruptionError (file and offset; it matches ErrCorruption),
// ErrWrongKey or ErrNewerFormat.
// A torn log tail is not an error: Open would cut it, and the report says
// where. Verify takes no lock; run it on a directory no one is writing.
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
	f, exists, err := readFormat(fsys, dir)
	if err != nil {
		return rep, err
	}
	if !exists {
		return rep, fmt.Errorf("engine: %s is not a cube data directory (no %s)", dir, formatFile)
	}
	rep.Format, rep.Encrypted = f.Format, f.Encrypted
	if err := f.checkKey(dir, c); err != nil {
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
	rep.Log, err = wal.Verify(fsys, walDir(dir), c)
	if err != nil {
		return rep, db.translate(err)
	}
	return rep, nil
}
