package engine

import (
	"errors"

	"github.com/cubelinux/cube/engine/internal/base"
	"github.com/cubelinux/cube/engine/internal/wal"
)

// Errors returned by the engine. Test for them with errors.Is.
var (
	// ErrNotFound: no value at the coordinate (Get), or no such edge.
	ErrNotFound = errors.New("engine: not found")
	// ErrNoNamespace: the namespace does not exist. Create it first with
	// CreateNamespace.
	ErrNoNamespace = errors.New("engine: no such namespace")
	// ErrNamespaceExists: CreateNamespace of a name already taken.
	ErrNamespaceExists = errors.New("engine: namespace already exists")
	// ErrDims: a coordinate or box has the wrong number of dimensions for
	// its namespace.
	ErrDims = errors.New("engine: wrong number of dimensions")
	// ErrBadBox: a box whose min is above its max on some axis.
	ErrBadBox = errors.New("engine: bad box")
	// ErrValueTooLarge: a value over the namespace's MaxValueSize.
	ErrValueTooLarge = errors.New("engine: value too large")
	// ErrBadWeight: an edge weight that is negative, NaN or infinite.
	// ShortestPath is Dijkstra's algorithm, whose answer is least only
	// over non-negative weights.
	ErrBadWeight = errors.New("engine: edge weight must be a finite number >= 0")
	// ErrBadName: a namespace or label name that is empty, too long or
	// has control characters.
	ErrBadName = errors.New("engine: bad name")
	// ErrBadOptions: options out of range (dims outside 1..8, unknown
	// curve, negative limits).
	ErrBadOptions = errors.New("engine: bad options")
	// ErrClosed: the DB was closed.
	ErrClosed = errors.New("engine: closed")
	// ErrReadOnly: a write on a read-only transaction, or on a store that
	// turned read-only after a fatal log error (see ErrFailed).
	ErrReadOnly = errors.New("engine: read-only")
	// ErrFailed: a write to or sync of the log failed. The store refuses
	// every further write: the data on disk is what the last successful
	// sync made durable. Close it and open it again.
	ErrFailed = errors.New("engine: log failed; the store is read-only until reopened")
	// ErrLocked: another process (or another DB in this one) has the
	// data directory open.
	ErrLocked = errors.New("engine: data directory is in use by another process")
	// ErrNewerFormat: the data directory was written by a newer cube.
	ErrNewerFormat = errors.New("engine: data directory has a newer format")
	// ErrWrongKey: the encryption key does not open this data directory,
	// or the directory is (not) encrypted and the options say otherwise.
	ErrWrongKey = errors.New("engine: wrong encryption key")
	// ErrNoStore: Options.MustExist is set and the directory holds no
	// store. Nothing was created.
	ErrNoStore = errors.New("engine: no store")
	// ErrTxDone: the transaction was used after its function returned.
	ErrTxDone = errors.New("engine: transaction has finished")
	// ErrBusy: UpdateDeferred found another transaction writing to the
	// namespace; it does not wait (use Update, which does).
	ErrBusy = errors.New("engine: namespace busy with another write transaction; use Update to wait for it")
	// ErrCorruption: bytes on disk are not what the engine wrote. Every
	// corruption error matches it; the file and offset are in the
	// *CorruptionError it comes with.
	ErrCorruption = base.ErrCorruption
	// ErrRepairable: a corruption in the log that Options.Repair can cut
	// out (losing the writes from there on, with a copy kept); damage
	// that does not match it, Repair cannot mend.
	ErrRepairable = wal.ErrRepairable
)

// CorruptionError reports damaged bytes on disk: File, the byte Offset
// in it where the damaged structure starts, and Reason, what was wrong.
// Open returns it (wrapped, with advice on what to do) when the data
// directory is damaged anywhere but in the log's torn tail; Verify returns
// it for any damage. Options.Repair cuts damage in the log out instead.
//
// It is the one corruption type of the engine and of its file formats,
// the log and the checkpoints: every corruption error matches
// ErrCorruption, and errors.As with a *CorruptionError finds the place.
type CorruptionError = base.CorruptionError

// IsCorruption reports whether err is, or wraps, a corruption error from
// the engine or one of its file formats; it is errors.Is(err,
// ErrCorruption).
func IsCorruption(err error) bool { return errors.Is(err, ErrCorruption) }
