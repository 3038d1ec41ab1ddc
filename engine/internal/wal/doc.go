// Package wal is cube's write-ahead log: an append-only sequence of opaque
// records, each with a log sequence number (LSN) counting from 1 without
// gaps, stored in segment files and made durable with group commit.
//
// The engine encodes a transaction into one payload, calls Append (cheap:
// it copies into a buffer and assigns the LSN, no I/O), applies the
// transaction in memory, and holds the reply until WaitDurable says the
// LSN is durable. One flusher goroutine takes everything appended so far,
// writes it with one write, fdatasyncs once, and wakes every waiter the
// sync covered, so concurrent writers share fsyncs.
//
// # Sync modes and what a crash can lose
//
//   - SyncAlways (default): WaitDurable returns nil only after an
//     fdatasync that covers the LSN. A crash loses no record whose
//     WaitDurable returned nil; it may lose records appended but not yet
//     waited for.
//   - SyncInterval: the flusher fdatasyncs every Options.SyncInterval
//     (DefaultSyncInterval, 250 ms) and writes to the OS when
//     Options.BufferSize bytes are pending. WaitDurable returns at once.
//     A crash loses at most the records appended in the last interval plus
//     those of the one flush in progress when it struck.
//   - SyncNone: records go to the OS when BufferSize bytes are pending and
//     are fdatasynced only by Sync, Close, and the rollover to a new
//     segment (which always syncs the segment it completes). WaitDurable returns at once. A
//     process crash loses what was still buffered; a machine crash can
//     lose everything since the last Sync.
//
// In every mode Sync(ctx) writes and fdatasyncs everything appended before
// it, and Close does the same before closing.
//
// An error from write or fdatasync is fatal: the log fails, every waiter
// and every later Append, WaitDurable and Sync returns an error wrapping
// ErrFailed and the cause, and nothing is retried (after a failed fsync
// Linux may have dropped the dirty pages, so a retry that succeeds proves
// nothing). The engine must reopen, which recovers what is on disk.
//
// # Files
//
// Options.Dir holds the segments, named by their first LSN as 20 decimal
// digits: 00000000000000000001.wal. It also holds LOCK (held while the log
// is open), prealloc.tmp (the next segment being zero-filled in the
// background), segments being created (*.wal.tmp, removed by Open), and
// the copies Repair keeps (<segment>.cut-<offset>).
//
// A segment is created under a temporary name, its header written and
// fdatasynced, then renamed and the directory fsynced: a file with a
// segment name always has a durable, valid header. Before a new segment is
// created the previous one is fdatasynced, so every segment but the last
// is complete on disk. New segments are zero-filled to SegmentSize in the
// background (unless Options.NoPreallocate) because fdatasync of an
// overwrite of allocated blocks does not have to journal a size change;
// the first segment of a fresh log is not preallocated, so Open is fast.
//
// # Segment header (64 bytes, little-endian)
//
//	off  size  field
//	  0     8  magic "cubewal\x00"
//	  8     2  format version (1)
//	 10     2  flags: bit 0 = payloads are encrypted
//	 12     4  salt: random, non-zero, different from the previous segment's
//	 16     8  first LSN (equal to the file name's)
//	 24    28  key check when encrypted: Seal(nil, nil, bytes 0..24), that is
//	           nonce(12) || GCM tag(16); zeros otherwise
//	 52     8  reserved, zero
//	 60     4  CRC32C (Castagnoli) of bytes 0..60
//
// # Record (24-byte header, then the stored payload)
//
//	off  size  field
//	  0     4  CRC32C of bytes 4..24+length, with the segment's salt as the
//	           initial CRC value
//	  4     4  length of the stored payload
//	  8     8  LSN
//	 16     8  synced: the highest LSN durable when the record was appended
//	           (always < LSN)
//	 24     n  payload; with a Cipher, Seal(payload, ad = bytes 4..24):
//	           nonce(12) || ciphertext || tag(16)
//
// Records follow one another without padding. The first record of a segment
// has the header's first LSN, each next one the LSN after. Anything after
// the last record is zeros (preallocation) or nothing.
//
// Seeding the CRC with the salt means that bytes left by an earlier use of
// a file (a re-created name, a recycled or preallocated file, a cut tail)
// never validate in a new segment: for equal bytes, CRCs under two different
// initial values always differ. A record header of zeros, or one with LSN 0,
// never validates, so a zero-filled tail reads as the end of the log.
//
// # Recovery rules
//
// Open reads the segments in LSN order and replays every valid record
// with LSN > after. Then, where reading stopped:
//
//   - Zeros to the end of the last segment, or its end: a clean end.
//   - Bad bytes (a short, checksum-failing or out-of-order record) in the
//     last segment: Open scans the rest of the segment for any record that
//     validates under its salt. If one does and its synced field is at
//     least the LSN expected at the bad spot, that spot had been durable
//     before the later record was appended, so no crash explains it: it is
//     corruption. Otherwise it is a torn tail, from a crash during writes
//     that were not yet synced (disks persist unsynced pages in any
//     order, so valid records may follow a hole): it is cut (zeroed when
//     preallocated, else truncated) and described in Report.
//   - Bad bytes in any other segment, a bad segment header, a segment whose
//     first LSN does not follow the previous one, or a record that fails
//     authentication: corruption. Open returns a *base.CorruptionError
//     naming the file and offset (matching base.ErrCorruption and
//     ErrRepairable), and changes nothing on disk, unless
//     Options.Repair is set: then the cut bytes are copied to
//     <segment>.cut-<offset> (later segments are renamed to
//     <segment>.cut-0), made durable, the segment is truncated there, and
//     Report says which LSNs were lost.
//   - The first segment starting after after+1: records the checkpoint
//     does not cover are missing, a corruption Repair cannot fix
//     (it does not match ErrRepairable).
//   - The log ending before after (every record covered by the
//     checkpoint): the segments are removed and the log restarts at
//     after+1.
//
// With a Cipher, the key is checked against the first segment header
// before anything is replayed: a wrong key fails with ErrWrongKey, a
// missing one with ErrNoKey, a key for a plain log with ErrNotEncrypted.
// Open changes nothing on disk before the whole log has been read and
// accepted. Verify runs the same checks without changing anything.
//
// If Open fails, the state built by replay must be thrown away: it may
// have seen the records before the bad spot.
package wal
