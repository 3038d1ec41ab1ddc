package wal

import (
	"time"

	"github.com/cubelinux/cube/engine/internal/crypt"
	"github.com/cubelinux/cube/engine/vfs"
)

// SyncMode says when appended records are made durable.
type SyncMode int

const (
	// SyncAlways (the default): a record is durable when WaitDurable
	// returns for its LSN; the flusher fdatasyncs every batch it writes.
	// A crash loses nothing that WaitDurable acknowledged.
	SyncAlways SyncMode = iota
	// SyncInterval: the flusher fdatasyncs every Options.SyncInterval.
	// WaitDurable returns at once. A crash loses at most the records
	// appended in the last interval plus those of one flush in progress.
	SyncInterval
	// SyncNone: records are written to the OS when the buffer passes
	// Options.BufferSize, and fdatasynced only by Sync, Close and when a
	// segment is completed (rollover).
	// WaitDurable returns at once. A crash of the machine (not of the
	// process) can lose everything since the last Sync.
	SyncNone
)

func (m SyncMode) String() string {
	switch m {
	case SyncAlways:
		return "always"
	case SyncInterval:
		return "interval"
	case SyncNone:
		return "none"
	}
	return "unknown"
}

// Defaults for zero Options fields.
const (
	DefaultSegmentSize  = 64 << 20
	DefaultSyncInterval = 250 * time.Millisecond
	DefaultBufferSize   = 1 << 20
)

// MaxPayload is the largest payload Append accepts.
const MaxPayload = 1<<30 - recHeaderSize - crypt.Overhead

// Options configure a Log. The zero value of each field is its default.
type Options struct {
	// FS is the file system; required.
	FS vfs.FS
	// Dir holds the segments; it is created if missing.
	Dir string
	// SegmentSize is the size at which the writer starts a new segment
	// (DefaultSegmentSize). A record larger than a segment gets one of its
	// own.
	SegmentSize int64
	// Sync is the durability mode (SyncAlways).
	Sync SyncMode
	// SyncInterval is the fdatasync period of SyncInterval
	// (DefaultSyncInterval).
	SyncInterval time.Duration
	// BufferSize is how many appended bytes make the flusher write to the
	// OS in SyncInterval and SyncNone (DefaultBufferSize).
	BufferSize int
	// Cipher, if set, seals every payload (AES-256-GCM) with the record
	// header as additional data.
	Cipher *crypt.Cipher
	// NoPreallocate turns off zero-filling new segments to SegmentSize.
	// Preallocated segments make fdatasync cheaper (overwriting allocated
	// blocks needs no metadata journaling); see doc.go.
	NoPreallocate bool
	// Repair makes Open cut the log at a corruption instead of failing:
	// the cut bytes are kept in <segment>.cut-<offset> files and the
	// Report says which LSNs were lost.
	Repair bool
	// OnSync, if set, is called by the flusher after each fdatasync with
	// its duration and the bytes it made durable. It must be quick.
	OnSync func(d time.Duration, bytes int)
}

func (o *Options) normalize() {
	if o.SegmentSize <= 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.SyncInterval <= 0 {
		o.SyncInterval = DefaultSyncInterval
	}
	if o.BufferSize <= 0 {
		o.BufferSize = DefaultBufferSize
	}
}
