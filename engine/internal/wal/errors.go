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

// CorruptionError reports a log that does not read back as it was written
// at a place where a crash cannot explain it: a bad record before the last
// one that validates, a bad segment header, a gap in the LSNs. Open refuses
// such a log unless Options.Repair is set.
type CorruptionError struct {
	File   string // path of the segment
	Offset int64  // byte offset of the first bad byte in File
	Reason string
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("wal: corruption in %s at offset %d: %s", e.File, e.Offset, e.Reason)
}

// IsCorruption reports whether err is or wraps a *CorruptionError.
func IsCorruption(err error) bool {
	var ce *CorruptionError
	return errors.As(err, &ce)
}

// failure wraps the cause of a fatal I/O error so that errors.Is matches
// both ErrFailed and the cause (for example syscall.EIO).
func failure(op string, cause error) error {
	return fmt.Errorf("%w: %s: %w", ErrFailed, op, cause)
}
