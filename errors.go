package cube

import (
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/plugins"
	"github.com/cubelinux/cube/vm"
)

// Errors of the store. They are the engine's own sentinels under cube's
// names (the same values, not copies), so errors.Is matches them whichever
// layer returned the error. Their messages keep the engine's prefix
// ("engine: not found").
var (
	// ErrNotFound: no value at the coordinate (Get), or no such edge.
	ErrNotFound = engine.ErrNotFound
	// ErrNoNamespace: the namespace does not exist. Create it first with
	// CreateNamespace.
	ErrNoNamespace = engine.ErrNoNamespace
	// ErrNamespaceExists: CreateNamespace of a name already taken.
	ErrNamespaceExists = engine.ErrNamespaceExists
	// ErrDims: a coordinate or box has the wrong number of dimensions for
	// its namespace.
	ErrDims = engine.ErrDims
	// ErrBadBox: a box whose min is above its max on some axis.
	ErrBadBox = engine.ErrBadBox
	// ErrGeoRange: a coordinate of a geo namespace outside longitude
	// [-180, 180] or latitude [-90, 90], or degrees that do not parse.
	ErrGeoRange = engine.ErrGeoRange
	// ErrValueTooLarge: a value over the namespace's MaxValueSize.
	ErrValueTooLarge = engine.ErrValueTooLarge
	// ErrBadWeight: an edge weight that is negative, NaN or infinite.
	ErrBadWeight = engine.ErrBadWeight
	// ErrBadName: a namespace or label name that is empty, too long or
	// has control characters.
	ErrBadName = engine.ErrBadName
	// ErrBadOptions: namespace options out of range (dims outside 1..8,
	// unknown curve, negative limits).
	ErrBadOptions = engine.ErrBadOptions
	// ErrClosed: the DB was closed.
	ErrClosed = engine.ErrClosed
	// ErrReadOnly: a write on a read-only transaction, or on a store that
	// turned read-only after a fatal log error (see ErrFailed).
	ErrReadOnly = engine.ErrReadOnly
	// ErrFailed: a write to or sync of the log failed. The store refuses
	// every further write until it is closed and opened again.
	ErrFailed = engine.ErrFailed
	// ErrLocked: another process (or another DB in this one) has the
	// data directory open.
	ErrLocked = engine.ErrLocked
	// ErrNewerFormat: the data directory was written by a newer cube.
	ErrNewerFormat = engine.ErrNewerFormat
	// ErrWrongKey: the encryption key does not open this data directory,
	// or the directory is (not) encrypted and the options say otherwise.
	ErrWrongKey = engine.ErrWrongKey
	// ErrNoStore: Options.MustExist is set and the directory holds no
	// store. Nothing was created.
	ErrNoStore = engine.ErrNoStore
	// ErrRepairable: the store is damaged in its log, where opening with
	// Options.Repair cuts the damage out (losing the writes from there
	// on, with a copy kept). Other damage matches ErrCorruption only.
	ErrRepairable = engine.ErrRepairable
	// ErrTxDone: the transaction was used after its function returned.
	ErrTxDone = engine.ErrTxDone
	// ErrBusy: Namespace.UpdateDeferred found another transaction
	// writing to the namespace; it does not wait (Update does).
	ErrBusy = engine.ErrBusy
)

// CorruptionError reports damaged bytes on disk: which file, at what byte
// offset, and what was wrong. Open returns it (wrapped) when the data
// directory is damaged anywhere but in the log's torn tail; find it with
// errors.As.
type CorruptionError = engine.CorruptionError

// IsCorruption reports whether err is, or wraps, damage found on disk.
func IsCorruption(err error) bool { return engine.IsCorruption(err) }

// Errors of the program registry, the registry's own sentinels under
// cube's names.
var (
	// ErrNoProgram: no program of that name is registered in the
	// namespace. Register it first with Prog.
	ErrNoProgram = plugins.ErrNoProgram
	// ErrBadProgramName: a program name that is empty, longer than
	// MaxProgramNameLen, or has characters other than letters, digits and
	// "_.-".
	ErrBadProgramName = plugins.ErrBadName
	// ErrBadKind: a program kind other than WASM or JS.
	ErrBadKind = plugins.ErrBadKind
	// ErrEmptyCode: Prog with no code.
	ErrEmptyCode = plugins.ErrEmptyCode
)

// MaxProgramNameLen bounds program names.
const MaxProgramNameLen = plugins.MaxNameLen

// Error is a failed run or compile of a program: its Kind, the guest's or
// runtime's own message, and where in JavaScript source it happened when
// known. Find it with errors.As, or test its kind with KindOf or
// errors.Is(err, ErrTimeout) and friends.
type Error = vm.Error

// ErrorKind classifies why a program's run failed.
type ErrorKind = vm.ErrorKind

// The error kinds.
const (
	KindGuest         = vm.KindGuest         // the program reported an error (non-zero status, thrown exception)
	KindTrap          = vm.KindTrap          // the program trapped (unreachable, bad memory access, ...)
	KindTimeout       = vm.KindTimeout       // wall-time limit
	KindMemoryLimit   = vm.KindMemoryLimit   // memory limit
	KindOutputLimit   = vm.KindOutputLimit   // output-size limit
	KindWriteLimit    = vm.KindWriteLimit    // write-count limit
	KindHostCallLimit = vm.KindHostCallLimit // host-call limit
	KindReadOnly      = vm.KindReadOnly      // a write in a read-only run
	KindBadModule     = vm.KindBadModule     // the code does not compile or is refused
	KindABIVersion    = vm.KindABIVersion    // the module targets an ABI this host does not speak
	KindAborted       = vm.KindAborted       // the caller cancelled the run
	KindStackLimit    = vm.KindStackLimit    // the call stack outgrew its budget
)

// KindOf returns the kind of a program's failure, or 0 if err is not one.
func KindOf(err error) ErrorKind { return vm.KindOf(err) }

// One sentinel per error kind, so that errors.Is(err, cube.ErrTimeout)
// works on any failed run, whichever runtime produced it.
var (
	ErrGuest           = vm.ErrGuest
	ErrTrap            = vm.ErrTrap
	ErrTimeout         = vm.ErrTimeout
	ErrMemoryLimit     = vm.ErrMemoryLimit
	ErrOutputLimit     = vm.ErrOutputLimit
	ErrWriteLimit      = vm.ErrWriteLimit
	ErrHostCallLimit   = vm.ErrHostCallLimit
	ErrReadOnlyProgram = vm.ErrReadOnly
	ErrBadModule       = vm.ErrBadModule
	ErrABIVersion      = vm.ErrABIVersion
	ErrAborted         = vm.ErrAborted
	ErrStackLimit      = vm.ErrStackLimit
)
