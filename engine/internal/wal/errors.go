package wal

import (
	"errors"
	"fmt"
)

// Errors returned by the log. Match them with errors.Is.
var (
	// ErrFailed: a write or fdatasync of the log failed. The log is dead:
	// every later Append, WaitDurable (for an LSN not yet durable) and Sync
	// returns an error wrapping ErrFailed and the cause. Nothing is retried,
	// because after a failed fsync the kernel may have dropped the dirty
	// pages and a retry could report success for data that is gone.
	ErrFailed = errors.New("wal: log failed")
	// ErrClosed: the log was closed.
	ErrClosed = errors.New("wal: log closed")
	// ErrWrongKey: the log is encrypted under another key. Open detects it
	// before it changes anything on disk.
	ErrWrongKey = errors.New("wal: wrong encryption key")
	// ErrNoKey: the log is encrypted and Options.Cipher is nil.
	ErrNoKey = errors.New("wal: log is encrypted but no key was given")
	// ErrNotEncrypted: Options.Cipher is set but the log on disk is not
	// encrypted.
	ErrNotEncrypted = errors.New("wal: key given but the log is not encrypted")
	// ErrTooLarge: a payload is larger than MaxPayload.
	ErrTooLarge = errors.New("wal: record too large")
	// ErrNotAppended: WaitDurable was asked about an LSN never handed out.
	ErrNotAppended = errors.New("wal: lsn was not appended")
)

// Corruption is not a type of this package: a log that does not read back
// as it was written at a place where a crash cannot explain it (a bad
// record before the last one that validates, a bad segment header, a gap
// in the LSNs) is a *base.CorruptionError naming the segment and the
// offset of the first bad byte, and matches base.ErrCorruption.
//
// ErrRepairable marks the corruption that Options.Repair cuts out: Open
// (without Repair) and Verify wrap it around every corruption that Repair
// mends. One it cannot mend (records the checkpoint needs are missing, a
// record the caller's replay rejects) does not match it. Its text is the
// advice a user reads.
var ErrRepairable = errors.New("opening with Repair cuts the log there, keeping a copy of the cut bytes")

// repairable adds ErrRepairable to a corruption Repair would cut.
func repairable(err error) error { return fmt.Errorf("%w; %w", err, ErrRepairable) }

// failure wraps the cause of a fatal I/O error so that errors.Is matches
// both ErrFailed and the cause (for example syscall.EIO).
func failure(op string, cause error) error {
	return fmt.Errorf("%w: %s: %w", ErrFailed, op, cause)
}
