package base

import (
	"errors"
	"fmt"
)

// ErrCorruption marks bytes on disk that are not what the engine wrote: a
// checksum or authentication that fails, an impossible length, a gap in
// the log, a record that does not decode. Every corruption error the
// engine and its formats return matches it with errors.Is; the place is
// in the *CorruptionError that carries it (errors.As).
var ErrCorruption = errors.New("engine: corruption")

// CorruptionError says where damaged bytes are and what was wrong. It is
// the only type that carries ErrCorruption, so that a caller asks one
// question whichever file the damage is in.
type CorruptionError struct {
	// File is the path of the damaged file; empty while the decoder that
	// found the damage does not know it (Locate fills it in).
	File string
	// Offset is the byte offset in File where the damaged structure (a
	// header, a record, a block, a field) starts.
	Offset int64
	// Reason says what was wrong, in words.
	Reason string
	// Err is a more specific cause, if any (a format's sentinel such as
	// checkpoint.ErrIncomplete, or a decoder's error); errors.Is and
	// errors.As see through to it.
	Err error
}

func (e *CorruptionError) Error() string {
	if e.File == "" {
		return "corruption: " + e.Reason
	}
	return fmt.Sprintf("corruption in %s at offset %d: %s", e.File, e.Offset, e.Reason)
}

// Is makes every CorruptionError match ErrCorruption.
func (e *CorruptionError) Is(target error) bool { return target == ErrCorruption }

// Unwrap returns the specific cause, if any.
func (e *CorruptionError) Unwrap() error { return e.Err }

// Corruptf returns a *CorruptionError at file and off whose Reason is the
// formatted text. Errors given with %w stay matchable through it.
func Corruptf(file string, off int64, format string, args ...any) error {
	e := fmt.Errorf(format, args...)
	ce := &CorruptionError{File: file, Offset: off, Reason: e.Error()}
	switch e.(type) {
	case interface{ Unwrap() error }, interface{ Unwrap() []error }:
		ce.Err = e
	}
	return ce
}

// Locate gives a corruption found by a decoder that did not know the
// file (File empty) the place its bytes came from: file, and off, the
// offset of the record or block that held them, with what as the start of
// its Reason. The result wraps err, so its causes stay matchable. Any
// other error, and a corruption that already names its file, is returned
// as it is.
func Locate(err error, file string, off int64, what string) error {
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.File != "" {
		return err
	}
	return &CorruptionError{File: file, Offset: off, Reason: what + ": " + ce.Reason, Err: err}
}

// IsCorruption reports whether err is, or wraps, a corruption error.
func IsCorruption(err error) bool { return errors.Is(err, ErrCorruption) }
