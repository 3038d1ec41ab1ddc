package checkpoint

import (
	"errors"
	"fmt"

	"github.com/cubelinux/cube/engine/internal/base"
)

// Errors. Corruption is not one of them: damaged bytes are a
// *base.CorruptionError, which names the file and the byte offset and
// matches base.ErrCorruption (base.IsCorruption).
var (
	// ErrIncomplete: the file has no valid footer. A crash during the write
	// leaves such a file; it is never part of a chain that a manifest names,
	// unless the footer itself was damaged. Always wrapped in a
	// *base.CorruptionError, so base.IsCorruption reports true as well.
	ErrIncomplete = errors.New("checkpoint: file incomplete (no valid footer)")
	// ErrWrongKey: the file is encrypted and its header is intact, but the
	// key given does not open it. Nothing was changed on disk; retry with the
	// right key.
	ErrWrongKey = errors.New("checkpoint: wrong encryption key (the file is intact but does not open with this key)")
	// ErrNeedKey: the file is encrypted and no cipher was given.
	ErrNeedKey = errors.New("checkpoint: file is encrypted; open it with its key")
	// ErrNewerFormat: the file was written by a newer cube whose format
	// this build does not know. The message names both versions; upgrade
	// cube to read it.
	ErrNewerFormat = errors.New("checkpoint: format version is newer than this build reads")
	// ErrExists: Create refuses to overwrite an existing file, so that a
	// checkpoint named by the manifest is never truncated. Remove leftovers
	// with RemoveUnreferenced first.
	ErrExists = errors.New("checkpoint: file already exists")
	// ErrInvalid: an argument is out of range (header fields, a record over
	// MaxRecordSize, a manifest file name).
	ErrInvalid = errors.New("checkpoint: invalid argument")
	// ErrClosed: the Writer was finished or aborted, or the Reader closed.
	ErrClosed = errors.New("checkpoint: closed")
)

// corrupt reports bytes on disk that are not what this package wrote (a
// checksum mismatch, an impossible length, a block that does not
// authenticate) as the engine's one corruption error; off is where the
// damaged structure (header, block, footer, manifest field) starts.
func corrupt(file string, off int64, format string, args ...any) error {
	return &base.CorruptionError{File: file, Offset: off, Reason: fmt.Sprintf(format, args...)}
}

// incomplete is corrupt for a file without a valid footer; it also
// matches ErrIncomplete.
func incomplete(file string, off int64, format string, args ...any) error {
	return &base.CorruptionError{File: file, Offset: off, Reason: fmt.Sprintf(format, args...), Err: ErrIncomplete}
}

func newer(file string, v uint16) error {
	return fmt.Errorf("%w: %s has format version %d, this build reads up to version %d", ErrNewerFormat, file, v, Version)
}
