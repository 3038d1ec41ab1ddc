package engine

import (
	"log/slog"
	"time"

	"github.com/cubelinux/cube/engine/internal/wal"
	"github.com/cubelinux/cube/engine/vfs"
)

// SyncMode says when a write is acknowledged relative to fsync.
type SyncMode int

const (
	// SyncAlways (the default) acknowledges a write only after its log
	// record is on disk (fdatasync). Concurrent writers share one fsync
	// (group commit). Nothing acknowledged is ever lost, and nothing is
	// visible to readers before it is durable.
	SyncAlways SyncMode = iota
	// SyncInterval acknowledges at once and syncs the log every
	// SyncInterval. A crash loses at most the writes of the last interval
	// plus the one flush in progress: about SyncInterval (default 250 ms)
	// of writes.
	SyncInterval
	// SyncNone never syncs the log except at checkpoints and Close. For
	// tests and bulk loads; a crash may lose everything since the last
	// checkpoint.
	SyncNone
)

func (m SyncMode) String() string { return wal.SyncMode(m).String() }

// Defaults for the zero values of Options.
const (
	DefaultSyncInterval       = wal.DefaultSyncInterval
	DefaultSegmentSize        = wal.DefaultSegmentSize
	DefaultCheckpointLogSize  = 64 << 20
	DefaultCheckpointInterval = 5 * time.Minute
	DefaultMaxDeltas          = 8
)

// Options configure Open. The zero value is a durable, unencrypted store
// on the operating system's file system.
type Options struct {
	// FS does all the engine's I/O; nil means the operating system's.
	// Tests pass vfs.NewMem() to simulate crashes.
	FS vfs.FS
	// Sync is the durability mode; see SyncMode.
	Sync SyncMode
	// SyncInterval is the SyncInterval mode's period.
	SyncInterval time.Duration
	// SegmentSize is the size at which the log starts a new file.
	SegmentSize int64
	// EncryptionKey, when set (32 bytes), encrypts log records and
	// checkpoint blocks with AES-256-GCM. A store made with a key can only
	// be opened with the same key.
	EncryptionKey []byte
	// CheckpointLogSize triggers a checkpoint when the log grows past it.
	CheckpointLogSize int64
	// CheckpointInterval triggers a checkpoint this long after the last
	// one if anything changed; negative disables the timer.
	CheckpointInterval time.Duration
	// MaxDeltas is the number of delta checkpoints after which the next
	// checkpoint is a new base. A new base is also written when the deltas
	// together outgrow half the base.
	MaxDeltas int
	// Repair lets Open cut out corrupt log bytes instead of refusing to
	// open. What is cut is copied beside the log first and reported.
	Repair bool
	// MustExist makes Open refuse, with ErrNoStore, a directory that holds
	// no store (missing, or without the store's FORMAT file) instead of
	// creating one there: for tools that read or change an existing store,
	// so that a mistyped path creates nothing.
	MustExist bool
	// Logger receives the engine's notices (recovery, checkpoints); nil
	// discards them.
	Logger *slog.Logger
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time
}

func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = vfs.OS()
	}
	if o.SyncInterval <= 0 {
		o.SyncInterval = DefaultSyncInterval
	}
	if o.SegmentSize <= 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.CheckpointLogSize <= 0 {
		o.CheckpointLogSize = DefaultCheckpointLogSize
	}
	if o.CheckpointInterval == 0 {
		o.CheckpointInterval = DefaultCheckpointInterval
	}
	if o.MaxDeltas <= 0 {
		o.MaxDeltas = DefaultMaxDeltas
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o
}
