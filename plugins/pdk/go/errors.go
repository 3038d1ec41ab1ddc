package pdk

import "errors"

// Errors for the statuses of ABI v1, wrapped with the name of the operation
// that got them (errors.Is(err, pdk.ErrReadOnly)).
var (
	// ErrLimit: a limit of the run was reached (output size, writes, host
	// calls, open cursors). The run has failed; return.
	ErrLimit = errors.New("pdk: a limit of the run was reached")
	// ErrReadOnly: a write in a read-only run. The run has failed; return.
	ErrReadOnly = errors.New("pdk: write in a read-only run")
	// ErrAborted: the run was cancelled or ran out of time.
	ErrAborted = errors.New("pdk: the run was cancelled or ran out of time")
	// ErrBadArgument: the host refused an argument (a label over 4 KiB,
	// a NaN weight, a negative depth, ...).
	ErrBadArgument = errors.New("pdk: bad argument")
	// ErrStore: the store failed the operation; the reason is in the run's
	// log.
	ErrStore = errors.New("pdk: the store failed")
	// ErrDims: a coordinate does not have Dims() elements. The kit checks
	// this itself, since the host would read past a short slice.
	ErrDims = errors.New("pdk: coordinate has the wrong number of dimensions")
	// ErrNotWASM: the program was not built with GOOS=wasip1, so there is
	// no host to call.
	ErrNotWASM = errors.New("pdk: only available in a GOOS=wasip1 build")
	// ErrStatus: the host returned a status this kit does not know.
	ErrStatus = errors.New("pdk: unknown status")
)
