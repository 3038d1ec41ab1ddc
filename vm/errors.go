package vm

import (
	"errors"
	"fmt"
)

// ErrorKind classifies why a run failed.
type ErrorKind uint8

const (
	KindGuest         ErrorKind = iota + 1 // the program reported an error (non-zero status, thrown exception)
	KindTrap                               // the program trapped (unreachable, bad memory access, ...)
	KindTimeout                            // wall-time limit
	KindMemoryLimit                        // memory limit
	KindOutputLimit                        // output-size limit
	KindWriteLimit                         // write-count limit
	KindHostCallLimit                      // host-call limit
	KindReadOnly                           // a write in a read-only run
	KindBadModule                          // the code does not compile or is refused (bad import, no run export)
	KindABIVersion                         // the module targets an ABI this host does not speak
	KindAborted                            // the caller cancelled the run
	KindStackLimit                         // the call stack outgrew its budget (runaway recursion)
)

var kindNames = [...]string{
	KindGuest:         "guest error",
	KindTrap:          "trap",
	KindTimeout:       "timeout",
	KindMemoryLimit:   "memory limit",
	KindOutputLimit:   "output limit",
	KindWriteLimit:    "write limit",
	KindHostCallLimit: "host call limit",
	KindReadOnly:      "read-only",
	KindBadModule:     "bad module",
	KindABIVersion:    "abi version",
	KindAborted:       "aborted",
	KindStackLimit:    "stack limit",
}

// String names the kind, for messages and telemetry labels.
func (k ErrorKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Sentinels, one per kind, so callers can write errors.Is(err, vm.ErrTimeout).
var (
	ErrGuest         = errors.New("vm: guest error")
	ErrTrap          = errors.New("vm: trap")
	ErrTimeout       = errors.New("vm: timeout")
	ErrMemoryLimit   = errors.New("vm: memory limit exceeded")
	ErrOutputLimit   = errors.New("vm: output limit exceeded")
	ErrWriteLimit    = errors.New("vm: write limit exceeded")
	ErrHostCallLimit = errors.New("vm: host call limit exceeded")
	ErrReadOnly      = errors.New("vm: write in a read-only program")
	ErrBadModule     = errors.New("vm: bad module")
	ErrABIVersion    = errors.New("vm: unsupported abi version")
	ErrAborted       = errors.New("vm: aborted")
	ErrStackLimit    = errors.New("vm: stack limit exceeded")
)

var kindErrs = [...]error{
	KindGuest:         ErrGuest,
	KindTrap:          ErrTrap,
	KindTimeout:       ErrTimeout,
	KindMemoryLimit:   ErrMemoryLimit,
	KindOutputLimit:   ErrOutputLimit,
	KindWriteLimit:    ErrWriteLimit,
	KindHostCallLimit: ErrHostCallLimit,
	KindReadOnly:      ErrReadOnly,
	KindBadModule:     ErrBadModule,
	KindABIVersion:    ErrABIVersion,
	KindAborted:       ErrAborted,
	KindStackLimit:    ErrStackLimit,
}

// Error is a failed run or compile. Msg is the guest's or runtime's own
// message; Line and Column locate it in JavaScript source when known (1-based,
// 0 = unknown).
type Error struct {
	Kind   ErrorKind
	Msg    string
	Line   int
	Column int
	Err    error // underlying cause, if any
}

func (e *Error) Error() string {
	s := "vm: " + e.Kind.String()
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Line > 0 {
		s += fmt.Sprintf(" (line %d, column %d)", e.Line, e.Column)
	}
	return s
}

// Is makes errors.Is(err, ErrTimeout) and friends work.
func (e *Error) Is(target error) bool {
	return int(e.Kind) < len(kindErrs) && kindErrs[e.Kind] == target
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of a vm error, or 0 if err is not one.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}
