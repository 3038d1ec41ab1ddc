package jsproc

import (
	"context"
	"errors"
	"time"

	"github.com/cubelinux/cube/vm"
)

// op is what a request asks of the worker.
type op uint8

const (
	opCompile op = iota + 1 // check Code compiles (syntax, run declared)
	opRun                   // run program Prog (Code sent when the worker lacks it)
	opEval                  // evaluate Script in a fresh runtime
	opSession               // evaluate Script in the worker's session
	opReply                 // the answer to the worker's last host call
	// Interrupts (the caller cancelled) have a pipe of their own.
)

// request is one message from the pool to a worker.
type request struct {
	Op     op
	Prog   string // program key (its hash)
	Code   []byte
	Script string
	Args   []byte
	Dims   int
	Geo    bool // the host's namespace is geographic (vm.Host.Geo)
	Limits limits
	Reply  *reply
}

// limits is vm.Limits on the wire (every field after WithDefaults).
type limits struct {
	Timeout     time.Duration
	MemoryBytes int64
	OutputBytes int64
	Writes      int64
	HostCalls   int64
	ReadOnly    bool
}

func wireLimits(l vm.Limits) limits {
	return limits{l.Timeout, l.MemoryBytes, l.OutputBytes, l.Writes, l.HostCalls, l.ReadOnly}
}

func (l limits) vm() vm.Limits {
	return vm.Limits{Timeout: l.Timeout, MemoryBytes: l.MemoryBytes, OutputBytes: l.OutputBytes,
		Writes: l.Writes, HostCalls: l.HostCalls, ReadOnly: l.ReadOnly}
}

// message is one message from a worker to the pool: a host call the run
// waits on, or the end of a request.
type message struct {
	Call *call
	Done *done
}

// method names a host call.
type method uint8

const (
	mGet method = iota + 1
	mPut
	mDelete
	mRegionOpen
	mEdgesOpen
	mNext // the next batch of a cursor
	mCloseCursor
	mLink
	mUnlink
	mWalk
	mPath
	mNearby
	mWithinOpen
)

type call struct {
	Method method
	A, B   []int32
	Value  []byte
	Label  string
	Weight float64
	Dir    vm.Direction
	Walk   vm.WalkOptions
	Path   vm.PathOptions
	Cursor uint32
	K      int     // Nearby's k
	Dist   float64 // Nearby's maxDist, Within's r
}

type reply struct {
	Err    *wireError
	OK     bool
	Value  []byte
	Cursor uint32
	Points []vm.Point
	Edges  []vm.Edge
	Done   bool // the cursor is exhausted (after Points/Edges)
	Steps  []vm.WalkStep
	Path   vm.Path
	Near   []vm.Neighbor
}

type done struct {
	Err       *wireError
	Output    []byte
	Logs      []string
	HostCalls int64
	Writes    int64
	Type      string
	JSON      bool
	// Grown is how far the worker's data segment grew past its idle size:
	// the pool retires a worker that holds on to much more than it
	// started with, so the next run's accounting starts clean.
	Grown int64
	// Unknown says a run came without code for a program the worker does
	// not hold (the pool's mirror of its cache was wrong): the pool sends
	// the run again with the code.
	Unknown bool
}

// wireError is an error crossing the process boundary: its text, and
// enough of its identity for errors.Is and vm.KindOf to keep working.
type wireError struct {
	Msg    string
	Kind   vm.ErrorKind // a *vm.Error's kind, or 0
	Line   int
	Column int
	Is     sentinel
}

type sentinel uint8

const (
	isNone sentinel = iota
	isReadOnly
	isDeadline
	isCanceled
)

func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Msg: err.Error()}
	var ve *vm.Error
	if errors.As(err, &ve) {
		w.Kind, w.Msg, w.Line, w.Column = ve.Kind, ve.Msg, ve.Line, ve.Column
	}
	switch {
	case errors.Is(err, vm.ErrReadOnly):
		w.Is = isReadOnly
	case errors.Is(err, context.DeadlineExceeded):
		w.Is = isDeadline
	case errors.Is(err, context.Canceled):
		w.Is = isCanceled
	}
	return w
}

// remoteError is a host error as the worker sees it.
type remoteError struct {
	msg string
	is  error
}

func (e *remoteError) Error() string        { return e.msg }
func (e *remoteError) Is(target error) bool { return e.is != nil && e.is == target }

// err rebuilds the error: a *vm.Error when it was one, else an error with
// the same text that matches the same sentinel.
func (w *wireError) err() error {
	if w == nil {
		return nil
	}
	var is error
	switch w.Is {
	case isReadOnly:
		is = vm.ErrReadOnly
	case isDeadline:
		is = context.DeadlineExceeded
	case isCanceled:
		is = context.Canceled
	}
	if w.Kind != 0 {
		e := &vm.Error{Kind: w.Kind, Msg: w.Msg, Line: w.Line, Column: w.Column}
		if is != nil {
			e.Err = is
		}
		return e
	}
	return &remoteError{msg: w.Msg, is: is}
}
