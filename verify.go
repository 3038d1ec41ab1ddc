package cube

import (
	"path/filepath"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// EncryptionKey is the store's key, if it is encrypted.
	EncryptionKey []byte
	// FS is the file system the store is on; nil means the operating
	// system's.
	FS vfs.FS
}

// VerifyReport says what Verify checked, for a person or a script (its
// JSON is snake_case, as the other reports').
type VerifyReport struct {
	Format    int  `json:"format"`
	Encrypted bool `json:"encrypted"`
	// Checkpoints are the files of the checkpoint chain, base first,
	// then deltas, every block read and checked against its footer.
	Checkpoints []VerifiedCheckpoint `json:"checkpoints"`
	// CheckpointOps counts the operations decoded from them.
	CheckpointOps int `json:"checkpoint_ops"`
	// The log: the LSNs of its valid records (0, 0 when it holds none)
	// and how many segment files were read.
	LogFirstLSN uint64 `json:"log_first_lsn"`
	LogLastLSN  uint64 `json:"log_last_lsn"`
	LogSegments int    `json:"log_segments"`
	// A torn tail the next Open will cut (not damage: the writes it held
	// were never acknowledged): the segment, where, and how many bytes.
	TornSegment  string `json:"torn_segment,omitempty"`
	TornOffset   int64  `json:"torn_offset_bytes,omitempty"`
	BytesDropped int64  `json:"torn_bytes_dropped,omitempty"`
	// UnfinishedRekey: a rekey was cut short before its commit; the
	// store was checked under its old key, the one given, and the next
	// Open removes what the rekey left.
	UnfinishedRekey bool `json:"unfinished_rekey,omitempty"`
}

// VerifiedCheckpoint is one checkpoint file Verify read.
type VerifiedCheckpoint struct {
	File    string `json:"file"` // its name in the store's checkpoint directory
	Records uint64 `json:"records"`
	Bytes   int64  `json:"bytes"`
}

// Verify checks the data directory dir offline, changing nothing and
// taking no lock (run it on a store no one is writing): the key, every
// checkpoint of the chain block by block, and the whole log, as recovery
// would read it.
//
// # Errors
//
// A CorruptionError (wrapped; IsCorruption) naming the file and offset
// of the first damage found; ErrWrongKey, ErrNewerFormat; an error
// saying dir is not a cube data directory; an error naming a rekey that
// committed but did not finish (Open with the new key finishes it).
func Verify(dir string, o VerifyOptions) (VerifyReport, error) {
	r, err := engine.Verify(dir, engine.VerifyOptions{FS: o.FS, EncryptionKey: o.EncryptionKey})
	rep := VerifyReport{
		Format:          r.Format,
		Encrypted:       r.Encrypted,
		CheckpointOps:   r.Ops,
		LogFirstLSN:     r.Log.FirstLSN,
		LogLastLSN:      r.Log.LastLSN,
		LogSegments:     r.Log.Segments,
		TornSegment:     r.Log.TornSegment,
		TornOffset:      r.Log.TornOffset,
		BytesDropped:    r.Log.BytesDropped,
		UnfinishedRekey: r.UnfinishedRekey,
	}
	for _, c := range r.Checkpoints {
		rep.Checkpoints = append(rep.Checkpoints, VerifiedCheckpoint{File: filepath.Base(c.Path), Records: c.Records, Bytes: c.Bytes})
	}
	return rep, err
}
