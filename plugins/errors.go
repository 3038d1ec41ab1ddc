package plugins

import "errors"

// Errors returned by the registry. Test for them with errors.Is. Failures
// of a program itself (trap, timeout, limits, bad module) are *vm.Error
// values: test for them with errors.Is(err, vm.ErrTimeout) and friends,
// or vm.KindOf.
var (
	// ErrNoProgram: no program of that name is registered in the
	// namespace. Register it first with Prog.
	ErrNoProgram = errors.New("plugins: no such program")
	// ErrBadName: a program name that is empty, longer than MaxNameLen,
	// or has characters other than letters, digits and "_.-".
	ErrBadName = errors.New("plugins: bad program name")
	// ErrBadKind: a program kind other than vm.WASM or vm.JS.
	ErrBadKind = errors.New("plugins: unknown program kind (want wasm or js)")
	// ErrEmptyCode: Prog with no code.
	ErrEmptyCode = errors.New("plugins: empty program")
	// ErrBadRecord: a stored program or telemetry record that does not
	// decode. The engine checksums everything it stores, so this means a
	// record written by a newer cube, or a bug.
	ErrBadRecord = errors.New("plugins: bad stored record")
	// ErrClosed: the registry was closed.
	ErrClosed = errors.New("plugins: closed")
)
